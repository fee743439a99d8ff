/// One 20 ms voice frame as the relay forwards it: a 7-byte header and an Opus packet.
///
/// The relay treats the bytes as opaque. Layout, big-endian:
///
/// | offset | size | field |
/// |---|---|---|
/// | 0 | 1 | version (high 4 bits, currently 1) and flags (low 4 bits: bit 0 = speaking; bits 1–3 must be 0) |
/// | 1 | 2 | sequence number, u16, +1 per packet sent, wrapping |
/// | 3 | 4 | timestamp, u32, in 20 ms frames since the stream began, wrapping; frames not sent (DTX) still count |
/// | 7 | 1…1275 | one Opus packet of one 20 ms frame |
///
/// Sequence numbers tell loss from silence: a timestamp gap with consecutive sequence numbers is a DTX gap
/// (nothing was sent), a gap in sequence numbers is loss.
public struct VoicePacket: Sendable, Equatable {
    /// The layout version this type writes and reads.
    public static let version: UInt8 = 1
    /// The header length in bytes.
    public static let headerLength = 7
    /// The largest Opus packet (RFC 6716 §3.4, R2).
    public static let maxOpusLength = 1275

    /// Whether the sender's voice activity detector heard speech in this frame.
    public var speaking: Bool
    /// The packet's sequence number, one more than the previous packet sent.
    public var sequence: UInt16
    /// The frame's position in the stream, in 20 ms frames.
    public var timestamp: UInt32
    /// The Opus packet (1…1275 bytes).
    public var opus: [UInt8]

    /// Creates a packet; `opus` must hold 1…1275 bytes.
    public init(speaking: Bool, sequence: UInt16, timestamp: UInt32, opus: [UInt8]) throws(VoiceError) {
        guard (1...Self.maxOpusLength).contains(opus.count) else {
            throw VoiceError(.invalidArgument, "an Opus packet holds 1…\(Self.maxOpusLength) bytes, not \(opus.count)")
        }
        self.speaking = speaking
        self.sequence = sequence
        self.timestamp = timestamp
        self.opus = opus
    }

    /// Parses the wire bytes, rejecting a wrong version, reserved flags, or a length outside 8…1282 bytes.
    public init(bytes: some Collection<UInt8>) throws(VoiceError) {
        let b = Array(bytes)
        guard b.count > Self.headerLength else {
            throw VoiceError(.malformedPacket, "a voice packet is at least \(Self.headerLength + 1) bytes (header and Opus data), not \(b.count)")
        }
        guard b.count - Self.headerLength <= Self.maxOpusLength else {
            throw VoiceError(.malformedPacket, "a voice packet carries at most \(Self.maxOpusLength) Opus bytes, not \(b.count - Self.headerLength)")
        }
        let version = b[0] >> 4
        guard version == Self.version else {
            throw VoiceError(.malformedPacket, "voice packet version \(version) is not supported; only version \(Self.version) is")
        }
        guard b[0] & 0x0E == 0 else {
            throw VoiceError(.malformedPacket, "voice packet flags 0x\(String(b[0] & 0x0F, radix: 16)) set reserved bits; only bit 0 (speaking) is defined")
        }
        speaking = b[0] & 0x01 != 0
        sequence = UInt16(b[1]) << 8 | UInt16(b[2])
        timestamp = UInt32(b[3]) << 24 | UInt32(b[4]) << 16 | UInt32(b[5]) << 8 | UInt32(b[6])
        opus = Array(b[Self.headerLength...])
    }

    /// The wire bytes: header then Opus data.
    public var bytes: [UInt8] {
        var b: [UInt8] = []
        b.reserveCapacity(Self.headerLength + opus.count)
        b.append(Self.version << 4 | (speaking ? 1 : 0))
        b.append(UInt8(sequence >> 8))
        b.append(UInt8(sequence & 0xFF))
        b.append(UInt8(timestamp >> 24))
        b.append(UInt8(timestamp >> 16 & 0xFF))
        b.append(UInt8(timestamp >> 8 & 0xFF))
        b.append(UInt8(timestamp & 0xFF))
        b.append(contentsOf: opus)
        return b
    }
}
