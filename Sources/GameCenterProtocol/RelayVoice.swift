import NIOCore

/// Where a member stands in one of a match's voice channels.
///
/// Travels as one byte; any other byte value is rejected with `RelayWireError.invalidValue`.
public enum VoiceChannelMembership: UInt8, Sendable {
    /// Not in the channel (left it, or never joined).
    case none = 0
    /// In the channel (one of its `playerIDs`, may talk) but not receiving its voice (`GKVoiceChat.stop()`).
    case joined = 1
    /// In the channel and receiving its voice (`GKVoiceChat.start()`): the relay forwards the channel to it.
    case listening = 2
}

/// The voice limits the relay enforces and the SDK checks before sending.
public enum VoiceLimits {
    /// A channel name: 1…32 UTF-8 bytes, no control characters.
    public static let channelNameBytes = 1...32
    /// Channels one member may be in at once.
    public static let maximumChannelsPerMember = 8
    /// Largest voice payload (one encoded audio packet with its header), in bytes: far above Opus at 20 ms frames.
    public static let maximumPayloadBytes = 512
    /// Voice packets a member may send per second on average: 50 per channel at 20 ms frames for a few channels.
    public static let packetsPerSecond = 200.0
    /// Voice packets a member may send in one burst (a network stall releasing queued audio).
    public static let burstPackets = 400.0

    /// Why `name` cannot name a voice channel, or nil when it can.
    public static func problem(withChannelName name: String) -> String? {
        let bytes = name.utf8.count
        guard channelNameBytes.contains(bytes) else {
            return "a voice channel name is \(channelNameBytes.lowerBound) to \(channelNameBytes.upperBound) UTF-8 bytes; this one is \(bytes)"
        }
        guard !name.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
            return "a voice channel name may not contain control characters"
        }
        return nil
    }
}

// MARK: - Reading and writing voice fields

extension ByteBuffer {
    /// Writes a channel name: length u8, then its UTF-8 bytes. The caller keeps it within `VoiceLimits`.
    mutating func writeVoiceChannel(_ name: String) {
        let byteCount = name.utf8.count
        precondition(VoiceLimits.channelNameBytes.contains(byteCount), "voice channel name of \(byteCount) UTF-8 bytes")
        writeInteger(UInt8(byteCount))
        writeString(name)
    }

    /// Reads a channel name (length u8, UTF-8 bytes) and checks it against `VoiceLimits`.
    mutating func readVoiceChannel() throws(RelayWireError) -> String {
        let byteCount = Int(try readRelayInteger(as: UInt8.self))
        let name = try readRelayString(byteCount: byteCount)
        if let problem = VoiceLimits.problem(withChannelName: name) { throw .invalidValue(problem) }
        return name
    }

    /// Reads a membership byte.
    mutating func readVoiceMembership() throws(RelayWireError) -> VoiceChannelMembership {
        let byte = try readRelayInteger(as: UInt8.self)
        guard let membership = VoiceChannelMembership(rawValue: byte) else { throw .invalidValue("voice channel membership \(byte)") }
        return membership
    }
}

extension RelayDatagram {
    /// Builds a `clientVoice` body: channel name length u8, the name, then the voice payload.
    public static func clientVoiceBody(channel: String, payload: ByteBuffer) -> ByteBuffer {
        var body = ByteBufferAllocator().buffer(capacity: 1 + channel.utf8.count + payload.readableBytes)
        body.writeVoiceChannel(channel)
        body.writeImmutableBuffer(payload)
        return body
    }

    /// Reads an opened `clientVoice` body where it lies: the channel name and the payload (a part of `body`); nil
    /// when the name is malformed or outside `VoiceLimits`.
    public static func readClientVoiceBody(_ body: UnsafeRawBufferPointer) -> (channel: String, payload: UnsafeRawBufferPointer)? {
        guard let length = body.first.map(Int.init), body.count >= 1 + length,
            let channel = String(validating: UnsafeRawBufferPointer(rebasing: body[1..<(1 + length)]), as: UTF8.self),
            VoiceLimits.problem(withChannelName: channel) == nil
        else { return nil }
        return (channel, UnsafeRawBufferPointer(rebasing: body[(1 + length)...]))
    }

    /// Bytes of a sealed `serverVoice` datagram on `channel` carrying `payloadCount` bytes.
    public static func serverVoiceSize(channel: String, payloadCount: Int) -> Int {
        headerSize + 2 + channel.utf8.count + payloadCount + tagSize
    }

    /// Writes and seals a `serverVoice` datagram — the sender's member index, the channel name (length u8, bytes),
    /// then `payload` — at the start of `space` (at least `serverVoiceSize` bytes); returns its length.
    public static func sealServerVoice(
        _ header: RelayDatagramHeader, sender: UInt8, channel: String, payload: UnsafeRawBufferPointer, key: RelayKey,
        in space: UnsafeMutableRawBufferPointer
    ) -> Int {
        var name = channel
        let nameCount = name.withUTF8 { name in
            space.storeBytes(of: sender, toByteOffset: headerSize, as: UInt8.self)
            space.storeBytes(of: UInt8(name.count), toByteOffset: headerSize + 1, as: UInt8.self)
            UnsafeMutableRawBufferPointer(rebasing: space[(headerSize + 2)...]).copyMemory(from: UnsafeRawBufferPointer(name))
            return name.count
        }
        UnsafeMutableRawBufferPointer(rebasing: space[(headerSize + 2 + nameCount)...]).copyMemory(from: payload)
        return sealInPlace(header, bodyCount: 2 + nameCount + payload.count, key: key, in: space)
    }

    /// Bytes of a sealed `clientVoice` datagram on `channel` carrying `payloadCount` bytes.
    public static func clientVoiceSize(channel: String, payloadCount: Int) -> Int {
        headerSize + 1 + channel.utf8.count + payloadCount + tagSize
    }

    /// Writes and seals a `clientVoice` datagram — the channel name (length u8, bytes), then `payload` — at the start
    /// of `space` (at least `clientVoiceSize` bytes); returns its length.
    public static func sealClientVoice(
        _ header: RelayDatagramHeader, channel: String, payload: UnsafeRawBufferPointer, key: RelayKey, in space: UnsafeMutableRawBufferPointer
    ) -> Int {
        var name = channel
        let nameCount = name.withUTF8 { name in
            space.storeBytes(of: UInt8(name.count), toByteOffset: headerSize, as: UInt8.self)
            UnsafeMutableRawBufferPointer(rebasing: space[(headerSize + 1)...]).copyMemory(from: UnsafeRawBufferPointer(name))
            return name.count
        }
        UnsafeMutableRawBufferPointer(rebasing: space[(headerSize + 1 + nameCount)...]).copyMemory(from: payload)
        return sealInPlace(header, bodyCount: 1 + nameCount + payload.count, key: key, in: space)
    }

    /// Reads an opened `serverVoice` body where it lies: the sender's member index, the channel name and the
    /// payload (a part of `body`); nil when malformed.
    public static func readServerVoiceBody(
        _ body: UnsafeRawBufferPointer
    ) -> (sender: UInt8, channel: String, payload: UnsafeRawBufferPointer)? {
        guard let sender = body.first, let rest = readClientVoiceBody(UnsafeRawBufferPointer(rebasing: body[1...])) else { return nil }
        return (sender, rest.channel, rest.payload)
    }
}
