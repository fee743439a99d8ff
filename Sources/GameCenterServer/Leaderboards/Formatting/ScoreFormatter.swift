import Foundation
import Synchronization

/// Renders leaderboard values as localized `formattedValue` strings.
///
/// Locale and currency data come from Foundation's `NumberFormatter` once per locale (and per locale and
/// currency), under a lock; each call then does the digit work with integer arithmetic in a stack buffer and
/// allocates at most the result string (nothing for results of 15 UTF-8 bytes or fewer), because
/// `NumberFormatter` is costly to create, not documented as thread-safe, and `String(format:)` is slow on Linux. Safe to call from any thread; every `Int64`, locale string and currency string is accepted.
///
/// Behaviour beyond the manifest spec:
/// - Negative values use the locale's own negative pattern: `-123`, `-$1.00`, de `-1,00 $`, nl `US$ -1,00`,
///   sv `−5` (U+2212). Elapsed formats put the locale's plain-number minus sign pattern around the whole
///   duration: `-20:34.56`.
/// - Elapsed formats always separate fields with `:`; hundredths follow the locale's decimal mark (de
///   `20:34,56`) and the leading field is grouped like an integer (`2,057:36`, de `2.057:36`). Digits are the
///   locale's own (Arabic-Indic for `ar_EG`).
/// - Elapsed formats pick the `other` suffix form: a compound duration is not a number CLDR rules apply to.
/// - An unknown, empty or malformed locale formats as `en`; a currency that is not three ASCII letters as `USD`.
///   A regional locale uses the platform's data for that region where it differs from the language's (de-AT
///   writes `$ 1.234,56` where de writes `1.234,56 $`); extensions such as `-u-nu-arab` are ignored.
package final class ScoreFormatter: Sendable {
    /// A formatter shared by the whole process; its caches fill on first use of each locale.
    package static let shared = ScoreFormatter()

    /// Requested identifiers remembered verbatim before the table is emptied; protects memory from garbage.
    static let requestedIdentifierLimit = 512
    /// Locale and currency pairs remembered before the table is emptied.
    static let currencyPatternLimit = 2048
    /// Entries in each most-recently-used list checked before hashing.
    static let recentLimit = 8

    /// Key of the currency pattern cache.
    private struct CurrencyKey: Hashable {
        var locale: String
        var currency: String
    }

    /// Everything learned so far, behind one lock.
    ///
    /// A request formats up to 100 entries with one locale and currency, so a short list compared with `==`
    /// (a 16-byte compare for small strings) answers nearly every call before the dictionaries' SipHash does.
    private struct Caches {
        var recentLocales: [(requested: String, data: LocaleFormattingData)] = []
        var recentCurrencies: [(locale: ObjectIdentifier, currency: String, pattern: NumberPattern)] = []
        var nextRecentLocale = 0
        var nextRecentCurrency = 0
        var byRequestedIdentifier: [String: LocaleFormattingData] = [:]
        var byResolvedIdentifier: [String: LocaleFormattingData] = [:]
        var currencyPatterns: [CurrencyKey: NumberPattern] = [:]

        /// The locale data for `requested` if it was seen before.
        mutating func locale(_ requested: String) -> LocaleFormattingData? {
            for entry in recentLocales where entry.requested == requested { return entry.data }
            guard let data = byRequestedIdentifier[requested] else { return nil }
            rememberRecent(requested, data)
            return data
        }

        /// The currency pattern for `currency` in `data`'s locale if it was built before.
        mutating func currency(_ currency: String, in data: LocaleFormattingData) -> NumberPattern? {
            let identity = ObjectIdentifier(data)
            for entry in recentCurrencies where entry.locale == identity && entry.currency == currency { return entry.pattern }
            let key = CurrencyKey(locale: data.identifier, currency: ScoreFormatter.normalizedCurrencyCode(currency))
            guard let pattern = currencyPatterns[key] else { return nil }
            rememberRecent(currency, in: data, pattern)
            return pattern
        }

        /// Puts a locale into the recent list, replacing the oldest entry once full.
        mutating func rememberRecent(_ requested: String, _ data: LocaleFormattingData) {
            if recentLocales.count < ScoreFormatter.recentLimit {
                recentLocales.append((requested, data))
            } else {
                recentLocales[nextRecentLocale] = (requested, data)
                nextRecentLocale = (nextRecentLocale + 1) % ScoreFormatter.recentLimit
            }
        }

        /// Puts a currency pattern into the recent list, replacing the oldest entry once full.
        mutating func rememberRecent(_ currency: String, in data: LocaleFormattingData, _ pattern: NumberPattern) {
            let entry = (ObjectIdentifier(data), currency, pattern)
            if recentCurrencies.count < ScoreFormatter.recentLimit {
                recentCurrencies.append(entry)
            } else {
                recentCurrencies[nextRecentCurrency] = entry
                nextRecentCurrency = (nextRecentCurrency + 1) % ScoreFormatter.recentLimit
            }
        }
    }

    /// The caches; held only for lookups and inserts, never while calling into Foundation.
    private let caches = Mutex(Caches())

    /// Creates a formatter with empty caches.
    init() {}

    /// Formats `value` as `format` for `locale`, appending the plural form of `suffix` that the locale's plural
    /// rule picks for the number as displayed (no space is added).
    ///
    /// - Parameters:
    ///   - value: The leaderboard value; any `Int64`, including `.min`.
    ///   - format: How the value is to be read (count, fixed point, elapsed time, money).
    ///   - currency: ISO 4217 code for the money formats; `USD` when not three ASCII letters.
    ///   - suffix: Text after the number, chosen by plural category; `nil` for none.
    ///   - locale: A locale identifier such as `en`, `de-AT`, `pt_BR`; anything unusable means `en`.
    package func format(_ value: Int64, format: ScoreFormat, currency: String, suffix: PluralSuffix?, locale: String) -> String {
        let negative = value < 0
        // `magnitude` is a UInt64, so Int64.min needs no special case and cannot trap.
        let magnitude = value.magnitude
        switch format {
        case .integer, .fixedPoint1, .fixedPoint2, .fixedPoint3:
            let data = localeData(for: locale)
            return renderNumber(
                magnitude, negative: negative, fractionDigits: Self.fractionDigits(of: format),
                pattern: data.decimal, rules: data.pluralRules, suffix: suffix
            )
        case .moneyWhole, .money2:
            let (data, pattern) = localeAndCurrency(for: locale, currency: currency)
            return renderNumber(
                magnitude, negative: negative, fractionDigits: Self.fractionDigits(of: format),
                pattern: pattern, rules: data.pluralRules, suffix: suffix
            )
        case .elapsedMinute, .elapsedSecond, .elapsedHundredth:
            let data = localeData(for: locale)
            return renderElapsed(magnitude, negative: negative, format: format, pattern: data.decimal, suffix: suffix?.form(for: .other))
        }
    }

    /// The plural category the suffix of `value` is chosen by, for `format` in `locale`.
    func pluralCategory(of value: Int64, format: ScoreFormat, locale: String) -> PluralCategory {
        switch format {
        case .elapsedMinute, .elapsedSecond, .elapsedHundredth:
            return .other
        case .integer, .fixedPoint1, .fixedPoint2, .fixedPoint3, .moneyWhole, .money2:
            let operands = Self.operands(value.magnitude, fractionDigits: Self.fractionDigits(of: format))
            return localeData(for: locale).pluralRules.category(for: operands)
        }
    }

    /// How many fraction digits a numeric format shows (0 for elapsed formats, which do not use it).
    static func fractionDigits(of format: ScoreFormat) -> Int {
        switch format {
        case .fixedPoint1: 1
        case .fixedPoint2, .money2: 2
        case .fixedPoint3: 3
        case .integer, .moneyWhole, .elapsedMinute, .elapsedSecond, .elapsedHundredth: 0
        }
    }

    // MARK: - Rendering

    /// Writes affixes, digits and suffix of a count, fixed point or money amount into one new string.
    private func renderNumber(
        _ magnitude: UInt64, negative: Bool, fractionDigits: Int,
        pattern: NumberPattern, rules: PluralRules, suffix: PluralSuffix?
    ) -> String {
        var suffixText: String?
        if let suffix {
            suffixText = suffix.form(for: rules.category(for: Self.operands(magnitude, fractionDigits: fractionDigits)))
        }
        return Self.makeString(capacity: pattern.maximumByteCount, suffix: suffixText) { writer in
            pattern.writePrefix(negative: negative, into: &writer)
            pattern.writeNumber(magnitude, fractionDigits: fractionDigits, into: &writer)
            pattern.writeSuffix(negative: negative, into: &writer)
        }
    }

    /// Writes `h:mm`, `h:mm:ss` or `m:ss.hh` with the locale's digits, grouping of the leading field and decimal mark.
    private func renderElapsed(_ magnitude: UInt64, negative: Bool, format: ScoreFormat, pattern: NumberPattern, suffix: String?) -> String {
        Self.makeString(capacity: pattern.maximumByteCount, suffix: suffix) { writer in
            pattern.writePrefix(negative: negative, into: &writer)
            switch format {
            case .elapsedMinute:
                pattern.writeInteger(magnitude / 60, grouped: true, minimumDigits: 1, into: &writer)
                writer.append(UInt8(ascii: ":"))
                pattern.writeInteger(magnitude % 60, grouped: false, minimumDigits: 2, into: &writer)
            case .elapsedSecond:
                pattern.writeInteger(magnitude / 3600, grouped: true, minimumDigits: 1, into: &writer)
                writer.append(UInt8(ascii: ":"))
                pattern.writeInteger(magnitude / 60 % 60, grouped: false, minimumDigits: 2, into: &writer)
                writer.append(UInt8(ascii: ":"))
                pattern.writeInteger(magnitude % 60, grouped: false, minimumDigits: 2, into: &writer)
            default:
                let seconds = magnitude / 100
                pattern.writeInteger(seconds / 60, grouped: true, minimumDigits: 1, into: &writer)
                writer.append(UInt8(ascii: ":"))
                pattern.writeInteger(seconds % 60, grouped: false, minimumDigits: 2, into: &writer)
                pattern.writeDecimalSeparator(into: &writer)
                pattern.writeInteger(magnitude % 100, grouped: false, minimumDigits: 2, into: &writer)
            }
            pattern.writeSuffix(negative: negative, into: &writer)
        }
    }

    /// Runs `body` on a stack buffer of `capacity` bytes plus room for `suffix`, appends `suffix`, and copies the
    /// bytes into a string, which for 15 bytes or fewer needs no heap allocation at all.
    @inline(__always)
    private static func makeString(capacity: Int, suffix: String?, _ body: (inout UTF8Writer) -> Void) -> String {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: capacity + (suffix?.utf8.count ?? 0)) { buffer in
            var writer = UTF8Writer(buffer)
            body(&writer)
            if var text = suffix {
                text.withUTF8 { writer.append(contentsOf: $0) }
            }
            return String(decoding: UnsafeBufferPointer(rebasing: buffer[..<writer.count]), as: UTF8.self)
        }
    }

    /// The operands of `magnitude / 10^fractionDigits` shown with exactly `fractionDigits` fraction digits.
    static func operands(_ magnitude: UInt64, fractionDigits: Int) -> PluralOperands {
        var scale: UInt64 = 1
        for _ in 0..<fractionDigits { scale &*= 10 }
        return PluralOperands(integerPart: magnitude / scale, fraction: magnitude % scale, visibleFractionDigits: fractionDigits)
    }

    // MARK: - Caches

    /// The data for a requested identifier, resolving and building it on first use.
    func localeData(for requested: String) -> LocaleFormattingData {
        if let known = caches.withLock({ $0.locale(requested) }) { return known }
        return insertLocale(requested)
    }

    /// The locale data and currency pattern for a money format, with one lock acquisition when both are known.
    private func localeAndCurrency(for requested: String, currency: String) -> (LocaleFormattingData, NumberPattern) {
        let known = caches.withLock { caches -> (LocaleFormattingData?, NumberPattern?) in
            guard let data = caches.locale(requested) else { return (nil, nil) }
            return (data, caches.currency(currency, in: data))
        }
        let data = known.0 ?? insertLocale(requested)
        if let pattern = known.1 { return (data, pattern) }
        return (data, insertCurrency(currency, in: data))
    }

    /// Resolves and builds the data for an identifier not seen before, outside the lock, then publishes it.
    private func insertLocale(_ requested: String) -> LocaleFormattingData {
        let resolved = LocaleResolver.resolve(requested)
        let data = caches.withLock { $0.byResolvedIdentifier[resolved] } ?? LocaleFormattingData(resolvedIdentifier: resolved)
        return caches.withLock { caches in
            // Another thread may have built the same locale meanwhile; keep the first so all callers share it.
            let shared = caches.byResolvedIdentifier[resolved] ?? data
            caches.byResolvedIdentifier[resolved] = shared
            if caches.byRequestedIdentifier.count >= Self.requestedIdentifierLimit {
                caches.byRequestedIdentifier.removeAll(keepingCapacity: true)
            }
            caches.byRequestedIdentifier[requested] = shared
            caches.rememberRecent(requested, shared)
            return shared
        }
    }

    /// Builds the currency pattern for a pair not seen before, outside the lock, then publishes it.
    private func insertCurrency(_ currency: String, in data: LocaleFormattingData) -> NumberPattern {
        let key = CurrencyKey(locale: data.identifier, currency: Self.normalizedCurrencyCode(currency))
        let built = caches.withLock { $0.currencyPatterns[key] } ?? data.makeCurrencyPattern(currencyCode: key.currency)
        return caches.withLock { caches in
            let shared = caches.currencyPatterns[key] ?? built
            if caches.currencyPatterns.count >= Self.currencyPatternLimit {
                caches.currencyPatterns.removeAll(keepingCapacity: true)
            }
            caches.currencyPatterns[key] = shared
            caches.rememberRecent(currency, in: data, shared)
            return shared
        }
    }

    /// `currency` upper-cased if it is three ASCII letters, otherwise `USD`.
    static func normalizedCurrencyCode(_ currency: String) -> String {
        let utf8 = currency.utf8
        guard utf8.count == 3 else { return "USD" }
        var uppercase = true
        for byte in utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"): continue
            case UInt8(ascii: "a")...UInt8(ascii: "z"): uppercase = false
            default: return "USD"
            }
        }
        return uppercase ? currency : currency.uppercased()
    }
}
