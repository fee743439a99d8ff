import Crypto
import Foundation
import GameCenterProtocol
import OpenGameKitSessionWire

/// The keys of one session connection, agreed in its handshake: one for the records each way and one for the
/// unreliable datagrams each way, and the id each side's datagrams are addressed with.
///
/// The X25519 secret of the two handshakes' ephemeral keys goes through HKDF-SHA256 with the stretched passphrase
/// as salt (no passphrase: an empty salt) and, as info, `"OpenGameKit session 2"` followed by the transcript (the
/// initiator's handshake body, then the responder's). The 144 bytes it gives are, in order: the initiator→responder
/// record key, the responder→initiator record key, the initiator→responder datagram key, the responder→initiator
/// datagram key (32 bytes each), then the initiator's and the responder's datagram ids (8 bytes each, big-endian:
/// the id the other side puts on the datagrams it sends them).
struct SessionKeys: Sendable {
    /// Which end of the TCP connection a side is.
    enum Role: Sendable {
        /// The side that connected (it sends the hello).
        case initiator
        /// The side that accepted the TCP connection.
        case responder
    }

    /// The HKDF info's prefix, before the transcript.
    static let label = Array("OpenGameKit session 2".utf8)

    /// Seals the records this side sends.
    var recordSealer: SessionRecordSealer
    /// Opens the records this side receives.
    var recordOpener: SessionRecordOpener
    /// Seals and opens the datagrams.
    var datagrams: SessionDatagramKeys

    /// Agrees on the keys as `role`, from this side's private key and handshake and the peer's handshake. Throws
    /// ``SessionProtocolError/malformedHandshake`` for a peer key that gives the all-zero secret.
    init(
        role: Role, privateKey: Curve25519.KeyAgreement.PrivateKey, local: SessionHandshake, remote: SessionHandshake,
        passphrase: SessionPassphrase?
    ) throws(SessionProtocolError) {
        let secret: SharedSecret
        do {
            secret = try privateKey.sharedSecretFromKeyAgreement(with: Curve25519.KeyAgreement.PublicKey(rawRepresentation: remote.publicKey))
        } catch {
            throw .malformedHandshake
        }
        guard !secret.withUnsafeBytes({ $0.allSatisfy { $0 == 0 } }) else { throw .malformedHandshake }
        let transcript = role == .initiator ? local.body + remote.body : remote.body + local.body
        let salt = passphrase.map { $0.key.withUnsafeBytes { Array($0) } } ?? []
        let material = secret.hkdfDerivedSymmetricKey(using: SHA256.self, salt: salt, sharedInfo: Self.label + transcript, outputByteCount: 144)
        let bytes = material.withUnsafeBytes { Array($0) }
        func cipher(_ index: Int) -> ChaChaPolyCipher {
            ChaChaPolyCipher(key: SymmetricKey(data: bytes[(32 * index)..<(32 * index + 32)]))
        }
        func datagramID(_ index: Int) -> UInt64 {
            bytes[(128 + 8 * index)..<(136 + 8 * index)].reduce(0) { $0 << 8 | UInt64($1) }
        }
        let (mine, theirs) = role == .initiator ? (0, 1) : (1, 0)
        recordSealer = SessionRecordSealer(cipher: cipher(mine))
        recordOpener = SessionRecordOpener(cipher: cipher(theirs))
        datagrams = SessionDatagramKeys(
            sealer: DatagramSealer(cipher: cipher(2 + mine), receiverID: datagramID(theirs)),
            opener: DatagramOpener(cipher: cipher(2 + theirs), receiverID: datagramID(mine)))
    }
}
