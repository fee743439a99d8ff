import Hummingbird

/// The languages a page's reader asked for (`Accept-Language`), best first, and how they pick a game's texts.
///
/// The app's own words are English today; games' titles and descriptions come from their manifests in the first
/// language the reader accepts that the manifest has, else the game's default. Scores are formatted for the
/// reader's first language.
struct PageLocale: Sendable {
    /// Language tags, best first; never empty (`en` when the browser sent none).
    let preferred: [String]

    /// The locale numbers and dates are formatted for.
    var formatting: String { preferred[0] }

    /// Reads `Accept-Language` (`de-AT, de;q=0.9, en;q=0.5`); malformed entries are skipped.
    init(acceptLanguage header: String?) {
        let entries = (header ?? "").split(separator: ",").prefix(20).compactMap { entry -> (tag: String, weight: Double)? in
            let parts = entry.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }
            guard let tag = parts.first, (1...35).contains(tag.count), tag != "*",
                tag.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-") })
            else { return nil }
            let weight = parts.dropFirst().first { $0.hasPrefix("q=") }.flatMap { Double($0.dropFirst(2)) } ?? 1
            return weight > 0 ? (tag, weight) : nil
        }
        let sorted = entries.enumerated().sorted { ($0.element.weight, -$0.offset) > ($1.element.weight, -$1.offset) }.map(\.element.tag)
        self.preferred = sorted.isEmpty ? ["en"] : sorted
    }

    /// The request's languages.
    init(_ request: Request) {
        self.init(acceptLanguage: request.headers[.acceptLanguage])
    }

    /// The locale to pick `game`'s texts in: the first preferred language the manifest has texts for, else its default.
    func texts(of game: Game) -> String {
        let available = Set(
            game.leaderboards.flatMap(\.title.keys) + game.aggregates.flatMap(\.title.keys) + game.achievements.flatMap(\.title.keys))
        for tag in preferred {
            if available.contains(tag) { return tag }
            let language = tag.split(separator: "-").first.map(String.init) ?? tag
            if let match = available.first(where: { $0 == language || $0.hasPrefix(language + "-") }) { return match }
        }
        return game.defaultLocale
    }
}
