import Foundation
import OpenGameKit
import Testing

/// `GKGameActivity.isValidPartyCode` agrees with Apple's documented format, written independently as one regular
/// expression, on 10⁵ random strings (most of them near misses: the right shape with one thing wrong).
@Suite struct PartyCodeTests {
    /// Apple's format as a regular expression: for each length 2…6, two parts of that length joined by `-`, all digits
    /// or all from the alphabet.
    static let format: NSRegularExpression = {
        let alphabet = "[" + GKGameActivity.validPartyCodeAlphabet.joined() + "]"
        let choices = (2...6).flatMap { length in ["[0-9]{\(length)}-[0-9]{\(length)}", "\(alphabet){\(length)}-\(alphabet){\(length)}"] }
        return try! NSRegularExpression(pattern: "^(?:" + choices.joined(separator: "|") + ")$")
    }()

    static func matchesFormat(_ code: String) -> Bool {
        format.firstMatch(in: code, range: NSRange(code.startIndex..., in: code)) != nil
    }

    @Test func theAlphabetLeavesOutLookAlikes() {
        let alphabet = Set(GKGameActivity.validPartyCodeAlphabet)
        #expect(alphabet.count == 32 && alphabet.isDisjoint(with: ["0", "1", "I", "O"]))
        #expect(alphabet.allSatisfy { $0.count == 1 && $0.uppercased() == $0 })
    }

    @Test func agreesWithTheFormatOnRandomStrings() {
        var generator = SystemRandomNumberGenerator()
        let alphabet = GKGameActivity.validPartyCodeAlphabet.joined()
        let pools = [alphabet, "0123456789", "abcdefghijklmnopqrstuvwxyz", "IO01", "-_ .é", alphabet + "0123456789-"].map(Array.init)
        var valid = 0
        for _ in 0..<100_000 {
            let code: String
            if Bool.random(using: &generator) {
                // The right shape: two parts of one length from one pool, sometimes with one character or one length wrong.
                let length = Int.random(in: 1...7, using: &generator)
                let pool = pools.randomElement(using: &generator)!
                let part = { (count: Int) in String((0..<count).map { _ in pool.randomElement(using: &generator)! }) }
                var text = part(length) + "-" + part(Bool.random(using: &generator) ? length : Int.random(in: 1...7, using: &generator))
                if Int.random(in: 0..<4, using: &generator) == 0, !text.isEmpty {
                    let index = text.index(text.startIndex, offsetBy: Int.random(in: 0..<text.count, using: &generator))
                    text.replaceSubrange(index...index, with: String(pools.randomElement(using: &generator)!.randomElement(using: &generator)!))
                }
                code = text
            } else {
                let pool = pools.randomElement(using: &generator)!
                code = String((0..<Int.random(in: 0...15, using: &generator)).map { _ in pool.randomElement(using: &generator)! })
            }
            let expected = Self.matchesFormat(code)
            if expected { valid += 1 }
            #expect(GKGameActivity.isValidPartyCode(code) == expected, "\(code)")
        }
        // Both answers were asked often enough to mean something.
        #expect(valid > 5_000 && valid < 95_000, "\(valid) valid codes")
    }

    @Test func knownCodes() {
        for code in ["AB-CD", "4812-3301", "K7QM-2XHD", "ZZZZZZ-999999", "00-00"] { #expect(GKGameActivity.isValidPartyCode(code), "\(code)") }
        for code in ["ab-cd", "AB-CDE", "A-B", "ABCDEFG-ABCDEFG", "AB-C0", "12-AB", "ABCD", "AB--CD", "AB-CD-EF", " AB-CD", "ÄB-CD"] {
            #expect(!GKGameActivity.isValidPartyCode(code), "\(code)")
        }
    }
}
