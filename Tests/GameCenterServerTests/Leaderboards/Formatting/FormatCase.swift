import Testing
@testable import GameCenterServer

/// One row of a formatting table: inputs and the exact expected string.
struct FormatCase: Sendable, CustomTestStringConvertible {
    /// The requested locale identifier.
    var locale: String
    /// The leaderboard format.
    var format: ScoreFormat
    /// The raw leaderboard value.
    var value: Int64
    /// The exact expected output.
    var expected: String
    /// The ISO currency code passed along (only money formats use it).
    var currency: String
    /// The plural suffix passed along.
    var suffix: PluralSuffix?

    /// A row; `currency` defaults to the manifest default, `suffix` to none.
    init(_ locale: String, _ format: ScoreFormat, _ value: Int64, _ expected: String, currency: String = "USD", suffix: PluralSuffix? = nil) {
        self.locale = locale
        self.format = format
        self.value = value
        self.expected = expected
        self.currency = currency
        self.suffix = suffix
    }

    /// Shown in test reports, with invisible spaces spelled out.
    var testDescription: String {
        "\(locale) \(format) \(value)\(currency == "USD" ? "" : " \(currency)") → \(visible(expected))"
    }

    /// Runs the row through `formatter` and compares byte for byte.
    func check(with formatter: ScoreFormatter) {
        let actual = formatter.format(value, format: format, currency: currency, suffix: suffix, locale: locale)
        #expect(visible(actual) == visible(expected), "\(testDescription)")
    }
}
