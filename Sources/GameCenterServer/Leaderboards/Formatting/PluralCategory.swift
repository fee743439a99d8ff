/// A CLDR plural category, as chosen by a language's cardinal plural rule.
///
/// The raw values are the CLDR keywords, which are also the keys a manifest uses.
public enum PluralCategory: String, Sendable, CaseIterable, Hashable {
    /// CLDR `zero` (e.g. Arabic 0).
    case zero
    /// CLDR `one` (e.g. English 1, French 0 and 1.5).
    case one
    /// CLDR `two` (e.g. Arabic 2).
    case two
    /// CLDR `few` (e.g. Polish 2–4, Arabic 3–10).
    case few
    /// CLDR `many` (e.g. Russian 5–20, French 1,000,000).
    case many
    /// CLDR `other`: every number no other category claims; the only category of Japanese.
    case other
}
