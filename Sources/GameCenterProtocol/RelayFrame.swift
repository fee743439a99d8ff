import NIOCore

/// Why the server ends a relay connection.
///
/// Travels as one byte in a `closing` frame; any other byte value is rejected with `RelayWireError.invalidValue`.
public enum RelayCloseReason: UInt8, Sendable {
    /// The match is over for everyone.
    case matchEnded = 1
    /// The server heard nothing from the device within the welcome's timeout.
    case timedOut
    /// The device read too slowly and its outgoing queue overflowed.
    case tooSlow
    /// The device sent faster than its rate limit allows.
    case flooding
    /// The member left the match.
    case left
    /// A newer connection of the same member took over.
    case replaced
    /// The device sent a frame the server could not decode.
    case protocolError
}

/// A binary frame the server sends on a relay WebSocket (`/v1/matches/{id}/relay`).
///
/// One WebSocket binary message carries exactly one frame: a type byte, then the case's fields big-endian.
/// Payloads are open-ended: they run to the end of the message and may be empty.
public enum RelayServerFrame: Sendable, Equatable {
    /// Type 0x01: the first frame on every connection.
    case welcome(RelayWelcome)
    /// Type 0x02: a member's state changed. Body: index u8, state u8, id length u8, id.
    case memberState(RelayMember)
    /// Type 0x03: a reliable message from `sender`. Body: seq u64, sender u8, payload.
    case reliable(seq: UInt64, sender: UInt8, payload: ByteBuffer)
    /// Type 0x04: an unreliable message from `sender` that came over the WebSocket. Body: sender u8, payload.
    case unreliable(sender: UInt8, payload: ByteBuffer)
    /// Type 0x05: the server holds the member's reliable messages up to this seq, so they need no resending.
    case ack(UInt64)
    /// Type 0x06: keeps the connection alive. Empty body.
    case heartbeat
    /// Type 0x07: a non-fatal error. Body: GKError code u16, message length u16, message.
    case error(code: UInt16, message: String)
    /// Type 0x08: the server is about to end the connection. Body: reason u8, message length u16, message.
    case closing(RelayCloseReason, message: String)
    /// Type 0x09: a member's place in a voice channel changed (or is told to a new connection). Body: member index
    /// u8, membership u8, channel name length u8, name.
    case voiceChannel(member: UInt8, membership: VoiceChannelMembership, channel: String)
    /// Type 0x0A: voice from `sender` on `channel` that came over the WebSocket (UDP does not reach this device).
    /// Body: sender u8, channel name length u8, name, payload.
    case voice(sender: UInt8, channel: String, payload: ByteBuffer)
    /// Type 0x0B: how to reach member `sender` directly (told again to every new connection). Body: sender u8, the
    /// offer.
    case peerOffer(sender: UInt8, PeerOffer)

    /// Appends the frame's bytes.
    ///
    /// Traps on values the layout cannot carry, which are the caller's to prevent: a message over 65,535 UTF-8
    /// bytes, a player id outside 1 to 255 bytes, a UDP host over 255 bytes, more than 255 members or a voice
    /// channel name outside `VoiceLimits.channelNameBytes`.
    public func write(to buffer: inout ByteBuffer) {
        switch self {
        case .welcome(let welcome):
            buffer.writeInteger(UInt8(0x01))
            welcome.write(to: &buffer)
        case .memberState(let member):
            buffer.writeInteger(UInt8(0x02))
            member.write(to: &buffer)
        case .reliable(let seq, let sender, let payload):
            buffer.writeInteger(UInt8(0x03))
            buffer.writeInteger(seq)
            buffer.writeInteger(sender)
            buffer.writeImmutableBuffer(payload)
        case .unreliable(let sender, let payload):
            buffer.writeInteger(UInt8(0x04))
            buffer.writeInteger(sender)
            buffer.writeImmutableBuffer(payload)
        case .ack(let seq):
            buffer.writeInteger(UInt8(0x05))
            buffer.writeInteger(seq)
        case .heartbeat:
            buffer.writeInteger(UInt8(0x06))
        case .error(let code, let message):
            buffer.writeInteger(UInt8(0x07))
            buffer.writeInteger(code)
            buffer.writeRelayMessage(message)
        case .closing(let reason, let message):
            buffer.writeInteger(UInt8(0x08))
            buffer.writeInteger(reason.rawValue)
            buffer.writeRelayMessage(message)
        case .voiceChannel(let member, let membership, let channel):
            buffer.writeInteger(UInt8(0x09))
            buffer.writeInteger(member)
            buffer.writeInteger(membership.rawValue)
            buffer.writeVoiceChannel(channel)
        case .voice(let sender, let channel, let payload):
            buffer.writeInteger(UInt8(0x0A))
            buffer.writeInteger(sender)
            buffer.writeVoiceChannel(channel)
            buffer.writeImmutableBuffer(payload)
        case .peerOffer(let sender, let offer):
            buffer.writeInteger(UInt8(0x0B))
            buffer.writeInteger(sender)
            offer.write(to: &buffer)
        }
    }

    /// Decodes one whole frame: the entire readable bytes of `buffer`.
    ///
    /// Payloads are slices of `buffer` (no copy). Throws `RelayWireError` on anything malformed, including bytes
    /// left over after a frame without a payload.
    public static func read(from buffer: ByteBuffer) throws(RelayWireError) -> RelayServerFrame {
        var buffer = buffer
        let type = try buffer.readRelayInteger(as: UInt8.self)
        let frame: RelayServerFrame
        switch type {
        case 0x01:
            frame = .welcome(try RelayWelcome.read(from: &buffer))
        case 0x02:
            frame = .memberState(try RelayMember.read(from: &buffer))
        case 0x03:
            let seq = try buffer.readRelayInteger(as: UInt64.self)
            let sender = try buffer.readRelayInteger(as: UInt8.self)
            return .reliable(seq: seq, sender: sender, payload: buffer.readRelayPayload())
        case 0x04:
            let sender = try buffer.readRelayInteger(as: UInt8.self)
            return .unreliable(sender: sender, payload: buffer.readRelayPayload())
        case 0x05:
            frame = .ack(try buffer.readRelayInteger(as: UInt64.self))
        case 0x06:
            frame = .heartbeat
        case 0x07:
            let code = try buffer.readRelayInteger(as: UInt16.self)
            frame = .error(code: code, message: try buffer.readRelayMessage())
        case 0x08:
            let reasonByte = try buffer.readRelayInteger(as: UInt8.self)
            guard let reason = RelayCloseReason(rawValue: reasonByte) else {
                throw .invalidValue("close reason \(reasonByte)")
            }
            frame = .closing(reason, message: try buffer.readRelayMessage())
        case 0x09:
            let member = try buffer.readRelayInteger(as: UInt8.self)
            let membership = try buffer.readVoiceMembership()
            frame = .voiceChannel(member: member, membership: membership, channel: try buffer.readVoiceChannel())
        case 0x0A:
            let sender = try buffer.readRelayInteger(as: UInt8.self)
            let channel = try buffer.readVoiceChannel()
            return .voice(sender: sender, channel: channel, payload: buffer.readRelayPayload())
        case 0x0B:
            let sender = try buffer.readRelayInteger(as: UInt8.self)
            frame = .peerOffer(sender: sender, try PeerOffer.read(from: &buffer))
        default:
            throw .unknownType(type)
        }
        try buffer.expectRelayEnd()
        return frame
    }
}

/// A binary frame a device sends on a relay WebSocket (`/v1/matches/{id}/relay`).
///
/// One WebSocket binary message carries exactly one frame: a type byte, then the case's fields big-endian.
/// Recipients are member indices; an empty list means every other member. Duplicates are kept as sent.
/// Payloads run to the end of the message and may be empty.
public enum RelayClientFrame: Sendable, Equatable {
    /// Type 0x11: a reliable message. Body: seq u64, recipient count u8, that many indices u8, payload.
    case reliable(seq: UInt64, recipients: [UInt8], payload: ByteBuffer)
    /// Type 0x12: an unreliable message sent over the WebSocket. Body: recipient count u8, indices, payload.
    case unreliable(recipients: [UInt8], payload: ByteBuffer)
    /// Type 0x13: cumulative acknowledgement: the device received every reliable message up to this seq.
    case ack(UInt64)
    /// Type 0x14: keeps the connection alive. Empty body.
    case heartbeat
    /// Type 0x15: the member leaves the match. Empty body.
    case leave
    /// Type 0x16: the member joins, starts or stops receiving, or leaves a voice channel. Body: membership u8,
    /// channel name length u8, name.
    case voiceChannel(membership: VoiceChannelMembership, channel: String)
    /// Type 0x17: voice on `channel` sent over the WebSocket (UDP does not get through). Body: channel name
    /// length u8, name, payload.
    case voice(channel: String, payload: ByteBuffer)
    /// Type 0x18: how the others may reach this member directly; the relay passes it on unless the match is
    /// relay-only. Body: the offer.
    case peerOffer(PeerOffer)

    /// Appends the frame's bytes.
    ///
    /// Traps if a recipient list has more than 255 entries (the count travels as one byte) or a voice channel name
    /// is outside `VoiceLimits.channelNameBytes`: keeping within them is the caller's job.
    public func write(to buffer: inout ByteBuffer) {
        switch self {
        case .reliable(let seq, let recipients, let payload):
            buffer.writeInteger(UInt8(0x11))
            buffer.writeInteger(seq)
            buffer.writeRelayRecipients(recipients)
            buffer.writeImmutableBuffer(payload)
        case .unreliable(let recipients, let payload):
            buffer.writeInteger(UInt8(0x12))
            buffer.writeRelayRecipients(recipients)
            buffer.writeImmutableBuffer(payload)
        case .ack(let seq):
            buffer.writeInteger(UInt8(0x13))
            buffer.writeInteger(seq)
        case .heartbeat:
            buffer.writeInteger(UInt8(0x14))
        case .leave:
            buffer.writeInteger(UInt8(0x15))
        case .voiceChannel(let membership, let channel):
            buffer.writeInteger(UInt8(0x16))
            buffer.writeInteger(membership.rawValue)
            buffer.writeVoiceChannel(channel)
        case .voice(let channel, let payload):
            buffer.writeInteger(UInt8(0x17))
            buffer.writeVoiceChannel(channel)
            buffer.writeImmutableBuffer(payload)
        case .peerOffer(let offer):
            buffer.writeInteger(UInt8(0x18))
            offer.write(to: &buffer)
        }
    }

    /// Decodes one whole frame: the entire readable bytes of `buffer`.
    ///
    /// Payloads are slices of `buffer` (no copy). Throws `RelayWireError` on anything malformed, including bytes
    /// left over after a frame without a payload.
    public static func read(from buffer: ByteBuffer) throws(RelayWireError) -> RelayClientFrame {
        var buffer = buffer
        let type = try buffer.readRelayInteger(as: UInt8.self)
        let frame: RelayClientFrame
        switch type {
        case 0x11:
            let seq = try buffer.readRelayInteger(as: UInt64.self)
            let recipients = try buffer.readRelayRecipients()
            return .reliable(seq: seq, recipients: recipients, payload: buffer.readRelayPayload())
        case 0x12:
            let recipients = try buffer.readRelayRecipients()
            return .unreliable(recipients: recipients, payload: buffer.readRelayPayload())
        case 0x13:
            frame = .ack(try buffer.readRelayInteger(as: UInt64.self))
        case 0x14:
            frame = .heartbeat
        case 0x15:
            frame = .leave
        case 0x16:
            let membership = try buffer.readVoiceMembership()
            frame = .voiceChannel(membership: membership, channel: try buffer.readVoiceChannel())
        case 0x17:
            let channel = try buffer.readVoiceChannel()
            return .voice(channel: channel, payload: buffer.readRelayPayload())
        case 0x18:
            frame = .peerOffer(try PeerOffer.read(from: &buffer))
        default:
            throw .unknownType(type)
        }
        try buffer.expectRelayEnd()
        return frame
    }
}
