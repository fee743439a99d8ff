/// A manifest broke a rule: names the file, the field (a path such as `leaderboards[1].format`) and the rule.
public struct ManifestError: Error, CustomStringConvertible, Equatable {
    /// The manifest file.
    public let file: String
    /// Path of the offending field; empty for the whole file.
    public let field: String
    /// The rule that was broken, and what is allowed.
    public let rule: String

    public var description: String {
        field.isEmpty ? "\(file): \(rule)" : "\(file): \(field): \(rule)"
    }
}
