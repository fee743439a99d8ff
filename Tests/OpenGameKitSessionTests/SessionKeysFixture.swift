import Crypto
import Foundation
@testable import OpenGameKit

/// Test support: the two ends of one connection, with keys agreed from real handshakes.
struct SessionKeysFixture {
    /// The side that connected.
    var initiator: SessionKeys
    /// The side that accepted.
    var responder: SessionKeys

    /// Runs the key agreement of both sides with a fresh ephemeral key each, and each side's passphrase.
    init(initiatorPassphrase: SessionPassphrase? = nil, responderPassphrase: SessionPassphrase? = nil) throws {
        let initiatorKey = Curve25519.KeyAgreement.PrivateKey()
        let responderKey = Curve25519.KeyAgreement.PrivateKey()
        let initiatorHandshake = SessionHandshake(publicKey: Array(initiatorKey.publicKey.rawRepresentation), random: Self.random())
        let responderHandshake = SessionHandshake(publicKey: Array(responderKey.publicKey.rawRepresentation), random: Self.random())
        initiator = try SessionKeys(
            role: .initiator, privateKey: initiatorKey, local: initiatorHandshake, remote: responderHandshake, passphrase: initiatorPassphrase)
        responder = try SessionKeys(
            role: .responder, privateKey: responderKey, local: responderHandshake, remote: initiatorHandshake, passphrase: responderPassphrase)
    }

    /// 32 random bytes.
    static func random() -> [UInt8] {
        (0..<32).map { _ in UInt8.random(in: .min ... .max) }
    }
}
