import Foundation
import Testing
@testable import GameCenterServer
import NetworkFaultProxy

/// Locale identifiers from the network: regional variants, both separators, legacy codes and garbage.
@Suite("Locale resolution and fallbacks")
struct LocaleFallbackTests {
    @Test(
        "Identifiers resolve to the most specific available locale",
        arguments: [
            ("de-AT", "de_AT"), ("de_AT", "de_AT"), ("pt_BR", "pt_BR"), ("pt-PT", "pt_PT"), ("ja-JP", "ja_JP"),
            ("EN-us", "en_US"), ("zh-TW", "zh_Hant_TW"), ("zh", "zh"), ("sr-RS", "sr_Cyrl_RS"), ("iw", "he"),
            ("in-ID", "id_ID"), ("en-US-u-nu-arab", "en_US"), ("de@collation=phonebook", "de"), ("en_US.UTF-8", "en_US"),
            ("de-XX", "de"), ("es-419", "es_419"), ("en_US_POSIX", "en_US_POSIX"),
        ])
    func resolution(requested: String, resolved: String) {
        #expect(LocaleResolver.resolve(requested) == resolved)
    }

    @Test(
        "Garbage falls back to en",
        arguments: [
            "", " ", "garbage!!", "xx", "xx-YY", "und", "root", "C", "POSIX", "-de", "__", "ü", "12", "en us", "\u{0}",
            "de\u{0}", String(repeating: "a", count: 10_000), String(repeating: "de-", count: 40),
        ])
    func garbage(requested: String) {
        #expect(LocaleResolver.resolve(requested) == "en")
        let formatter = ScoreFormatter()
        for format in ScoreFormat.allCases {
            let english = formatter.format(-1_234_567, format: format, currency: "USD", suffix: PluralSuffix(one: "o", other: "x"), locale: "en")
            #expect(formatter.format(-1_234_567, format: format, currency: "USD", suffix: PluralSuffix(one: "o", other: "x"), locale: requested) == english)
        }
    }

    /// Regional locales share their language's digits and plural rule but may override currency placement,
    /// as de_AT does (`$ 1.234,56`); expected strings are NumberFormatter's on this platform.
    static let regionalCases: [FormatCase] = [
        .init("de-AT", .integer, 123_456, "123.456"),
        .init("de-AT", .fixedPoint2, 123_456, "1.234,56"),
        .init("de-AT", .elapsedHundredth, 123_456, "20:34,56"),
        .init("de-AT", .money2, 123_456, "$\u{A0}1.234,56"),
        .init("de-AT", .money2, -123_456, "-$\u{A0}1.234,56"),
        .init("de-AT", .integer, 1, "1 Punkt", suffix: PluralSuffix(one: " Punkt", other: " Punkte")),
        .init("pt_BR", .integer, 1234, "1.234"),
        .init("pt_BR", .money2, 123_456, "US$\u{A0}1.234,56"),
        .init("pt_BR", .money2, -123_456, "-US$\u{A0}1.234,56"),
        .init("pt-PT", .integer, 1234, "1234"),
        .init("pt-PT", .integer, 123_456, "123\u{A0}456"),
        .init("pt-PT", .money2, 123_456, "1234,56\u{A0}US$"),
        .init("ja-JP", .money2, 123_456, "$1,234.56"),
        .init("ja-JP", .money2, 123_456, "\u{A5}1,234.56", currency: "JPY"),
        .init("es", .integer, 1234, "1234"),
        .init("es", .integer, 12_345, "12.345"),
        .init("es", .money2, 123_456, "1234,56\u{A0}US$"),
        .init("nl", .money2, -123_456, "US$\u{A0}-1.234,56"),
        .init("de-CH", .money2, -123_456, "$-1\u{2019}234.56"),
        .init("sv", .integer, -123_456, "\u{2212}123\u{A0}456"),
        .init("ar-EG", .integer, 123_456, "\u{661}\u{662}\u{663}\u{66C}\u{664}\u{665}\u{666}"),
        .init("ar-EG", .money2, -123_456, "\u{61C}-\u{200F}\u{661}\u{66C}\u{662}\u{663}\u{664}\u{66B}\u{665}\u{666}\u{A0}US$"),
        .init("he", .money2, 123_456, "\u{200F}1,234.56\u{A0}\u{200F}$"),
        .init("zh-TW", .money2, 123_456, "US$1,234.56"),
        .init("", .money2, 123_456, "$1,234.56"),
        .init("garbage", .fixedPoint2, -123_456, "-1,234.56"),
    ]

    @Test("Regional and non-Latin locales", arguments: regionalCases)
    func regional(_ row: FormatCase) {
        row.check(with: .shared)
    }

    @Test("Random byte strings never crash and format like en")
    func fuzz() {
        let seed = TestSeed(default: 7)
        var generator = seed.generator
        let formatter = ScoreFormatter()
        for round in 0..<500 {
            let length = Int.random(in: 0...12, using: &generator)
            let bytes = (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }
            let text = String(decoding: bytes, as: UTF8.self)
            let value = Int64(bitPattern: generator.next())
            let format = ScoreFormat.allCases[round % ScoreFormat.allCases.count]
            let output = formatter.format(value, format: format, currency: text, suffix: PluralSuffix(other: text), locale: text)
            // Compared as bytes: a combining suffix would merge with the last digit into one Character.
            #expect(Array(output.utf8).suffix(text.utf8.count) == Array(text.utf8), "\(seed), round \(round)")
            #expect(output.utf8.count > text.utf8.count, "\(seed), round \(round)")
        }
    }

    @Test("The requested-identifier cache stays bounded")
    func boundedCache() {
        let formatter = ScoreFormatter()
        for index in 0..<(ScoreFormatter.requestedIdentifierLimit * 3) {
            #expect(formatter.format(1, format: .integer, currency: "USD", suffix: nil, locale: "x\(index)") == "1")
        }
        #expect(formatter.format(1234, format: .integer, currency: "USD", suffix: nil, locale: "de") == "1.234")
    }
}
