import Crypto
import Foundation
import HummingbirdBcrypt
import NIOPosix
import Synchronization

/// Passwords (bcrypt) and session tokens (random, stored as SHA-256).
package struct Credentials: Sendable {
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
        self.decoyHash = Bcrypt.hash("decoy-\(UUID().uuidString)", cost: bcryptCost)
    }

    /// A bcrypt hash of `password`, computed off the event loops.
    func hashPassword(_ password: String) async throws -> String {
        let cost = bcryptCost
        return try await NIOThreadPool.singleton.runIfActive { Bcrypt.hash(password, cost: cost) }
    }

    /// Whether `password` matches `hash`, computed off the event loops.
    func verifyPassword(_ password: String, hash: String) async throws -> Bool {
        passwordChecks.increment()
        return try await NIOThreadPool.singleton.runIfActive { Bcrypt.verify(password, hash: hash) }
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

    private static func randomBase64URL(bytes count: Int) -> String {
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<count).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
        return Data(bytes).base64URLEncoded
    }
}
