import Crypto
import NIOCore
import OpenGameKitSessionWire

/// The secure channel of one session connection, on its receiving side: this side's handshake, the key agreement
/// when the peer's handshake arrives, the peer's confirmation record, then every sealed record opened into a
/// ``SessionFrame``.
///
/// Each side sends its ``handshake`` as soon as the connection is up, and its empty confirmation record as soon as it
/// has the keys (``Event/keysAgreed(_:)`` hands over the sealer for it and for every frame after it). Frames are
/// reported only after the peer's confirmation opened, so nothing from a peer without the same keys — another
/// passphrase, or someone in the middle altering the handshake — ever reaches the session. After an error the caller
/// closes the connection and calls nothing more.
struct SessionChannelSecurity: Sendable {
    /// What a received record meant.
    enum Event: Sendable {
        /// The peer's handshake arrived and the keys are agreed: send the confirmation record, then the frames, with
        /// this sealer.
        case keysAgreed(SessionRecordSealer)
        /// The peer's confirmation record opened: the channel is secure, and its datagrams use these keys.
        case confirmed(SessionDatagramKeys)
        /// A frame from the peer.
        case frame(SessionFrame)
    }

    /// This side's end of the connection.
    let role: SessionKeys.Role
    /// The handshake this side sends first.
    let handshake: SessionHandshake

    private let passphrase: SessionPassphrase?
    /// This side's ephemeral key, until the peer's handshake arrives.
    private var privateKey: Curve25519.KeyAgreement.PrivateKey?
    /// Opens the peer's records, once the keys are agreed.
    private var opener: SessionRecordOpener?
    /// The datagram keys, until the peer's confirmation record opens.
    private var pendingDatagramKeys: SessionDatagramKeys?

    /// A fresh channel: a new ephemeral key and random for this connection.
    init(role: SessionKeys.Role, passphrase: SessionPassphrase?) {
        let privateKey = Curve25519.KeyAgreement.PrivateKey()
        var generator = SystemRandomNumberGenerator()
        let random = (0..<32).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
        self.role = role
        self.passphrase = passphrase
        self.privateKey = privateKey
        handshake = SessionHandshake(publicKey: Array(privateKey.publicKey.rawRepresentation), random: random)
    }

    /// Takes the body of the next record from the peer. Throws what is wrong with it; the connection must then close.
    mutating func receive(_ record: ByteBuffer) throws(SessionProtocolError) -> Event {
        if let privateKey {
            let keys = try SessionKeys(
                role: role, privateKey: privateKey, local: handshake, remote: SessionHandshake(body: record), passphrase: passphrase)
            self.privateKey = nil
            opener = keys.recordOpener
            pendingDatagramKeys = keys.datagrams
            return .keysAgreed(keys.recordSealer)
        }
        guard opener != nil else { throw .unexpectedFrame }
        let plaintext = try opener!.open(record)
        if let keys = pendingDatagramKeys {
            guard plaintext.readableBytes == 0 else { throw .unexpectedFrame }
            pendingDatagramKeys = nil
            return .confirmed(keys)
        }
        return .frame(try SessionFrame.decode(body: plaintext))
    }
}
