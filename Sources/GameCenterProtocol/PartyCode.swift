import Foundation

/// Party codes in Apple's format (`GKGameActivity.isValidPartyCode`): two parts of the same length, 2 to 6 characters
/// each, joined by `-`; either every character is a digit (`0`–`9`) or every character is from ``alphabet``.
/// Shared by the SDK (which checks before sending) and the server (which checks what arrives).
public enum PartyCode {
    /// The characters of a party code that is not all digits: upper-case letters and digits that cannot be misread
    /// for one another (no `0`, `1`, `I` or `O`).
    public static let alphabet: [Character] = Array("ABCDEFGHJKLMNPQRSTUVWXYZ23456789")
    /// The lengths one part may have.
    public static let partLengths = 2...6
    /// The length of each part of a code the server makes: 32⁴ × 32⁴ ≈ 10¹² codes.
    public static let generatedPartLength = 4

    /// Whether `code` is a party code exactly as written (upper case; see ``normalized(_:)`` for what a player typed).
    public static func isValid(_ code: String) -> Bool {
        let parts = code.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 2, parts[0].count == parts[1].count, partLengths.contains(parts[0].count) else { return false }
        let characters = parts[0] + parts[1]
        return characters.allSatisfy { $0.isASCII && $0.isNumber } || characters.allSatisfy { alphabet.contains($0) }
    }

    /// What a player typed, as a code: spaces around it dropped and letters in upper case (Apple's framework upper-cases
    /// codes too); nil when the result is not a party code.
    public static func normalized(_ typed: String) -> String? {
        let code = typed.trimmingCharacters(in: .whitespaces).uppercased()
        return isValid(code) ? code : nil
    }

    /// A new random code of two four-character parts from ``alphabet``, such as `K7QM-2XHD`.
    public static func make() -> String {
        var generator = SystemRandomNumberGenerator()
        let part = { String((0..<generatedPartLength).map { _ in alphabet.randomElement(using: &generator)! }) }
        return "\(part())-\(part())"
    }

    /// What a valid code looks like, for error messages.
    public static let formatDescription =
        "two parts of the same length (2 to 6 characters) joined by '-': all digits (such as 4812-3301), or letters and digits without 0, 1, I and O (such as K7QM-2XHD)"
}
