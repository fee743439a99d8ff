import Testing
@testable import GameCenterServer

/// Suffix selection: the plural category of the number as displayed picks the form; `other` fills gaps.
@Suite("Plural suffixes")
struct PluralSuffixTests {
    static let points = PluralSuffix(one: " point", other: " points")
    static let allForms = PluralSuffix(zero: " z", one: " o", two: " t", few: " f", many: " m", other: " x")
    static let russian = PluralSuffix(one: " очко", few: " очка", many: " очков", other: " очка")

    static let cases: [FormatCase] = [
        // en: `one` only for the integer 1 shown without fraction digits.
        .init("en", .integer, 1, "1 point", suffix: points),
        .init("en", .integer, -1, "-1 point", suffix: points),
        .init("en", .integer, 0, "0 points", suffix: points),
        .init("en", .integer, 2, "2 points", suffix: points),
        .init("en", .integer, 11, "11 points", suffix: points),
        .init("en", .integer, 1001, "1,001 points", suffix: points),
        .init("en", .fixedPoint1, 10, "1.0 points", suffix: points),
        .init("en", .fixedPoint2, 100, "1.00 points", suffix: points),
        .init("en", .fixedPoint3, 1000, "1.000 points", suffix: points),
        .init("en", .moneyWhole, 1, "$1 point", suffix: points),
        .init("en", .money2, 100, "$1.00 points", suffix: points),
        .init("en", .integer, 5, "5pts", suffix: PluralSuffix(other: "pts")),
        // de behaves like en.
        .init("de", .integer, 1, "1 point", suffix: points),
        .init("de", .fixedPoint1, 10, "1,0 points", suffix: points),
        .init("de", .integer, 1000, "1.000 points", suffix: points),
        // fr: `one` for 0, 1 and anything below 2, fraction or not; `many` for exact millions.
        .init("fr", .integer, 0, "0 point", suffix: points),
        .init("fr", .integer, 1, "1 point", suffix: points),
        .init("fr", .integer, -1, "-1 point", suffix: points),
        .init("fr", .integer, 2, "2 points", suffix: points),
        .init("fr", .fixedPoint1, 15, "1,5 point", suffix: points),
        .init("fr", .fixedPoint2, 199, "1,99 point", suffix: points),
        .init("fr", .fixedPoint2, 200, "2,00 points", suffix: points),
        .init("fr", .integer, 1_000_000, "1\u{202F}000\u{202F}000 m", suffix: allForms),
        .init("fr", .integer, 1_000_000, "1\u{202F}000\u{202F}000 points", suffix: points),
        .init("fr", .integer, 1_000_001, "1\u{202F}000\u{202F}001 x", suffix: allForms),
        .init("fr", .fixedPoint1, 10_000_000, "1\u{202F}000\u{202F}000,0 x", suffix: allForms),
        .init("fr", .money2, 150, "1,50\u{A0}$US o", suffix: allForms),
        // ja: always `other`, even when a `one` form exists.
        .init("ja", .integer, 1, "1 points", suffix: points),
        .init("ja", .integer, 0, "0 x", suffix: allForms),
        .init("ja", .fixedPoint1, 10, "1.0 x", suffix: allForms),
        // ru: one / few / many by the last digits; decimals are `other`.
        .init("ru", .integer, 1, "1 очко", suffix: russian),
        .init("ru", .integer, 2, "2 очка", suffix: russian),
        .init("ru", .integer, 5, "5 очков", suffix: russian),
        .init("ru", .integer, 11, "11 очков", suffix: russian),
        .init("ru", .integer, 21, "21 очко", suffix: russian),
        .init("ru", .integer, 22, "22 очка", suffix: russian),
        .init("ru", .fixedPoint1, 15, "1,5 x", suffix: allForms),
        // ar: all six categories.
        .init("ar", .integer, 0, "0 z", suffix: allForms),
        .init("ar", .integer, 1, "1 o", suffix: allForms),
        .init("ar", .integer, 2, "2 t", suffix: allForms),
        .init("ar", .integer, 3, "3 f", suffix: allForms),
        .init("ar", .integer, 11, "11 m", suffix: allForms),
        .init("ar", .integer, 100, "100 x", suffix: allForms),
        .init("ar", .fixedPoint1, 30, "3.0 f", suffix: allForms),
        // pl: 22 is `few`, 25 `many`, a decimal `other`; a missing `many` falls back to `other`.
        .init("pl", .integer, 22, "22 f", suffix: allForms),
        .init("pl", .integer, 25, "25 m", suffix: allForms),
        .init("pl", .integer, 25, "25 x", suffix: PluralSuffix(one: " o", few: " f", other: " x")),
        .init("pl", .fixedPoint2, 150, "1,50 x", suffix: allForms),
        // pt vs pt-PT: 0 is `one` only in pt.
        .init("pt", .integer, 0, "0 o", suffix: allForms),
        .init("pt-PT", .integer, 0, "0 x", suffix: allForms),
        .init("pt_BR", .integer, 0, "0 o", suffix: allForms),
        // Elapsed formats always take `other`.
        .init("en", .elapsedMinute, 60, "1:00 x", suffix: allForms),
        .init("en", .elapsedSecond, 1, "0:00:01 x", suffix: allForms),
        .init("fr", .elapsedHundredth, 100, "0:01,00 x", suffix: allForms),
        // Extremes with a suffix.
        .init("en", .integer, .min, "-9,223,372,036,854,775,808 points", suffix: points),
        .init("ru", .integer, .max, "9\u{A0}223\u{A0}372\u{A0}036\u{A0}854\u{A0}775\u{A0}807 m", suffix: allForms),
    ]

    @Test("Suffix form chosen by the locale's plural rule", arguments: cases)
    func suffixes(_ row: FormatCase) {
        row.check(with: .shared)
    }

    @Test(
        "Formatter reports the category it picks",
        arguments: [
            ("en", ScoreFormat.integer, Int64(1), PluralCategory.one),
            ("en", .fixedPoint2, 100, .other),
            ("fr", .integer, 0, .one),
            ("fr", .fixedPoint1, 15, .one),
            ("ar", .money2, 300, .few),
            ("ja", .integer, 1, .other),
            ("en", .elapsedSecond, 1, .other),
            ("garbage", .integer, 1, .one),
        ])
    func category(locale: String, format: ScoreFormat, value: Int64, expected: PluralCategory) {
        #expect(ScoreFormatter.shared.pluralCategory(of: value, format: format, locale: locale) == expected)
    }

    @Test("Missing forms fall back to other", arguments: PluralCategory.allCases)
    func fallback(_ category: PluralCategory) {
        let onlyOther = PluralSuffix(other: "x")
        #expect(onlyOther.form(for: category) == "x")
        #expect(Self.allForms.form(for: category) == " " + (category == .other ? "x" : String(category.rawValue.prefix(1))))
    }

    @Test("Manifest tables require other")
    func forms() throws {
        #expect(PluralSuffix(forms: [.one: "a"]) == nil)
        let decoded = try #require(PluralSuffix(forms: [.one: "a", .few: "b", .other: "c"]))
        #expect(decoded == PluralSuffix(one: "a", few: "b", other: "c"))
        #expect(decoded.forms == [.one: "a", .few: "b", .other: "c"])
        #expect(decoded.form(for: .many) == "c")
        var edited = decoded
        edited[.many] = "d"
        edited[.other] = nil
        #expect(edited.form(for: .many) == "d")
        #expect(edited.other == "c")
    }

    @Test("The earlier one/other initializer still works")
    func sourceCompatibility() {
        let suffix = PluralSuffix(one: nil, other: "pts")
        #expect(suffix.one == nil)
        #expect(suffix.form(for: .one) == "pts")
    }
}
