/// Picks the text for a locale: the exact locale, then its language (`de` for `de-AT`), then the game's default.
enum Localization {
    static func text(_ text: LocalizedText, locale: String, fallback: String) -> String {
        value(text, locale: locale, fallback: fallback) ?? ""
    }

    /// Picks any per-locale value the same way; nil when there are none.
    static func value<Value>(_ text: [String: Value], locale: String, fallback: String) -> Value? {
        // Called for every score of every page: Foundation's replacingOccurrences cost 5 % of a page's CPU.
        let normalized = locale.contains("_") ? String(locale.map { $0 == "_" ? "-" : $0 }) : locale
        if let exact = text[normalized] { return exact }
        if let language = normalized.split(separator: "-").first, let match = text[String(language)] { return match }
        if let sameLanguage = text.first(where: { $0.key.split(separator: "-").first == normalized.split(separator: "-").first }) {
            return sameLanguage.value
        }
        return text[fallback] ?? text.values.first
    }
}
