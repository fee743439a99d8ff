import GameCenterProtocol
import HummingbirdWebSocket
import Logging
import NIOCore
import ServiceLifecycle

/// One member's relay WebSocket: the welcome, then a reader that hands the device's frames to the match and a
/// writer that sends what the match queued for the member, until either side ends it.
struct RelayConnection {
    let relay: RelayService
    let match: RelayMatch
    let memberIndex: UInt8
    let playerID: String
    /// False for a player parental controls keep from voice chat (an underage account).
    let voiceAllowed: Bool
    let logger: Logger

    /// What the device said it already has, from the upgrade request's query.
    struct Resume {
        /// The receiver stream the device's `received` counts in (0: none yet).
        var receiverStream: UInt64 = 0
        /// The last reliable message the device received in that stream.
        var received: UInt64 = 0
        /// The numbering of the device's own reliable messages.
        var senderStream: UInt64 = 0
    }

    /// Largest inbound frame: a reliable message of the maximum size with a full recipient list.
    static let maximumFrameBytes = Limits.maximumReliableMessageBytes + 300

    func run(resume: Resume, inbound: WebSocketInboundStream, outbound: WebSocketOutboundWriter) async throws {
        let key = RelayKey.random()
        let connectionID = relay.register(match, memberIndex: memberIndex, key: key)
        let (wakes, wake) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        let now = ContinuousClock.now
        let (welcome, effects) = match.state.withLock {
            $0.attach(
                memberIndex, connectionID: connectionID, key: key, wake: wake, receiverStream: resume.receiverStream,
                received: resume.received, senderStream: resume.senderStream, voiceAllowed: voiceAllowed, now: now)
        }
        defer {
            relay.unregister(connectionID)
            match.state.withLock { $0.detach(memberIndex, connectionID: connectionID) }
        }
        let timeoutMillis = UInt32(clamping: Int(match.timeout.seconds * 1000))
        let heartbeatMillis = max(50, Int(Double(timeoutMillis) / relay.limits.heartbeatsPerTimeout))
        let heartbeat = Duration.milliseconds(heartbeatMillis)
        let udp = relay.datagramAddress
        var frame = ByteBuffer()
        RelayServerFrame.welcome(
            RelayWelcome(
                connectionID: connectionID, key: key, udpHost: udp.host, udpPort: UInt16(clamping: udp.port),
                memberIndex: welcome.memberIndex, acceptedSeq: welcome.acceptedSeq, receiverStream: welcome.receiverStream,
                heartbeatMillis: UInt32(clamping: heartbeatMillis),
                timeoutMillis: timeoutMillis, maxMessagesPerSecond: UInt32(relay.limits.messagesPerSecond),
                burstMessages: UInt32(relay.limits.burstMessages), members: welcome.members, peerToPeer: welcome.peerToPeer
            )
        ).write(to: &frame)
        try await outbound.write(.binary(frame))
        relay.apply(effects, of: match)

        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await write(wakes, to: outbound, connectionID: connectionID) }
            group.addTask {
                while !Task.isCancelled {
                    try await Task.sleep(for: heartbeat)
                    match.state.withLock { $0.queueHeartbeat(memberIndex, connectionID: connectionID) }?.yield()
                }
            }
            group.addTask {
                try await withGracefulShutdownHandler {
                    try await read(inbound, connectionID: connectionID, wake: wake)
                } onGracefulShutdown: {
                    Task { try? await outbound.close(.goingAway, reason: "server shutting down") }
                }
            }
            // The first task to finish ends the connection: the device went away, or the writer closed it.
            _ = try await group.next()
            group.cancelAll()
        }
    }

    private func write(_ wakes: AsyncStream<Void>, to outbound: WebSocketOutboundWriter, connectionID: UInt64) async throws {
        for await _ in wakes {
            switch match.state.withLock({ $0.takeOutgoing(memberIndex, connectionID: connectionID) }) {
            case .frames(let frames):
                for frame in frames { try await outbound.write(.binary(frame)) }
            case .close(let reason, let message):
                var frame = ByteBuffer()
                RelayServerFrame.closing(reason, message: message).write(to: &frame)
                try? await outbound.write(.binary(frame))
                try? await outbound.close(.normalClosure, reason: nil)
                return
            }
        }
    }

    private func read(_ inbound: WebSocketInboundStream, connectionID: UInt64, wake: AsyncStream<Void>.Continuation) async throws {
        for try await message in inbound.messages(maxSize: Self.maximumFrameBytes) {
            guard case .binary(let buffer) = message, let frame = try? RelayClientFrame.read(from: buffer) else {
                return protocolError("a frame that is not a relay frame")
            }
            let now = ContinuousClock.now
            switch frame {
            case .reliable(let seq, let recipients, let payload):
                guard payload.readableBytes <= Limits.maximumReliableMessageBytes else {
                    return protocolError("a reliable message larger than \(Limits.maximumReliableMessageBytes) bytes")
                }
                let outcome = match.state.withLock {
                    $0.receiveReliable(
                        from: memberIndex, connectionID: connectionID, seq: seq, recipients: recipients, payload: payload,
                        now: now, statistics: relay.statistics)
                }
                switch outcome {
                case .delivered(let effects): relay.apply(effects, of: match)
                case .staleConnection: wake.yield()
                }
            case .unreliable(let recipients, let payload):
                guard payload.readableBytes <= Limits.maximumUnreliableMessageBytes else {
                    return protocolError("an unreliable message larger than \(Limits.maximumUnreliableMessageBytes) bytes")
                }
                let datagrams = DatagramOutbox(capacity: 4 << 10)
                let effects = match.state.withLock { state -> RelayMatchState.Effects in
                    guard state.members[Int(memberIndex)].connection?.connectionID == connectionID else { return .init() }
                    return state.receiveUnreliable(
                        from: memberIndex, recipients: recipients, payload: payload, now: now,
                        statistics: relay.statistics, datagrams: datagrams)
                }
                relay.send(datagrams)
                relay.apply(effects, of: match)
            case .ack(let seq):
                match.state.withLock { $0.acknowledge(memberIndex, connectionID: connectionID, through: seq, now: now) }
            case .heartbeat:
                match.state.withLock { $0.heard(memberIndex, connectionID: connectionID, now: now) }
            case .leave:
                let effects = match.state.withLock { $0.remove(memberIndex, reason: .left, message: "you left the match", store: true) }
                relay.apply(effects, of: match)
            case .voiceChannel(let membership, let channel):
                let effects = match.state.withLock {
                    $0.setVoiceChannel(memberIndex, connectionID: connectionID, channel: channel, membership: membership, now: now)
                }
                relay.apply(effects, of: match)
            case .voice(let channel, let payload):
                guard payload.readableBytes <= VoiceLimits.maximumPayloadBytes else {
                    return protocolError("a voice packet larger than \(VoiceLimits.maximumPayloadBytes) bytes")
                }
                let datagrams = DatagramOutbox(capacity: 4 << 10)
                let effects = payload.withUnsafeReadableBytes { payload in
                    match.state.withLock { state -> RelayMatchState.Effects in
                        guard state.members[Int(memberIndex)].connection?.connectionID == connectionID else { return .init() }
                        return state.receiveVoice(
                            from: memberIndex, channel: channel, payload: payload, now: now,
                            statistics: relay.statistics, datagrams: datagrams)
                    }
                }
                relay.send(datagrams)
                relay.apply(effects, of: match)
            case .peerOffer(let offer):
                let effects = match.state.withLock { $0.receivePeerOffer(from: memberIndex, connectionID: connectionID, offer, now: now) }
                relay.apply(effects, of: match)
            }
        }
    }

    /// A device that breaks the protocol loses this connection (it may reconnect; nothing it sent before is lost).
    private func protocolError(_ what: String) {
        relay.statistics.add(.protocolErrors)
        logger.info("relay connection closed: the device sent \(what)", metadata: [LogKey.playerID: "\(playerID)"])
    }
}
