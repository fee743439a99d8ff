import Foundation

/// How one locale writes numbers in one style (plain decimal, or currency for one ISO code), captured from
/// Foundation's `NumberFormatter` once and then applied with integer arithmetic.
///
/// Everything is read back from strings the platform formatter produced (never from documented-looking
/// properties such as `groupingSize`, which do not tell the minimum-grouping rule of `es` or `pl`), so the
/// hand-rolled output matches the platform byte for byte, including bidi marks, U+202F and U+00A0.
///
/// All bytes live in one raw buffer rather than separate arrays, which spares the hot path a retain and release
/// per affix.
/// `@unchecked Sendable`: immutable after `init`: the raw buffer is filled there and only read afterwards.
final class NumberPattern: @unchecked Sendable {
    /// Where one piece of text sits in `storage`.
    private struct ByteRun {
        var offset: Int
        var count: Int
    }

    /// The UTF-8 byte length shared by every digit.
    let digitWidth: Int
    /// Whether the digits are ASCII `0`–`9`, which allows writing them as single bytes.
    let asciiDigits: Bool
    /// Digits in the group next to the decimal mark; 0 when the locale does not group.
    let primaryGroupingSize: Int
    /// Digits in every further group (differs from the primary size only in locales like `hi`).
    let secondaryGroupingSize: Int
    /// How many digits must precede the first separator before grouping applies at all (2 for `es`: `1234`, `12.345`).
    let minimumGroupingDigits: Int
    /// An upper bound on the bytes a number or an elapsed time can take, affixes included.
    let maximumByteCount: Int

    /// All text of the pattern, back to back; written only in `init`.
    private let storage: UnsafeMutableBufferPointer<UInt8>
    /// The ten digits, `digitWidth` bytes each, from offset 0.
    private let digitRun: ByteRun
    private let groupingRun: ByteRun
    private let decimalRun: ByteRun
    private let positivePrefixRun: ByteRun
    private let positiveSuffixRun: ByteRun
    private let negativePrefixRun: ByteRun
    private let negativeSuffixRun: ByteRun

    /// Creates a pattern from its parts; `probing` is how production code obtains one.
    init(
        digits: [[UInt8]], groupingSeparator: [UInt8], decimalSeparator: [UInt8],
        primaryGroupingSize: Int, secondaryGroupingSize: Int, minimumGroupingDigits: Int,
        positivePrefix: [UInt8], positiveSuffix: [UInt8], negativePrefix: [UInt8], negativeSuffix: [UInt8]
    ) {
        precondition(digits.count == 10 && digits.allSatisfy { $0.count == digits[0].count && !$0.isEmpty })
        digitWidth = digits[0].count
        asciiDigits = digits.indices.allSatisfy { digits[$0] == [UInt8(ascii: "0") + UInt8($0)] }
        self.primaryGroupingSize = max(0, primaryGroupingSize)
        self.secondaryGroupingSize = max(1, secondaryGroupingSize)
        self.minimumGroupingDigits = max(1, minimumGroupingDigits)
        // 20 digits plus zero padding of up to three fields, a separator after nearly every digit, marks, colons, affixes.
        maximumByteCount =
            26 * digitWidth + 20 * groupingSeparator.count + decimalSeparator.count + 2
            + max(positivePrefix.count, negativePrefix.count) + max(positiveSuffix.count, negativeSuffix.count)

        var all: [UInt8] = []
        func run(_ bytes: [UInt8]) -> ByteRun {
            defer { all += bytes }
            return ByteRun(offset: all.count, count: bytes.count)
        }
        digitRun = run(digits.flatMap { $0 })
        groupingRun = run(groupingSeparator)
        decimalRun = run(decimalSeparator)
        positivePrefixRun = run(positivePrefix)
        positiveSuffixRun = run(positiveSuffix)
        negativePrefixRun = run(negativePrefix)
        negativeSuffixRun = run(negativeSuffix)
        storage = .allocate(capacity: max(all.count, 1))
        _ = storage.initialize(from: all)
    }

    /// Frees the byte storage.
    deinit {
        storage.deallocate()
    }

    /// The bytes of `run`, copied out (for inspection and for deriving patterns, not for the hot path).
    private func bytes(_ run: ByteRun) -> [UInt8] {
        Array(storage[run.offset..<(run.offset + run.count)])
    }

    /// The UTF-8 bytes of the digits 0 through 9 (ASCII, or e.g. Arabic-Indic for `ar_EG`).
    var digits: [[UInt8]] {
        (0..<10).map { Array(storage[($0 * digitWidth)..<(($0 + 1) * digitWidth)]) }
    }
    /// The UTF-8 bytes between digit groups, e.g. `,` (en), `.` (de), U+202F (fr).
    var groupingSeparator: [UInt8] { bytes(groupingRun) }
    /// The UTF-8 bytes of the decimal mark, e.g. `.` (en), `,` (de).
    var decimalSeparator: [UInt8] { bytes(decimalRun) }
    /// Text before a non-negative number (e.g. `$`, or a bidi mark).
    var positivePrefix: [UInt8] { bytes(positivePrefixRun) }
    /// Text after a non-negative number (e.g. U+00A0 `€`).
    var positiveSuffix: [UInt8] { bytes(positiveSuffixRun) }
    /// Text before a negative number's digits (e.g. `-`, `-$`, `US$ -`).
    var negativePrefix: [UInt8] { bytes(negativePrefixRun) }
    /// Text after a negative number's digits.
    var negativeSuffix: [UInt8] { bytes(negativeSuffixRun) }

    // MARK: - Obtaining a pattern from Foundation

    /// The plain-number pattern of `locale`, or `nil` if the platform's output could not be understood.
    static func decimal(locale: Locale) -> NumberPattern? {
        probing { fractionDigits, grouping in
            let formatter = NumberFormatter()
            formatter.locale = locale
            formatter.numberStyle = .decimal
            formatter.minimumFractionDigits = fractionDigits
            formatter.maximumFractionDigits = fractionDigits
            formatter.usesGroupingSeparator = grouping
            return formatter
        }
    }

    /// The currency pattern of `locale` for the ISO 4217 `currencyCode`, or `nil` if the output could not be understood.
    static func currency(locale: Locale, currencyCode: String) -> NumberPattern? {
        probing { fractionDigits, grouping in
            let formatter = NumberFormatter()
            formatter.locale = locale
            formatter.numberStyle = .currency
            formatter.currencyCode = currencyCode
            formatter.minimumFractionDigits = fractionDigits
            formatter.maximumFractionDigits = fractionDigits
            formatter.usesGroupingSeparator = grouping
            return formatter
        }
    }

    /// Derives a pattern by formatting probe numbers with formatters from `makeFormatter(fractionDigits, grouping)`.
    ///
    /// Works on Unicode scalars so that multi-byte digits which share a UTF-8 lead byte are told apart.
    static func probing(_ makeFormatter: (_ fractionDigits: Int, _ grouping: Bool) -> NumberFormatter) -> NumberPattern? {
        typealias Scalars = [Unicode.Scalar]
        func render(_ formatter: NumberFormatter, _ number: NSNumber) -> Scalars? {
            formatter.string(from: number).map { Array($0.unicodeScalars) }
        }
        func bytes(_ scalars: some Sequence<Unicode.Scalar>) -> [UInt8] {
            var text = ""
            text.unicodeScalars.append(contentsOf: scalars)
            return Array(text.utf8)
        }
        func strip(_ text: Scalars, prefix: Scalars, suffix: Scalars) -> Scalars? {
            guard text.count >= prefix.count + suffix.count,
                text.starts(with: prefix), text.reversed().starts(with: suffix.reversed())
            else { return nil }
            return Array(text[prefix.count..<(text.count - suffix.count)])
        }

        // Single digits without grouping: what all ten share is the positive affixes, the rest is the digit.
        let plain = makeFormatter(0, false)
        var singles: [Scalars] = []
        for digit in 0...9 {
            guard let text = render(plain, NSNumber(value: digit)) else { return nil }
            singles.append(text)
        }
        let shortest = singles.map(\.count).min() ?? 0
        var prefixLength = 0
        while prefixLength < shortest, singles.allSatisfy({ $0[prefixLength] == singles[0][prefixLength] }) {
            prefixLength += 1
        }
        var suffixLength = 0
        while suffixLength < shortest - prefixLength,
            singles.allSatisfy({ $0[$0.count - 1 - suffixLength] == singles[0][singles[0].count - 1 - suffixLength] })
        {
            suffixLength += 1
        }
        let positivePrefix = Array(singles[0].prefix(prefixLength))
        let positiveSuffix = Array(singles[0].suffix(suffixLength))
        let digitScalars = singles.map { Array($0[prefixLength..<($0.count - suffixLength)]) }
        guard digitScalars.allSatisfy({ !$0.isEmpty }), Set(digitScalars.map { bytes($0) }).count == 10 else { return nil }

        // The negative form around the digit 1: whatever precedes and follows it.
        guard let negative = render(plain, NSNumber(value: -1)),
            let oneAt = firstRange(of: digitScalars[1], in: negative)
        else { return nil }
        let negativePrefix = Array(negative[..<oneAt.lowerBound])
        let negativeSuffix = Array(negative[oneAt.upperBound...])

        // Group structure from a ten-digit number: digit runs and the separator runs between them.
        let grouped = makeFormatter(0, true)
        guard let tenDigits = render(grouped, NSNumber(value: 1_234_567_890)),
            let body = strip(tenDigits, prefix: positivePrefix, suffix: positiveSuffix),
            let tokens = tokenize(body, digits: digitScalars)
        else { return nil }
        let groupSizes = tokens.groups
        let separators = tokens.separators
        guard groupSizes.reduce(0, +) == 10, Set(separators).count <= 1 else { return nil }
        let separator = separators.first ?? []
        var primary = 0
        var secondary = 1
        var minimumGrouping = 1
        if groupSizes.count >= 2 {
            // Two groups would leave the secondary size unobservable; no CLDR locale groups that coarsely.
            guard groupSizes.count >= 3 else { return nil }
            primary = groupSizes[groupSizes.count - 1]
            secondary = groupSizes[groupSizes.count - 2]
            // The smallest digit count that gets a separator reveals the minimum-grouping rule.
            var found = false
            var power: Int64 = 1
            for _ in 0..<primary { power *= 10 }
            for digitsBeyondPrimary in 1...4 {
                guard let text = render(grouped, NSNumber(value: power)),
                    let body = strip(text, prefix: positivePrefix, suffix: positiveSuffix),
                    let tokens = tokenize(body, digits: digitScalars)
                else { return nil }
                if tokens.groups.count > 1 {
                    minimumGrouping = digitsBeyondPrimary
                    found = true
                    break
                }
                power *= 10
            }
            guard found else { return nil }
        }

        // The decimal mark sits between the digits of 1.25.
        let fractional = makeFormatter(2, true)
        guard let withFraction = render(fractional, NSNumber(value: 1.25)),
            let fractionBody = strip(withFraction, prefix: positivePrefix, suffix: positiveSuffix),
            fractionBody.starts(with: digitScalars[1]),
            fractionBody.reversed().starts(with: (digitScalars[2] + digitScalars[5]).reversed())
        else { return nil }
        let markLength = fractionBody.count - digitScalars[1].count - digitScalars[2].count - digitScalars[5].count
        guard markLength > 0 else { return nil }
        let decimalMark = fractionBody[digitScalars[1].count..<(digitScalars[1].count + markLength)]

        let digitBytes = digitScalars.map { bytes($0) }
        guard digitBytes.allSatisfy({ $0.count == digitBytes[0].count }) else { return nil }
        return NumberPattern(
            digits: digitBytes, groupingSeparator: bytes(separator), decimalSeparator: bytes(decimalMark),
            primaryGroupingSize: primary, secondaryGroupingSize: secondary, minimumGroupingDigits: minimumGrouping,
            positivePrefix: bytes(positivePrefix), positiveSuffix: bytes(positiveSuffix),
            negativePrefix: bytes(negativePrefix), negativeSuffix: bytes(negativeSuffix)
        )
    }

    /// Splits `body` into the lengths of its digit runs and the non-digit runs between them; `nil` if it does not
    /// start and end with a digit.
    private static func tokenize(_ body: [Unicode.Scalar], digits: [[Unicode.Scalar]]) -> (groups: [Int], separators: [[Unicode.Scalar]])? {
        var groups: [Int] = []
        var separators: [[Unicode.Scalar]] = []
        var run = 0
        var pending: [Unicode.Scalar] = []
        var index = 0
        while index < body.count {
            if let digit = digits.first(where: { body[index...].starts(with: $0) }) {
                if !pending.isEmpty {
                    guard run > 0 else { return nil }
                    groups.append(run)
                    separators.append(pending)
                    pending = []
                    run = 0
                }
                run += 1
                index += digit.count
            } else {
                pending.append(body[index])
                index += 1
            }
        }
        guard run > 0, pending.isEmpty else { return nil }
        groups.append(run)
        return (groups, separators)
    }

    /// The first range at which `needle` occurs in `haystack`.
    private static func firstRange(of needle: [Unicode.Scalar], in haystack: [Unicode.Scalar]) -> Range<Int>? {
        guard !needle.isEmpty, haystack.count >= needle.count else { return nil }
        for start in 0...(haystack.count - needle.count) where haystack[start...].starts(with: needle) {
            return start..<(start + needle.count)
        }
        return nil
    }

    // MARK: - Writing

    /// Appends the text of `run`.
    @inline(__always)
    private func write(_ run: ByteRun, into writer: inout UTF8Writer) {
        writer.append(UnsafePointer(storage.baseAddress! + run.offset), count: run.count)
    }

    /// Writes the prefix for a number of the given sign.
    @inline(__always)
    func writePrefix(negative: Bool, into writer: inout UTF8Writer) {
        write(negative ? negativePrefixRun : positivePrefixRun, into: &writer)
    }

    /// Writes the suffix for a number of the given sign.
    @inline(__always)
    func writeSuffix(negative: Bool, into writer: inout UTF8Writer) {
        write(negative ? negativeSuffixRun : positiveSuffixRun, into: &writer)
    }

    /// Writes the decimal mark.
    @inline(__always)
    func writeDecimalSeparator(into writer: inout UTF8Writer) {
        write(decimalRun, into: &writer)
    }

    /// Writes `magnitude / 10^fractionDigits` with grouping and `fractionDigits` fraction digits, without affixes.
    func writeNumber(_ magnitude: UInt64, fractionDigits: Int, into writer: inout UTF8Writer) {
        guard fractionDigits > 0 else {
            writeInteger(magnitude, grouped: true, minimumDigits: 1, into: &writer)
            return
        }
        var scale: UInt64 = 1
        for _ in 0..<fractionDigits { scale &*= 10 }
        writeInteger(magnitude / scale, grouped: true, minimumDigits: 1, into: &writer)
        write(decimalRun, into: &writer)
        writeInteger(magnitude % scale, grouped: false, minimumDigits: fractionDigits, into: &writer)
    }

    /// `"00"` through `"99"` back to back, so ASCII digits can be produced two per division.
    private static let digitPairs: StaticString =
        "00010203040506070809101112131415161718192021222324252627282930313233343536373839404142434445464748495051525354555657585960616263646566676869707172737475767778798081828384858687888990919293949596979899"

    /// Writes `value` in this locale's digits, zero-padded to `minimumDigits`, grouped by the locale's rule if `grouped`.
    ///
    /// Fills the reserved bytes from the right, so digits, separators and padding need one pass and no reversal.
    func writeInteger(_ value: UInt64, grouped: Bool, minimumDigits: Int, into writer: inout UTF8Writer) {
        let digitCount = max(Self.decimalDigitCount(value), minimumDigits)
        var separatorCount = 0
        if grouped, primaryGroupingSize > 0, digitCount - primaryGroupingSize >= minimumGroupingDigits {
            separatorCount = 1 + (digitCount - 1 - primaryGroupingSize) / secondaryGroupingSize
        }
        let separatorWidth = groupingRun.count
        let length = digitCount * digitWidth + separatorCount * separatorWidth
        let base = writer.buffer.baseAddress! + writer.reserve(length)
        var end = length
        var rest = value
        let pairs = Self.digitPairs.utf8Start
        let source = storage.baseAddress!
        if asciiDigits {
            // Group by group from the right, two digits per division; zero padding falls out of `rest` reaching 0.
            var remaining = digitCount
            var groupSize = separatorCount > 0 ? primaryGroupingSize : digitCount
            while true {
                var inGroup = min(groupSize, remaining)
                remaining &-= inGroup
                while inGroup >= 2 {
                    let pair = Int(truncatingIfNeeded: rest % 100) &* 2
                    rest /= 100
                    end &-= 2
                    base[end] = pairs[pair]
                    base[end &+ 1] = pairs[pair &+ 1]
                    inGroup &-= 2
                }
                if inGroup == 1 {
                    end &-= 1
                    base[end] = UInt8(truncatingIfNeeded: rest % 10) &+ UInt8(ascii: "0")
                    rest /= 10
                }
                if remaining == 0 { break }
                end &-= separatorWidth
                for index in 0..<separatorWidth { base[end &+ index] = source[groupingRun.offset &+ index] }
                groupSize = secondaryGroupingSize
            }
            assert(end == 0)
            return
        }
        var written = 0
        var nextSeparatorAt = separatorCount > 0 ? primaryGroupingSize : Int.max
        while written < digitCount {
            if written == nextSeparatorAt {
                end &-= separatorWidth
                for index in 0..<separatorWidth { base[end &+ index] = source[groupingRun.offset &+ index] }
                nextSeparatorAt &+= secondaryGroupingSize
            }
            let digit = Int(truncatingIfNeeded: rest % 10)
            rest /= 10
            end &-= digitWidth
            for index in 0..<digitWidth { base[end &+ index] = source[digit &* digitWidth &+ index] }
            written &+= 1
        }
        assert(end == 0)
    }

    /// How many decimal digits `value` has (1 for 0).
    @inline(__always)
    static func decimalDigitCount(_ value: UInt64) -> Int {
        var count = 1
        var threshold: UInt64 = 10
        while count < 20, value >= threshold {
            count += 1
            threshold &*= 10
        }
        return count
    }
}
