import CRelayAEAD
import NIOCore

/// Sealing and opening where the datagram lies — in a receive slot, in a send buffer — for the per-datagram paths
/// of the relay and the SDK: no buffer is allocated and nothing is copied. Same wire format and rules as the
/// `ByteBuffer` forms, which remain for everything else.
extension RelayDatagram {
    /// Reads the clear header of the datagram in `bytes` without authenticating; nil if shorter than a sealed empty
    /// body or of an unknown kind.
    public static func peekHeader(_ bytes: UnsafeRawBufferPointer) -> RelayDatagramHeader? {
        guard bytes.count >= headerSize + tagSize, let kind = RelayDatagramKind(rawValue: bytes[0]) else { return nil }
        return RelayDatagramHeader(
            kind: kind, connectionID: UInt64(bigEndian: bytes.loadUnaligned(fromByteOffset: 1, as: UInt64.self)),
            counter: UInt64(bigEndian: bytes.loadUnaligned(fromByteOffset: 9, as: UInt64.self)))
    }

    /// Authenticates the datagram in `datagram` (whose header is `header`, from `peekHeader`) and decrypts its body
    /// where it lies; returns the body, a part of `datagram`, or nil when the datagram is too long or does not
    /// authenticate. Like `open`, it leaves the direction check to the caller.
    public static func openInPlace(
        _ datagram: UnsafeMutableRawBufferPointer, header: RelayDatagramHeader, key: RelayKey
    ) -> UnsafeMutableRawBufferPointer? {
        guard datagram.count >= headerSize + tagSize, datagram.count <= maximumSize else { return nil }
        let bodyCount = datagram.count - headerSize - tagSize
        let body = UnsafeMutableRawBufferPointer(rebasing: datagram[headerSize..<(headerSize + bodyCount)])
        guard let context = key.cipher.context else {
            // swift-crypto: through a buffer, then the plaintext back in place.
            guard let (_, opened) = try? open(ByteBuffer(bytes: UnsafeRawBufferPointer(datagram)), key: key) else { return nil }
            opened.withUnsafeReadableBytes { body.copyMemory(from: $0) }
            return body
        }
        let base = datagram.baseAddress!.assumingMemoryBound(to: UInt8.self)
        var written = 0
        let opened = header.withNonce { nonce in
            ogk_relay_aead_open(context, base + headerSize, &written, bodyCount, nonce, base + headerSize, bodyCount + tagSize, base, headerSize)
        }
        return opened == 1 && written == bodyCount ? body : nil
    }

    /// Seals in place: writes `header` at the start of `datagram`, encrypts the `bodyCount` bytes that follow it
    /// where they lie and writes the tag after them. Returns the datagram's length, `headerSize + bodyCount +
    /// tagSize`, which `datagram` must hold. The caller keeps to `seal`'s rules (size, never a repeated counter).
    public static func sealInPlace(
        _ header: RelayDatagramHeader, bodyCount: Int, key: RelayKey, in datagram: UnsafeMutableRawBufferPointer
    ) -> Int {
        let length = headerSize + bodyCount + tagSize
        precondition(datagram.count >= length, "a relay datagram needs \(length) bytes")
        datagram.storeBytes(of: header.kind.rawValue, toByteOffset: 0, as: UInt8.self)
        datagram.storeBytes(of: header.connectionID.bigEndian, toByteOffset: 1, as: UInt64.self)
        datagram.storeBytes(of: header.counter.bigEndian, toByteOffset: 9, as: UInt64.self)
        let body = UnsafeRawBufferPointer(rebasing: datagram[headerSize..<(headerSize + bodyCount)])
        guard let context = key.cipher.context else {
            // swift-crypto: seal into a buffer, then copy the result over the datagram.
            var sealed = ByteBuffer()
            seal(header, body: ByteBuffer(bytes: body), key: key, into: &sealed)
            sealed.withUnsafeReadableBytes { UnsafeMutableRawBufferPointer(rebasing: datagram[..<length]).copyMemory(from: $0) }
            return length
        }
        let base = datagram.baseAddress!.assumingMemoryBound(to: UInt8.self)
        var written = 0
        let sealed = header.withNonce { nonce in
            ogk_relay_aead_seal(context, base + headerSize, &written, bodyCount + tagSize, nonce, base + headerSize, bodyCount, base, headerSize)
        }
        // Sealing fails only for an output too small, and exactly enough is given.
        precondition(sealed == 1 && written == bodyCount + tagSize, "ChaCha20-Poly1305 seal failed")
        return length
    }

    /// Bytes of a sealed `serverData` datagram carrying `payloadCount` bytes.
    public static func serverDataSize(payloadCount: Int) -> Int {
        headerSize + 1 + payloadCount + tagSize
    }

    /// Writes and seals a `serverData` datagram — the sender's member index, then `payload` — at the start of
    /// `space` (at least `serverDataSize(payloadCount:)` bytes); returns its length.
    public static func sealServerData(
        _ header: RelayDatagramHeader, sender: UInt8, payload: UnsafeRawBufferPointer, key: RelayKey, in space: UnsafeMutableRawBufferPointer
    ) -> Int {
        space.storeBytes(of: sender, toByteOffset: headerSize, as: UInt8.self)
        UnsafeMutableRawBufferPointer(rebasing: space[(headerSize + 1)...]).copyMemory(from: payload)
        return sealInPlace(header, bodyCount: 1 + payload.count, key: key, in: space)
    }

    /// Bytes of a sealed `clientData` datagram to `recipientCount` recipients carrying `payloadCount` bytes.
    public static func clientDataSize(recipientCount: Int, payloadCount: Int) -> Int {
        headerSize + 1 + recipientCount + payloadCount + tagSize
    }

    /// Writes and seals a `clientData` datagram — the recipient count, the recipients' member indices (none: every
    /// other member), then `payload` — at the start of `space` (at least `clientDataSize` bytes); returns its length.
    /// Traps on more than 255 recipients: the caller keeps within them.
    public static func sealClientData(
        _ header: RelayDatagramHeader, recipients: [UInt8], payload: UnsafeRawBufferPointer, key: RelayKey,
        in space: UnsafeMutableRawBufferPointer
    ) -> Int {
        precondition(recipients.count <= Int(UInt8.max), "more than 255 relay recipients")
        space.storeBytes(of: UInt8(recipients.count), toByteOffset: headerSize, as: UInt8.self)
        recipients.withUnsafeBytes { UnsafeMutableRawBufferPointer(rebasing: space[(headerSize + 1)...]).copyMemory(from: $0) }
        UnsafeMutableRawBufferPointer(rebasing: space[(headerSize + 1 + recipients.count)...]).copyMemory(from: payload)
        return sealInPlace(header, bodyCount: 1 + recipients.count + payload.count, key: key, in: space)
    }

    /// Reads an opened `clientData` body where it lies: the recipients' member indices and the payload, both parts
    /// of `body`; nil when the recipient count runs past the end.
    public static func readClientDataBody(
        _ body: UnsafeRawBufferPointer
    ) -> (recipients: UnsafeRawBufferPointer, payload: UnsafeRawBufferPointer)? {
        guard let count = body.first.map(Int.init), body.count >= 1 + count else { return nil }
        return (UnsafeRawBufferPointer(rebasing: body[1..<(1 + count)]), UnsafeRawBufferPointer(rebasing: body[(1 + count)...]))
    }

    /// Reads an opened `serverData` body where it lies: the sender's member index and the payload (a part of
    /// `body`); nil when empty.
    public static func readServerDataBody(_ body: UnsafeRawBufferPointer) -> (sender: UInt8, payload: UnsafeRawBufferPointer)? {
        guard let sender = body.first else { return nil }
        return (sender, UnsafeRawBufferPointer(rebasing: body[1...]))
    }
}

extension RelayDatagramHeader {
    /// Calls `body` with the header's 12-byte nonce.
    func withNonce<Result>(_ body: (UnsafePointer<UInt8>) -> Result) -> Result {
        var nonce: (UInt32, UInt32, UInt32) = (0, 0, 0)
        withUnsafeMutableBytes(of: &nonce) { writeNonce(into: $0) }
        return withUnsafeBytes(of: nonce) { body($0.baseAddress!.assumingMemoryBound(to: UInt8.self)) }
    }
}
