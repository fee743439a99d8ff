import NIOCore
import OpenGameKitSessionWire

/// The record each side sends first, in clear, on a session connection: the protocol version, a fresh X25519 public
/// key and 32 random bytes.
///
/// Body (68 bytes): `"OGK"`, the version (1), the public key (32), the random (32). Both bodies, the initiator's
/// first, are the transcript the connection's keys are bound to (see ``SessionKeys``).
struct SessionHandshake: Equatable, Sendable {
    /// The bytes every handshake starts with, before the version.
    static let magic: [UInt8] = Array("OGK".utf8)
    /// The body's length.
    static let bodyLength = magic.count + 1 + 32 + 32

    /// The sender's protocol version (``SessionLimits/protocolVersion``).
    var version: UInt8
    /// The sender's ephemeral X25519 public key, 32 bytes.
    var publicKey: [UInt8]
    /// 32 random bytes from the sender.
    var random: [UInt8]

    /// A handshake; `publicKey` and `random` have 32 bytes each.
    init(version: UInt8 = SessionLimits.protocolVersion, publicKey: [UInt8], random: [UInt8]) {
        precondition(publicKey.count == 32 && random.count == 32, "a handshake carries 32-byte keys and randoms")
        self.version = version
        self.publicKey = publicKey
        self.random = random
    }

    /// Parses a handshake record's body. Throws ``SessionProtocolError/notAHandshake`` when it does not start with
    /// the magic, ``SessionProtocolError/incompatibleVersion(_:)`` for another version (whatever its length), and
    /// ``SessionProtocolError/malformedHandshake`` for a wrong length.
    init(body: ByteBuffer) throws(SessionProtocolError) {
        var body = body
        guard let magic = body.readBytes(length: Self.magic.count), magic == Self.magic else { throw .notAHandshake }
        guard let version = body.readInteger(as: UInt8.self) else { throw .malformedHandshake }
        guard version == SessionLimits.protocolVersion else { throw .incompatibleVersion(version) }
        guard body.readableBytes == 64, let publicKey = body.readBytes(length: 32), let random = body.readBytes(length: 32) else {
            throw .malformedHandshake
        }
        self.init(version: version, publicKey: publicKey, random: random)
    }

    /// The body's 68 bytes.
    var body: [UInt8] {
        Self.magic + [version] + publicKey + random
    }

    /// Appends the record: the length prefix, then the body.
    func write(to buffer: inout ByteBuffer) {
        buffer.writeInteger(UInt32(Self.bodyLength))
        buffer.writeBytes(body)
    }
}
