import Crypto
import Foundation
import HummingbirdBcrypt
import NIOPosix
import Synchronization

/// Passwords (bcrypt) and session tokens (random, stored as SHA-256).
///
/// bcrypt reads at most 72 bytes, and a password may have 128 characters (up to 512 bytes): so that every byte of it
/// counts, a password is first pre-hashed, HMAC-SHA256 keyed with ``preHashKey`` and base64-encoded (44 bytes, no NUL),
/// and the stored hash is ``preHashedPrefix`` followed by bcrypt of that. Hashes stored before (bcrypt of the password
/// itself, `$2…`) are still accepted, by their first 72 bytes as before.
package struct Credentials: Sendable {
    /// Marks a hash of the pre-hashed password.
    static let preHashedPrefix = "ph1$"
    /// The pre-hash's key: public, it separates this use of SHA-256 from any other, so a hash cannot be matched
    /// against unsalted SHA-256 hashes of passwords leaked elsewhere.
    static let preHashKey = SymmetricKey(data: Data("OpenGameKit password pre-hash v1".utf8))

    /// bcrypt cost factor; each step doubles the work.
    let bcryptCost: UInt8
    /// A hash of the right cost for no password: verified against when an account does not exist, so that a
    /// wrong account name takes as long as a wrong password.
    let decoyHash: String
    /// Passwords checked so far by ``verifyPassword(_:hash:)`` (each one a bcrypt run); the sign-in throttle's
    /// tests read it to show how many guesses were checked.
    let passwordChecks = Counter()

    /// A count shared by the copies of a value (an atomic cannot be copied itself).
    final class Counter: Sendable {
        private let value = Atomic<Int>(0)

        /// The count now.
        var count: Int { value.load(ordering: .relaxed) }

        /// Adds one.
        func increment() { value.add(1, ordering: .relaxed) }
    }

    init(bcryptCost: UInt8) {
        self.bcryptCost = bcryptCost
        self.decoyHash = Self.preHashedPrefix + Bcrypt.hash(Self.preHash("decoy-\(UUID().uuidString)"), cost: bcryptCost)
    }

    /// The stored hash of `password` (bcrypt of its pre-hash), computed off the event loops.
    func hashPassword(_ password: String) async throws -> String {
        let cost = bcryptCost
        return try await NIOThreadPool.singleton.runIfActive { Self.preHashedPrefix + Bcrypt.hash(Self.preHash(password), cost: cost) }
    }

    /// Whether `password` matches `hash` (pre-hashed, or stored before pre-hashing), computed off the event loops.
    func verifyPassword(_ password: String, hash: String) async throws -> Bool {
        passwordChecks.increment()
        return try await NIOThreadPool.singleton.runIfActive {
            if hash.hasPrefix(Self.preHashedPrefix) {
                return Bcrypt.verify(Self.preHash(password), hash: String(hash.dropFirst(Self.preHashedPrefix.count)))
            }
            return Bcrypt.verify(password, hash: hash)
        }
    }

    /// What bcrypt reads of `password`: its keyed SHA-256, base64 (44 ASCII bytes, under bcrypt's 72).
    static func preHash(_ password: String) -> String {
        Data(HMAC<SHA256>.authenticationCode(for: Data(password.utf8), using: preHashKey)).base64EncodedString()
    }

    /// A new bearer token: 32 random bytes, base64url.
    package static func newToken() -> String {
        "gct_" + randomBase64URL(bytes: 32)
    }

    /// The stored form of a token.
    package static func tokenHash(_ token: String) -> String {
        hex(SHA256.hash(data: Data(token.utf8)))
    }

    /// Lower-case hex of `bytes` (String(format:) costs microseconds per byte on Linux; this is on every request).
    static func hex(_ bytes: some Sequence<UInt8>) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var text: [UInt8] = []
        text.reserveCapacity(64)
        for byte in bytes {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: text, as: UTF8.self)
    }

    /// A new opaque identifier with a prefix, e.g. `G:` for players.
    static func newID(prefix: String) -> String {
        prefix + randomBase64URL(bytes: 15)
    }

    /// `count` random bytes in base64url (secrets, salts, ids).
    static func randomBase64URL(bytes count: Int) -> String {
        randomBytes(count).base64URLEncoded
    }

    /// `count` bytes from the system's secure random number generator.
    static func randomBytes(_ count: Int) -> Data {
        var generator = SystemRandomNumberGenerator()
        return Data((0..<count).map { _ in UInt8.random(in: .min ... .max, using: &generator) })
    }
}
