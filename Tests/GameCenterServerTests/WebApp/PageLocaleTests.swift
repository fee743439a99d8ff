import Testing
@testable import GameCenterServer

/// How `Accept-Language` picks the formatting locale and a game's texts.
@Suite struct PageLocaleTests {
    static let game = Game(
        bundleID: "com.example.locale", name: "Locale", clientKey: nil, defaultLocale: "en",
        leaderboards: [
            LeaderboardDefinition(
                category: "c", isDefault: true, title: ["en": "Points", "de": "Punkte", "pt-BR": "Pontos"],
                format: .integer, suffix: [:], order: .descending, currency: "USD", valueRange: 0...1)
        ],
        aggregates: [], achievements: [], manifestPath: "")

    @Test(
        arguments: [
            (nil, "en", "en"),
            ("", "en", "en"),
            ("de-AT", "de-AT", "de"),
            ("fr, de;q=0.8, en;q=0.5", "fr", "de"),
            ("en;q=0.2, de;q=0.9", "de", "de"),
            ("pt", "pt", "pt-BR"),
            ("ja, *;q=0.1", "ja", "en"),
            ("de;q=0, en", "en", "en"),
            ("<script>, ../x, de", "de", "de"),
        ] as [(String?, String, String)])
    func acceptLanguagePicksFormattingAndTexts(header: String?, formatting: String, texts: String) {
        let locale = PageLocale(acceptLanguage: header)
        #expect(locale.formatting == formatting)
        #expect(locale.texts(of: Self.game) == texts)
    }
}
