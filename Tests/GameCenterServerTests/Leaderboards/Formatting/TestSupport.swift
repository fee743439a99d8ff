import Foundation
@testable import GameCenterServer
import NetworkFaultProxy

/// Values spread over every magnitude below `limit`, both signs, plus 0 and ±1.
func spreadValues(count: Int, below limit: Int64, seed: UInt64) -> [Int64] {
    var generator = SplitMix64(seed: seed)
    var values: [Int64] = [0, 1, -1, limit - 1, -(limit - 1)]
    while values.count < count {
        let digits = Int.random(in: 1...Int(log10(Double(limit))), using: &generator)
        var upper: Int64 = 1
        for _ in 0..<digits { upper *= 10 }
        let magnitude = Int64.random(in: 0..<min(upper, limit), using: &generator)
        values.append(Bool.random(using: &generator) ? -magnitude : magnitude)
    }
    return values
}

/// A `NumberFormatter` configured the way the platform would render `format`, or `nil` for elapsed formats.
func platformFormatter(format: ScoreFormat, currency: String, locale: String) -> NumberFormatter? {
    let formatter = NumberFormatter()
    formatter.locale = Locale(identifier: locale)
    switch format {
    case .integer, .fixedPoint1, .fixedPoint2, .fixedPoint3: formatter.numberStyle = .decimal
    case .moneyWhole, .money2: formatter.numberStyle = .currency; formatter.currencyCode = currency
    case .elapsedMinute, .elapsedSecond, .elapsedHundredth: return nil
    }
    formatter.minimumFractionDigits = fractionDigits(of: format)
    formatter.maximumFractionDigits = fractionDigits(of: format)
    return formatter
}

/// How many fraction digits `format` shows.
func fractionDigits(of format: ScoreFormat) -> Int {
    switch format {
    case .fixedPoint1: 1
    case .fixedPoint2, .money2: 2
    case .fixedPoint3: 3
    default: 0
    }
}

/// `value / 10^fractionDigits` as rendered by `formatter`.
///
/// Fractions go through `Double`, which is exact for the magnitudes the cross-checks use (< 10^15);
/// whole numbers go through `NSNumber(Int64)`, which is exact for every `Int64`.
func platformString(_ value: Int64, fractionDigits: Int, formatter: NumberFormatter) -> String? {
    if fractionDigits == 0 { return formatter.string(from: NSNumber(value: value)) }
    var scale = 1.0
    for _ in 0..<fractionDigits { scale *= 10 }
    return formatter.string(from: NSNumber(value: Double(value) / scale))
}

/// The platform's rendering of `value` in `format`, for the formats `NumberFormatter` can express directly.
func platformReference(_ value: Int64, format: ScoreFormat, currency: String, locale: String) -> String? {
    platformFormatter(format: format, currency: currency, locale: locale)
        .flatMap { platformString(value, fractionDigits: fractionDigits(of: format), formatter: $0) }
}

/// Shows every non-ASCII scalar as `<U+XXXX>` so that failure messages tell U+00A0 from U+202F.
func visible(_ text: String) -> String {
    text.unicodeScalars.map { $0.isASCII ? String($0) : "<U+\(String($0.value, radix: 16, uppercase: true))>" }.joined()
}
