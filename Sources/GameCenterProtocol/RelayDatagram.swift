import Crypto
import NIOCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What a relay datagram carries.
///
/// The kind byte is the datagram's first byte and part of the authenticated data, so relabelling a datagram
/// makes it fail to open.
public enum RelayDatagramKind: UInt8, Sendable {
    /// Device to server: recipient count u8, that many member indices, payload; no recipients means every
    /// other member.
    case clientData = 0x21
    /// Device to server, empty body: "can UDP reach you?". The server answers with `serverProbeAck`.
    case clientProbe = 0x22
    /// Server to device: sender index u8, payload.
    case serverData = 0x23
    /// Server to device, empty body: the answer to `clientProbe`.
    case serverProbeAck = 0x24
    /// Device to server: channel name length u8, the name, voice payload (opaque to the server). It goes to the
    /// members listening to the channel.
    case clientVoice = 0x25
    /// Server to device: sender index u8, channel name length u8, the name, voice payload.
    case serverVoice = 0x26
    /// Device to device on a match's direct path, empty body: "can you hear me here?". Answered with
    /// `peerProbeAck` to where it came from. The header's connection id is the sender's stream (``PeerOffer``).
    case peerProbe = 0x31
    /// Device to device, empty body: the answer to a `peerProbe`.
    case peerProbeAck = 0x32
    /// Device to device: an unreliable message's payload.
    case peerData = 0x33
    /// Device to device: a reliable message: its number in the sender's messages to the receiver u64, the payload.
    case peerReliable = 0x34
    /// Device to device: the number of the reliable message that arrived u64, then the number through which every
    /// message arrived u64.
    case peerAck = 0x35

    /// Client kinds travel device→server (nonce direction 0), server kinds server→device (direction 1).
    public var fromServer: Bool {
        switch self {
        case .clientData, .clientProbe, .clientVoice: false
        case .serverData, .serverProbeAck, .serverVoice: true
        // Each direction of a direct path has a key of its own, so the direction bit stays 0.
        case .peerProbe, .peerProbeAck, .peerData, .peerReliable, .peerAck: false
        }
    }

    /// Whether the datagram travels between two devices of a match, not through the relay.
    public var isPeer: Bool { rawValue >= 0x31 }
}

/// The clear header of a relay datagram.
///
/// Its 17 bytes (kind u8, connectionID u64, counter u64) are sent unencrypted but authenticated.
public struct RelayDatagramHeader: Sendable, Equatable {
    /// What the datagram carries, and so its direction.
    public var kind: RelayDatagramKind
    /// The relay connection whose key sealed the datagram, from the welcome frame.
    public var connectionID: UInt64
    /// Per connection and direction, strictly increasing from 1 by its sender; it makes the nonce, so never reuse
    /// one under the same key. Receivers check it with a `ReplayWindow`.
    public var counter: UInt64

    /// Creates a header.
    public init(kind: RelayDatagramKind, connectionID: UInt64, counter: UInt64) {
        self.kind = kind
        self.connectionID = connectionID
        self.counter = counter
    }

    /// Writes the 12-byte nonce into the start of `bytes`: direction as UInt32, then the counter as UInt64,
    /// both big-endian.
    func writeNonce(into bytes: UnsafeMutableRawBufferPointer) {
        bytes.storeBytes(of: UInt32(kind.fromServer ? 1 : 0).bigEndian, toByteOffset: 0, as: UInt32.self)
        bytes.storeBytes(of: counter.bigEndian, toByteOffset: 4, as: UInt64.self)
    }

    /// The nonce as swift-crypto takes it.
    var nonce: ChaChaPoly.Nonce {
        var bytes: (UInt32, UInt32, UInt32) = (0, 0, 0)
        withUnsafeMutableBytes(of: &bytes) { writeNonce(into: $0) }
        // Twelve bytes are always a valid ChaCha20-Poly1305 nonce.
        return withUnsafeBytes(of: bytes) { try! ChaChaPoly.Nonce(data: $0) }
    }
}

/// Seals and opens relay datagrams: `kind u8 | connectionID u64 | counter u64 | ChaCha20-Poly1305(body) | tag 16`.
///
/// Nonce (12 bytes) = direction as UInt32 (0 client→server, 1 server→client) followed by the counter as UInt64,
/// both big-endian; the 17 header bytes are the additional authenticated data. A receiver finds the key with
/// `peekHeader`, opens, checks the kind's direction, then checks the counter with its `ReplayWindow`.
public enum RelayDatagram {
    /// Bytes of the clear header: kind, connection id, counter.
    public static let headerSize = 17
    /// Bytes of the Poly1305 tag that ends every datagram.
    public static let tagSize = 16
    /// Largest datagram a peer may send: header + 1 + 255 recipient bytes + Limits-size payload (1000) + tag.
    public static let maximumSize = 17 + 1 + 255 + 1000 + 16

    private static let nonceSize = 12

    /// Reads the clear header without authenticating (to find the key); nil if too short or unknown kind.
    ///
    /// "Too short" means shorter than `headerSize + tagSize`, the size of a sealed empty body. Nothing in the
    /// result is trustworthy until `open` succeeds.
    public static func peekHeader(_ datagram: ByteBuffer) -> RelayDatagramHeader? {
        guard datagram.readableBytes >= headerSize + tagSize,
            let kindByte = datagram.getInteger(at: datagram.readerIndex, as: UInt8.self),
            let kind = RelayDatagramKind(rawValue: kindByte),
            let connectionID = datagram.getInteger(at: datagram.readerIndex + 1, as: UInt64.self),
            let counter = datagram.getInteger(at: datagram.readerIndex + 9, as: UInt64.self)
        else { return nil }
        return RelayDatagramHeader(kind: kind, connectionID: connectionID, counter: counter)
    }

    /// Writes a sealed datagram carrying `body` into `buffer` (appends).
    ///
    /// The caller keeps `body` within the limits a receiver accepts (the whole datagram at most `maximumSize`)
    /// and never repeats a counter under the same key and direction: a repeated nonce breaks ChaCha20-Poly1305.
    public static func seal(
        _ header: RelayDatagramHeader,
        body: ByteBuffer,
        key: RelayKey,
        into buffer: inout ByteBuffer
    ) {
        let length = headerSize + body.readableBytes + tagSize
        if key.cipher.context != nil {
            // The kept context seals where the bytes lie: the body is copied after the header's room once.
            buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: length) { space in
                let datagram = UnsafeMutableRawBufferPointer(rebasing: space[..<length])
                body.withUnsafeReadableBytes { UnsafeMutableRawBufferPointer(rebasing: datagram[headerSize...]).copyMemory(from: $0) }
                return sealInPlace(header, bodyCount: body.readableBytes, key: key, in: datagram)
            }
            return
        }
        buffer.reserveCapacity(minimumWritableBytes: length)
        let headerOffset = buffer.writerIndex - buffer.readerIndex
        buffer.writeInteger(header.kind.rawValue)
        buffer.writeInteger(header.connectionID)
        buffer.writeInteger(header.counter)
        let nonce = header.nonce
        // Sealing only fails for a key that is not 256 bits, and a RelayKey always is.
        let sealed = try! buffer.withUnsafeReadableBytes { written in
            try body.withUnsafeReadableBytes { plaintext in
                try ChaChaPoly.seal(
                    plaintext,
                    using: key.symmetricKey,
                    nonce: nonce,
                    authenticating: UnsafeRawBufferPointer(rebasing: written[headerOffset...])
                )
            }
        }
        // `combined` is nonce | ciphertext | tag; the datagram needs the last two, which lie side by side.
        sealed.combined.withUnsafeBytes { combined in
            _ = buffer.writeBytes(UnsafeRawBufferPointer(rebasing: combined.dropFirst(nonceSize)))
        }
    }

    /// Authenticates and decrypts; throws authenticationFailed on any tampering, wrong key or wrong direction,
    /// truncated when shorter than header+tag, invalidValue when longer than maximumSize.
    ///
    /// An unknown kind byte also throws authenticationFailed: no peer seals one. The kind byte fixes the nonce's
    /// direction, so a relabelled datagram fails; but a genuine datagram of the receiver's own sending direction
    /// still opens, so a receiver must drop kinds it would send itself (check `header.kind.fromServer`), or it
    /// would accept its own datagrams reflected back at it. The body is a fresh buffer.
    public static func open(
        _ datagram: ByteBuffer,
        key: RelayKey
    ) throws(RelayWireError) -> (header: RelayDatagramHeader, body: ByteBuffer) {
        let size = datagram.readableBytes
        guard size >= headerSize + tagSize else { throw .truncated }
        guard size <= maximumSize else { throw .invalidValue("datagram longer than \(maximumSize) bytes") }
        guard let header = peekHeader(datagram) else { throw .authenticationFailed }
        if key.cipher.context != nil {
            // Opened in place in a copy, whose body part is returned.
            var copy = ByteBuffer()
            copy.writeImmutableBuffer(datagram)
            let opened = copy.withUnsafeMutableReadableBytes { openInPlace($0, header: header, key: key) != nil }
            guard opened else { throw .authenticationFailed }
            return (header, copy.getSlice(at: copy.readerIndex + headerSize, length: size - headerSize - tagSize)!)
        }
        // SealedBox(nonce:ciphertext:tag:) concatenates with several reallocations; building its
        // nonce | ciphertext | tag layout in one allocation saves about a fifth of what opening costs.
        var combined = Data(count: nonceSize + size - headerSize)
        combined.withUnsafeMutableBytes { combined in
            header.writeNonce(into: combined)
            datagram.withUnsafeReadableBytes { bytes in
                UnsafeMutableRawBufferPointer(rebasing: combined[nonceSize...])
                    .copyMemory(from: UnsafeRawBufferPointer(rebasing: bytes[headerSize...]))
            }
        }
        let plaintext: Data
        do {
            let box = try ChaChaPoly.SealedBox(combined: combined)
            plaintext = try datagram.withUnsafeReadableBytes { bytes in
                try ChaChaPoly.open(
                    box,
                    using: key.symmetricKey,
                    authenticating: UnsafeRawBufferPointer(rebasing: bytes[..<headerSize])
                )
            }
        } catch {
            throw .authenticationFailed
        }
        let body = plaintext.withUnsafeBytes { ByteBuffer(bytes: $0) }
        return (header, body)
    }

    /// Builds a `clientData` body: recipient count u8, the indices, then the payload.
    ///
    /// No recipients means every other member. Traps on more than 255 recipients: the caller keeps within them.
    public static func clientDataBody(recipients: [UInt8], payload: ByteBuffer) -> ByteBuffer {
        var body = ByteBufferAllocator().buffer(capacity: 1 + recipients.count + payload.readableBytes)
        body.writeRelayRecipients(recipients)
        body.writeImmutableBuffer(payload)
        return body
    }

    /// Reads a `clientData` body; the payload is the rest, a slice of `body`.
    public static func readClientDataBody(
        _ body: ByteBuffer
    ) throws(RelayWireError) -> (recipients: [UInt8], payload: ByteBuffer) {
        var body = body
        let recipients = try body.readRelayRecipients()
        return (recipients, body.readRelayPayload())
    }

    /// Builds a `serverData` body: the sender's member index, then the payload.
    public static func serverDataBody(sender: UInt8, payload: ByteBuffer) -> ByteBuffer {
        var body = ByteBufferAllocator().buffer(capacity: 1 + payload.readableBytes)
        body.writeInteger(sender)
        body.writeImmutableBuffer(payload)
        return body
    }

    /// Reads a `serverData` body; the payload is the rest, a slice of `body`.
    public static func readServerDataBody(
        _ body: ByteBuffer
    ) throws(RelayWireError) -> (sender: UInt8, payload: ByteBuffer) {
        var body = body
        let sender = try body.readRelayInteger(as: UInt8.self)
        return (sender, body.readRelayPayload())
    }
}
