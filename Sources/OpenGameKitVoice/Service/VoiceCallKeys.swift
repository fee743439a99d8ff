import Crypto
import GameCenterProtocol

/// The media keys of one call, agreed over the game's channel: each side's ephemeral X25519 key travels in the
/// invitation and the acceptance, and the shared secret goes through HKDF-SHA256 (no salt; as info,
/// `"OpenGameKit voice call 1"`, the call's token, the caller's then the callee's public key). The 80 bytes it gives
/// are the caller→callee key, the callee→caller key (ChaCha20-Poly1305, 32 bytes each), then the caller's and the
/// callee's datagram ids (8 bytes each: the id the other side puts on what it sends them).
struct VoiceCallKeys: Sendable {
    /// The HKDF info's prefix.
    static let label = Array("OpenGameKit voice call 1".utf8)

    /// Seals what this side sends.
    var sealer: VoiceCallSealer
    /// Opens what the other side sends.
    var opener: VoiceCallOpener

    /// Agrees the keys as the caller (`isCaller`) or the callee; nil for a peer key that is not a valid X25519 key
    /// or gives the all-zero secret.
    init?(isCaller: Bool, privateKey: Curve25519.KeyAgreement.PrivateKey, remotePublicKey: [UInt8], token: [UInt8]) {
        guard let remote = try? Curve25519.KeyAgreement.PublicKey(rawRepresentation: remotePublicKey),
            let secret = try? privateKey.sharedSecretFromKeyAgreement(with: remote),
            !secret.withUnsafeBytes({ $0.allSatisfy { $0 == 0 } })
        else { return nil }
        let local = Array(privateKey.publicKey.rawRepresentation)
        let (callerKey, calleeKey) = isCaller ? (local, remotePublicKey) : (remotePublicKey, local)
        let material = secret.hkdfDerivedSymmetricKey(
            using: SHA256.self, salt: [UInt8](), sharedInfo: Self.label + token + callerKey + calleeKey, outputByteCount: 80)
        let bytes = material.withUnsafeBytes { Array($0) }
        func cipher(_ index: Int) -> ChaChaPolyCipher { ChaChaPolyCipher(key: SymmetricKey(data: bytes[(32 * index)..<(32 * index + 32)])) }
        func id(_ index: Int) -> UInt64 { bytes[(64 + 8 * index)..<(72 + 8 * index)].reduce(0) { $0 << 8 | UInt64($1) } }
        let (mine, theirs) = isCaller ? (0, 1) : (1, 0)
        sealer = VoiceCallSealer(cipher: cipher(mine), receiverID: id(theirs))
        opener = VoiceCallOpener(cipher: cipher(theirs), receiverID: id(mine))
    }
}

/// What one call's media datagram carries, sealed.
enum VoiceCallDatagramKind: UInt8, Sendable {
    /// "Can you hear me here?": sent to each of the other side's candidates while looking for a direct path.
    case probe = 1
    /// The answer to a probe, sent back to where it came from.
    case probeAnswer = 2
    /// A voice packet (`VoicePacket`'s bytes).
    case voice = 3
    /// Sent every half second when nothing else was, so each side knows the other is still there.
    case keepAlive = 4
}

/// The layout of a call's media datagram: `"OGV"`, version 1, the receiver's datagram id (8 bytes) and the sender's
/// counter (8 bytes), all in clear and authenticated; then the kind (1 byte) and the payload, encrypted with
/// ChaCha20-Poly1305 (nonce: four zero bytes and the counter), and the 16-byte tag. The same bytes travel on the
/// direct UDP path and through the client's real-time channel.
enum VoiceCallDatagram {
    /// The bytes every datagram starts with.
    static let magic: [UInt8] = Array("OGV".utf8) + [1]
    /// The clear header's length.
    static let headerLength = 20
    /// The largest datagram: a header, a kind, the largest voice packet and a tag.
    static let maxLength = headerLength + 1 + VoicePacket.headerLength + VoicePacket.maxOpusLength + ChaChaPolyCipher.tagSize

    /// The receiver id of a datagram's clear header, not yet authenticated; nil for anything that cannot be one.
    static func receiverID(of bytes: [UInt8]) -> UInt64? {
        guard bytes.count >= headerLength + 1 + ChaChaPolyCipher.tagSize, bytes.count <= maxLength, Array(bytes[0..<4]) == magic else { return nil }
        return bytes[4..<12].reduce(0) { $0 << 8 | UInt64($1) }
    }
}

/// Seals the datagrams one side of a call sends.
struct VoiceCallSealer: Sendable {
    let cipher: ChaChaPolyCipher
    /// The other side's datagram id.
    let receiverID: UInt64
    /// The last counter used (0 before the first).
    private(set) var counter: UInt64 = 0

    init(cipher: ChaChaPolyCipher, receiverID: UInt64) {
        self.cipher = cipher
        self.receiverID = receiverID
    }

    /// The sealed datagram carrying `payload` as `kind`; nil once the counter is spent (never in practice).
    mutating func seal(_ kind: VoiceCallDatagramKind, _ payload: [UInt8] = []) -> [UInt8]? {
        guard counter < .max else { return nil }
        counter += 1
        let header = VoiceCallDatagram.headerLength
        var bytes = [UInt8](repeating: 0, count: header + 1 + payload.count + ChaChaPolyCipher.tagSize)
        bytes.replaceSubrange(0..<4, with: VoiceCallDatagram.magic)
        for i in 0..<8 {
            bytes[4 + i] = UInt8(truncatingIfNeeded: receiverID >> UInt64(56 - 8 * i))
            bytes[12 + i] = UInt8(truncatingIfNeeded: counter >> UInt64(56 - 8 * i))
        }
        bytes[header] = kind.rawValue
        bytes.replaceSubrange((header + 1)..<(header + 1 + payload.count), with: payload)
        let counter = self.counter
        bytes.withUnsafeMutableBytes { all in
            cipher.seal(
                UnsafeMutableRawBufferPointer(rebasing: all[header...]), count: 1 + payload.count, counter: counter,
                authenticating: UnsafeRawBufferPointer(rebasing: all[..<header]))
        }
        return bytes
    }
}

/// Opens the datagrams the other side of a call sends: its key, this side's id, and a replay window.
struct VoiceCallOpener: Sendable {
    let cipher: ChaChaPolyCipher
    /// This side's datagram id.
    let receiverID: UInt64
    private var replay = ReplayWindow()

    init(cipher: ChaChaPolyCipher, receiverID: UInt64) {
        self.cipher = cipher
        self.receiverID = receiverID
    }

    /// The kind and payload of `bytes` if it is addressed here, authenticates, and its counter is new; nil if forged,
    /// altered, replayed, too old or not a datagram of this call.
    mutating func open(_ bytes: [UInt8]) -> (kind: VoiceCallDatagramKind, payload: [UInt8])? {
        guard VoiceCallDatagram.receiverID(of: bytes) == receiverID else { return nil }
        let header = VoiceCallDatagram.headerLength
        let counter = bytes[12..<20].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        var plaintext = [UInt8](repeating: 0, count: bytes.count - header - ChaChaPolyCipher.tagSize)
        let opened = bytes.withUnsafeBytes { all in
            plaintext.withUnsafeMutableBytes { output in
                cipher.open(
                    UnsafeRawBufferPointer(rebasing: all[header...]), into: output, counter: counter,
                    authenticating: UnsafeRawBufferPointer(rebasing: all[..<header]))
            }
        }
        guard opened, let kind = VoiceCallDatagramKind(rawValue: plaintext[0]), replay.accept(counter) else { return nil }
        return (kind, Array(plaintext[1...]))
    }
}
