/// Why a session id is not a valid DNS-SD service name (RFC 6335 §5.1).
public enum ServiceTypeError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The session id was empty.
    case empty
    /// The session id was longer than 15 characters.
    case tooLong(String)
    /// The session id contained a character other than an ASCII letter, digit or hyphen.
    case invalidCharacter(String, Unicode.Scalar)
    /// The session id had no letter.
    case noLetter(String)
    /// The session id started or ended with a hyphen.
    case hyphenAtEnd(String)
    /// The session id contained two hyphens in a row.
    case consecutiveHyphens(String)

    static let rules =
        "A session id must be 1–15 characters of ASCII letters, digits and hyphens, contain at least one letter, not start or end with a hyphen, and not contain two hyphens in a row (RFC 6335 §5.1)."

    /// An explanation naming the problem and the full rule.
    public var description: String {
        let problem =
            switch self {
            case .empty: "The session id is empty."
            case .tooLong(let name): "The session id \"\(name)\" has \(name.unicodeScalars.count) characters; at most 15 are allowed."
            case .invalidCharacter(let name, let scalar): "The session id \"\(name)\" contains \"\(scalar)\", which is not allowed."
            case .noLetter(let name): "The session id \"\(name)\" has no letter."
            case .hyphenAtEnd(let name): "The session id \"\(name)\" starts or ends with a hyphen."
            case .consecutiveHyphens(let name): "The session id \"\(name)\" contains two hyphens in a row."
            }
        return problem + " " + Self.rules
    }
}
