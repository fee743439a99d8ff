import Foundation

/// What formatting needs to know about one resolved locale, built once and then shared read-only.
final class LocaleFormattingData: Sendable {
    /// The available identifier this data was built for (`de_AT`, `en`).
    let identifier: String
    /// The platform locale for `identifier`, kept to build currency patterns later.
    let locale: Locale
    /// How plain numbers, fixed points and elapsed times are written.
    let decimal: NumberPattern
    /// The language's cardinal plural rule.
    let pluralRules: PluralRules

    /// Builds the data for an already resolved identifier; falls back to `en`'s number pattern if the
    /// platform's output for this locale cannot be understood.
    init(resolvedIdentifier: String) {
        identifier = resolvedIdentifier
        locale = Locale(identifier: resolvedIdentifier)
        decimal =
            NumberPattern.decimal(locale: locale)
            ?? NumberPattern.decimal(locale: Locale(identifier: LocaleResolver.fallbackIdentifier))
            ?? Self.builtInEnglish
        pluralRules = PluralRules(localeIdentifier: resolvedIdentifier)
    }

    /// `en`'s decimal pattern, for the case that even the platform's `en` output cannot be understood.
    static let builtInEnglish = NumberPattern(
        digits: (0...9).map { [UInt8(ascii: "0") + UInt8($0)] },
        groupingSeparator: Array(",".utf8), decimalSeparator: Array(".".utf8),
        primaryGroupingSize: 3, secondaryGroupingSize: 3, minimumGroupingDigits: 1,
        positivePrefix: [], positiveSuffix: [], negativePrefix: Array("-".utf8), negativeSuffix: []
    )

    /// The currency pattern for `currencyCode` in this locale, with a plain `USD 1,234.56`-style fallback
    /// if the platform's output cannot be understood.
    func makeCurrencyPattern(currencyCode: String) -> NumberPattern {
        if let pattern = NumberPattern.currency(locale: locale, currencyCode: currencyCode) { return pattern }
        let code = Array(currencyCode.utf8) + [0xC2, 0xA0]
        return NumberPattern(
            digits: decimal.digits, groupingSeparator: decimal.groupingSeparator, decimalSeparator: decimal.decimalSeparator,
            primaryGroupingSize: decimal.primaryGroupingSize, secondaryGroupingSize: decimal.secondaryGroupingSize,
            minimumGroupingDigits: decimal.minimumGroupingDigits,
            positivePrefix: decimal.positivePrefix + code, positiveSuffix: decimal.positiveSuffix,
            negativePrefix: decimal.negativePrefix + code, negativeSuffix: decimal.negativeSuffix
        )
    }
}
