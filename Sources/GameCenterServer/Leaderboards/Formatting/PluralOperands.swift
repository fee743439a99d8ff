/// The CLDR plural operands (n, i, v, f, t) of a number exactly as it is displayed.
///
/// The sign is dropped (CLDR's `n` is an absolute value) and the visible fraction digits are kept,
/// so `1` and `1.00` have different operands. The compact exponent operands `c`/`e` are always 0
/// because scores are never shown in compact notation.
struct PluralOperands: Sendable, Equatable {
    /// `i`: the integer digits of the absolute value.
    var i: UInt64
    /// `v`: how many fraction digits are visible, trailing zeros included.
    var v: Int
    /// `f`: the visible fraction digits as an integer, trailing zeros included (`1.50` → 50).
    var f: UInt64

    /// `t`: the visible fraction digits as an integer, trailing zeros removed (`1.50` → 5).
    var t: UInt64 {
        var t = f
        while t != 0, t % 10 == 0 { t /= 10 }
        return t
    }

    /// `w`: how many fraction digits are visible once trailing zeros are removed.
    var w: Int {
        guard f != 0 else { return 0 }
        var w = v
        var rest = f
        while rest % 10 == 0 {
            rest /= 10
            w -= 1
        }
        return w
    }

    /// Whether `n` is a whole number (it has no non-zero fraction digit).
    var isWholeNumber: Bool { f == 0 }

    /// Creates the operands of a number with the given integer part and `visibleFractionDigits` fraction digits.
    init(integerPart: UInt64, fraction: UInt64 = 0, visibleFractionDigits: Int = 0) {
        self.i = integerPart
        self.v = visibleFractionDigits
        self.f = fraction
    }

    /// Parses a plain decimal such as `"1.50"` or `"-3"`: digits, an optional `.`, at most 18 fraction digits.
    init?(_ text: String) {
        var integerPart: UInt64 = 0
        var fraction: UInt64 = 0
        var fractionDigits = 0
        var sawDigit = false
        var inFraction = false
        var bytes = text.utf8[...]
        if bytes.first == UInt8(ascii: "-") { bytes = bytes.dropFirst() }
        for byte in bytes {
            switch byte {
            case UInt8(ascii: "."):
                guard !inFraction else { return nil }
                inFraction = true
            case UInt8(ascii: "0")...UInt8(ascii: "9"):
                let digit = UInt64(byte &- UInt8(ascii: "0"))
                sawDigit = true
                if inFraction {
                    guard fractionDigits < 18 else { return nil }
                    fraction = fraction * 10 + digit
                    fractionDigits += 1
                } else {
                    let (times10, overflow1) = integerPart.multipliedReportingOverflow(by: 10)
                    let (sum, overflow2) = times10.addingReportingOverflow(digit)
                    guard !overflow1, !overflow2 else { return nil }
                    integerPart = sum
                }
            default:
                return nil
            }
        }
        guard sawDigit else { return nil }
        self.init(integerPart: integerPart, fraction: fraction, visibleFractionDigits: fractionDigits)
    }

    /// Whether `n` equals the whole number `value` (`1.0` does, `1.5` does not).
    func n(is value: UInt64) -> Bool {
        f == 0 && i == value
    }

    /// `n % modulus` when `n` is a whole number, else `nil`: CLDR ranges only match whole values.
    func n(modulo modulus: UInt64) -> UInt64? {
        f == 0 ? i % modulus : nil
    }
}
