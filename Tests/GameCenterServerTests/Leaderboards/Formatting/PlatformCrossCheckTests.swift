import Foundation
import Testing
@testable import GameCenterServer

/// Compares the hand-rolled digit path with Foundation's `NumberFormatter` so the two cannot drift apart.
@Suite("Cross-check against NumberFormatter")
struct PlatformCrossCheckTests {
    static let numericFormats: [ScoreFormat] = [.integer, .fixedPoint1, .fixedPoint2, .fixedPoint3, .moneyWhole, .money2]

    @Test("Random values match NumberFormatter", arguments: ["en", "de", "fr", "ja"], numericFormats)
    func randomValuesMatch(locale: String, format: ScoreFormat) throws {
        let formatter = ScoreFormatter()
        let references = try ["USD", "EUR", "JPY"].map { try #require(platformFormatter(format: format, currency: $0, locale: locale)) }
        for (index, value) in spreadValues(count: 300, below: 1_000_000_000_000_000, seed: 42).enumerated() {
            let currency = ["USD", "EUR", "JPY"][index % 3]
            let expected = try #require(platformString(value, fractionDigits: fractionDigits(of: format), formatter: references[index % 3]))
            let actual = formatter.format(value, format: format, currency: currency, suffix: nil, locale: locale)
            #expect(visible(actual) == visible(expected), "\(value) \(format) \(currency) \(locale)")
        }
    }

    @Test("Integers at the Int64 extremes match NumberFormatter", arguments: ["en", "de", "fr", "ja"])
    func extremesMatch(locale: String) throws {
        let formatter = ScoreFormatter()
        for value in [Int64.min, Int64.min + 1, Int64.max, Int64.max - 1, 999_999_999_999_999_999] {
            let expected = try #require(platformReference(value, format: .integer, currency: "USD", locale: locale))
            #expect(formatter.format(value, format: .integer, currency: "USD", suffix: nil, locale: locale) == expected)
        }
    }

    @Test("Every available locale matches NumberFormatter on a few values")
    func everyAvailableLocale() throws {
        let formatter = ScoreFormatter()
        let values: [Int64] = [0, 7, -7, 1_234, -12_345, 123_456_789, -98_765_432_109, 100_000_000_000_001]
        var mismatches: [String] = []
        for identifier in Locale.availableIdentifiers.sorted() {
            for format in Self.numericFormats {
                let reference = try #require(platformFormatter(format: format, currency: "USD", locale: identifier))
                for value in values {
                    let expected = try #require(platformString(value, fractionDigits: fractionDigits(of: format), formatter: reference))
                    let actual = formatter.format(value, format: format, currency: "USD", suffix: nil, locale: identifier)
                    if actual != expected {
                        mismatches.append("\(identifier) \(format) \(value): \(visible(actual)) != \(visible(expected))")
                    }
                }
            }
        }
        #expect(mismatches.isEmpty, "\(mismatches.count) mismatches, first: \(mismatches.prefix(40).joined(separator: "\n"))")
    }
}
