import Foundation

/// A challenge's code, shared to let anyone join: two groups of four characters joined by `-` (`7KQ2-M9XD`), from an
/// alphabet without the look-alikes 0/O and 1/I, so 32⁸ (about 10¹²) codes.
enum ChallengeCode {
    /// The characters a code is made of.
    static let alphabet = Array("23456789ABCDEFGHJKLMNPQRSTUVWXYZ")

    /// A new random code.
    static func make() -> String {
        var generator = SystemRandomNumberGenerator()
        let characters = (0..<8).map { _ in alphabet[Int(generator.next(upperBound: UInt32(alphabet.count)))] }
        return String(characters[0..<4]) + "-" + String(characters[4..<8])
    }

    /// A code as typed (either case, `-` optional, spaces around) in its stored form, or an error saying what a code is.
    static func normalized(_ typed: String) throws -> String {
        let compact = typed.trimmingCharacters(in: .whitespaces).uppercased().replacingOccurrences(of: "-", with: "")
        guard compact.count == 8, compact.allSatisfy({ alphabet.contains($0) }) else {
            throw APIError.challengeInvalidRequest(
                "'\(typed.prefix(20))' is not a challenge code: two groups of four letters or digits such as 7KQ2-M9XD (no 0, 1, I or O)")
        }
        return String(compact.prefix(4)) + "-" + String(compact.suffix(4))
    }
}
