import Foundation

/// Maps a locale identifier from the network (`de-AT`, `pt_BR`, `ja-JP`, or garbage) to one of the platform's
/// available locale identifiers, falling back to `en`.
///
/// Resolving onto the finite set of available identifiers keeps per-locale caches bounded no matter what
/// clients send. Unicode extensions (`-u-nu-arab`, `@currency=EUR`) and variants are dropped.
enum LocaleResolver {
    /// The identifier used when nothing in the request matches an available locale.
    static let fallbackIdentifier = "en"

    /// Longer inputs are treated as garbage rather than parsed; real identifiers are far shorter.
    static let maximumInputLength = 64

    /// The platform's locales, in ICU form (`de_AT`, `zh_Hant_TW`).
    private static let available: Set<String> = Set(Locale.availableIdentifiers)

    /// The most specific available identifier for `identifier`: its ICU canonical form without keywords if
    /// available, else language_Script_Region, language_Region, language_Script, then language (with the likely
    /// script filled in); `en` when none is available.
    static func resolve(_ identifier: String) -> String {
        guard !identifier.isEmpty, identifier.utf8.count <= maximumInputLength,
            identifier.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F })
        else { return fallbackIdentifier }
        // ICU canonicalization also maps legacy codes (iw → he, in → id, tl → fil) and BCP 47 to ICU form.
        let canonical = Locale.identifier(.icu, from: identifier)
        let base = String(canonical.prefix(while: { $0 != "@" }))
        if available.contains(base) { return base }
        let locale = Locale(identifier: base)
        guard let language = locale.language.languageCode?.identifier.lowercased(),
            (2...3).contains(language.utf8.count),
            language.utf8.allSatisfy({ (UInt8(ascii: "a")...UInt8(ascii: "z")).contains($0) })
        else { return fallbackIdentifier }
        // Locale fills in the likely script (zh-TW → Hant), which is what makes zh-TW find zh_Hant_TW.
        let script = locale.language.script?.identifier
        let region = locale.region?.identifier
        var candidates: [String] = []
        if let script, let region { candidates.append("\(language)_\(script)_\(region)") }
        if let region { candidates.append("\(language)_\(region)") }
        if let script { candidates.append("\(language)_\(script)") }
        candidates.append(language)
        return candidates.first(where: available.contains) ?? fallbackIdentifier
    }
}
