import GameCenterProtocol
import NIOCore

/// Voice channels: who is in which channel of the match, and forwarding each channel's voice to the members who
/// receive it — never decoded, never to a member who stopped the channel.
extension RelayMatchState {
    /// Member `index` joins, starts or stops receiving, or leaves `channel`; the other members are told.
    ///
    /// A member parental controls keep from voice, or already in `VoiceLimits.maximumChannelsPerMember` channels,
    /// is refused with an error frame and nothing changes.
    mutating func setVoiceChannel(
        _ index: UInt8, connectionID: UInt64, channel: String, membership: VoiceChannelMembership, now: ContinuousClock.Instant
    ) -> Effects {
        let i = Int(index)
        guard members[i].state != .left, members[i].connection?.connectionID == connectionID else { return Effects() }
        members[i].lastHeard = RelayTime.of(now)
        guard members[i].voiceAllowed else {
            return Effects(
                wakes: tell(index, .parentalControlsBlocked, "voice chat is off for this player: parental controls block it for an underage account"))
        }
        let old = members[i].voiceChannels[channel] ?? VoiceChannelMembership.none
        guard old != membership else { return Effects() }
        if old == .none && members[i].voiceChannels.count >= VoiceLimits.maximumChannelsPerMember {
            return Effects(
                wakes: tell(
                    index, .invalidParameter, "a member may be in at most \(VoiceLimits.maximumChannelsPerMember) voice channels at once; leave one first"))
        }
        members[i].voiceChannels[channel] = membership == .none ? nil : membership
        var frame = ByteBuffer()
        RelayServerFrame.voiceChannel(member: index, membership: membership, channel: channel).write(to: &frame)
        return Effects(wakes: enqueueControl(frame, toAllBut: index))
    }

    /// Frames telling a new connection of member `index` where every other member stands in each voice channel.
    func voiceChannelFrames(except index: UInt8) -> [ByteBuffer] {
        var frames: [ByteBuffer] = []
        for member in members where member.index != index && member.state != .left {
            for (channel, membership) in member.voiceChannels.sorted(by: { $0.key < $1.key }) {
                var frame = ByteBuffer()
                RelayServerFrame.voiceChannel(member: member.index, membership: membership, channel: channel).write(to: &frame)
                frames.append(frame)
            }
        }
        return frames
    }

    /// Voice from member `index` on `channel` (arrived by UDP or over its WebSocket): sealed into `datagrams` for
    /// each member listening to the channel that has a UDP address, queued on the WebSocket for the others.
    ///
    /// Dropped (and counted) when the sender is not in the channel; a sender over its voice limit is disconnected
    /// as a flooder.
    mutating func receiveVoice(
        from index: UInt8, channel: String, payload: UnsafeRawBufferPointer, now: ContinuousClock.Instant,
        statistics: RelayStatistics, datagrams: DatagramOutbox
    ) -> Effects {
        var effects = Effects()
        let i = Int(index)
        members[i].lastHeard = RelayTime.of(now)
        guard members[i].voiceAllowed, members[i].voiceChannels[channel] != nil else {
            statistics.add(.voiceRefused)
            return effects
        }
        guard members[i].voiceRate.take(now: RelayTime.of(now).seconds) else {
            statistics.add(.membersFlooding)
            let message =
                "sent voice faster than the relay allows: at most \(Int(limits.voicePacketsPerSecond)) packets per second (bursts of \(Int(limits.voiceBurstPackets)))"
            return remove(index, reason: .flooding, message: message, store: true)
        }
        for target in members.indices where target != i && members[target].state != .left {
            guard let membership = members[target].voiceChannels[channel] else { continue }
            guard membership == .listening else {
                statistics.add(.voiceWithheld)
                continue
            }
            let forwarded = forwardUnreliable(
                to: target, kind: .serverVoice, size: RelayDatagram.serverVoiceSize(channel: channel, payloadCount: payload.count),
                seal: { header, key, space in
                    RelayDatagram.sealServerVoice(header, sender: index, channel: channel, payload: payload, key: key, in: space)
                },
                frame: { .voice(sender: index, channel: channel, payload: ByteBuffer(bytes: payload)) },
                queueFull: .voiceQueueFull, statistics: statistics, datagrams: datagrams, effects: &effects)
            if forwarded { statistics.add(.voiceForwarded) }
        }
        return effects
    }

    /// Queues a non-fatal error frame for member `index`'s connection; returns its writer to wake.
    private mutating func tell(_ index: UInt8, _ code: ErrorCode, _ message: String) -> [WriterWake] {
        let frame = { () -> ByteBuffer in
            var frame = ByteBuffer()
            RelayServerFrame.error(code: UInt16(code.rawValue), message: message).write(to: &frame)
            return frame
        }()
        return withConnection(Int(index)) { connection in
            connection.control.append(frame)
            return [connection.wake]
        } ?? []
    }
}
