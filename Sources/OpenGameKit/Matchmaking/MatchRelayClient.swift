import Foundation
import GameCenterProtocol
import HTTPTypes
import Logging
import NIOCore
import NIOPosix
import Synchronization
import WSClient

/// A `GKMatch`'s connection to the server's relay: a WebSocket for reliable data (reconnected after a break, with
/// unacknowledged messages resent) and a UDP socket for unreliable data (the WebSocket when UDP does not get through).
/// The same UDP socket carries the direct paths to the other members (``MatchPeers``), when the match allows them.
final class MatchRelayClient: Sendable {
    /// What the relay client tells its match.
    enum Event: Sendable {
        case data(Data, from: String)
        case member(RelayMember)
        /// Voice on `channel` from a member.
        case voice(channel: String, payload: Data, from: String)
        /// A member joined, started or stopped receiving, or left a voice channel.
        case voiceChannel(channel: String, player: String, membership: VoiceChannelMembership)
        /// The match is over for this device (nil: it left on its own).
        case ended(GKError?)
    }

    let matchID: String
    private let device: GKGameCenter
    /// The node whose relay carries the match, when the server named one; else the server the device uses.
    private let relayServer: URL?
    private let state: Mutex<MatchRelayState>
    private let socket = Mutex<RelayDatagramSocket?>(nil)
    private let task = Mutex<Task<Void, Never>?>(nil)
    private let peerTask = Mutex<Task<Void, Never>?>(nil)
    /// Held while a reliable message is taken in order and handed to the game, so that messages of one sender that
    /// came by different paths (the relay's connection, the UDP socket's thread) reach it in order.
    private let deliveryOrder = Mutex(())
    private let deliver: @Sendable (Event) -> Void
    private let origin = ContinuousClock.now

    /// How often an unanswered UDP probe is repeated, and how long before UDP counts as blocked.
    static let probeInterval = Duration.milliseconds(200)
    static let probeGiveUp = Duration.seconds(2)
    /// How long a connection attempt may take to be welcomed.
    static let welcomeTimeout = Duration.seconds(3)

    /// `relayOnly` keeps this device's data on the relay: it offers no direct path and takes none.
    init(
        matchID: String, localPlayerID: String, players: [String], relayURL: URL?, relayOnly: Bool = false, device: GKGameCenter,
        deliver: @escaping @Sendable (Event) -> Void
    ) {
        self.matchID = matchID
        self.device = device
        self.relayServer = relayURL.flatMap { $0.host == nil ? nil : $0 }
        self.deliver = deliver
        self.state = Mutex(MatchRelayState(matchID: matchID, localPlayerID: localPlayerID, knownPlayers: players, relayOnly: relayOnly))
    }

    private var now: Double { (ContinuousClock.now - origin).relaySeconds }

    // MARK: Life

    /// Connects, and keeps reconnecting after breaks until the match ends for this device.
    func start() {
        let task = Task { [self] in await run() }
        self.task.withLock { $0 = task }
        let peerTask = Task { [self] in await tendPeers() }
        self.peerTask.withLock { $0 = peerTask }
    }

    /// Stops for good (the match was left); queued data is dropped.
    func stop() {
        let wake = state.withLock { state -> WriterWake? in
            state.ended = true
            return state.connection?.wake
        }
        wake?.finish()
        task.withLock { $0 }?.cancel()
        peerTask.withLock { $0 }?.cancel()
        socket.withLock { $0 }?.close()
    }

    private func run() async {
        var delay = 0.05
        var lastContact = ContinuousClock.now
        var timeout = Duration.seconds(10)
        while !Task.isCancelled && !state.withLock({ $0.ended }) {
            let outcome = await connectOnce()
            switch outcome {
            case .closed(let reason, let message):
                finish(reason == .left ? nil : GKError(.communicationsFailure, "the relay ended the match for this device: \(message)"))
                return
            case .welcomed(let matchTimeout):
                timeout = matchTimeout
                lastContact = .now
                delay = 0.05
            case .failed(let error):
                if let error {
                    finish(error)
                    return
                }
            }
            state.withLock { $0.connection = nil }
            if ContinuousClock.now - lastContact > timeout {
                finish(GKError(.communicationsFailure, "lost the connection to the match relay for longer than the match's timeout (\(timeout))"))
                return
            }
            try? await Task.sleep(for: .milliseconds(Int(delay * 1000 * Double.random(in: 0.8...1.2))))
            delay = min(delay * 2, 1)
        }
    }

    private func finish(_ error: GKError?) {
        let first = state.withLock { state -> Bool in
            defer { state.ended = true }
            return !state.ended
        }
        peerTask.withLock { $0 }?.cancel()
        socket.withLock { $0 }?.close()
        if first { deliver(.ended(error)) }
    }

    // MARK: One connection

    private func connectOnce() async -> RelayConnectionOutcome {
        guard let token = try? device.requireToken() else {
            return .failed(GKError(.notAuthenticated, "the player signed out; the match is over"))
        }
        let (stream, received, sender) = state.withLock { ($0.receiverStream, $0.lastReceived, $0.senderStream) }
        let url = APIClient.webSocketURL(
            on: relayServer ?? device.api.server, "/v1/matches/\(matchID)/relay?stream=\(stream)&received=\(received)&sender=\(sender)")
        let headers = device.api.webSocketHeaders(token: token)
        let result = ConnectionResult()
        let attempt = Task { [device, matchID] in
            do {
                try await WebSocketClient.connect(
                    url: url,
                    // A connection we close (silent relay) must end promptly, not after the default 15 s close wait.
                    configuration: .init(maxFrameSize: Limits.maximumReliableMessageBytes + 1024, additionalHeaders: headers, closeTimeout: .milliseconds(500)),
                    logger: device.logger
                ) { inbound, outbound, _ in
                    // An attempt given up on (its upgrade took too long) must not become a second connection.
                    guard !result.abandoned else { return }
                    try await self.serve(inbound: inbound, outbound: outbound, result: result)
                }
            } catch {
                device.logger.debug("relay connection failed", metadata: [LogKey.matchID: "\(matchID)", LogKey.error: "\(error)"])
            }
            result.finished = true
        }
        // The WebSocket client has no upgrade timeout, and a network that swallows packets would hold the attempt
        // forever: give up on it when no welcome came in time (the connection's own heartbeats take over after).
        let deadline = ContinuousClock.now + Self.welcomeTimeout
        while !result.finished && !result.welcomed {
            guard ContinuousClock.now < deadline, !Task.isCancelled else {
                result.abandoned = true
                attempt.cancel()
                return .failed(nil)
            }
            try? await Task.sleep(for: .milliseconds(20))
        }
        await attempt.value
        return result.outcome
    }

    private func serve(inbound: WebSocketInboundStream, outbound: WebSocketOutboundWriter, result: ConnectionResult) async throws {
        let (wakes, continuation) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        let wake = WriterWake(continuation)
        let lastHeard = HeardAt()
        var iterator = inbound.messages(maxSize: Limits.maximumReliableMessageBytes + 1024).makeAsyncIterator()
        guard case .binary(let first)? = try await iterator.next(), case .welcome(let welcome) = try RelayServerFrame.read(from: first) else {
            return
        }
        let changes = state.withLock { $0.welcomed(welcome, wake: wake, now: now) }
        let timeout = Duration.milliseconds(Int(welcome.timeoutMillis))
        let heartbeat = Duration.milliseconds(Int(max(welcome.heartbeatMillis, 20)))
        result.outcome = .welcomed(timeout: timeout)
        result.welcomed = true
        for member in changes { deliver(.member(member)) }
        wake.yield()

        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { [self] in
                for await _ in wakes {
                    let frames = state.withLock { $0.takeOutgoing() }
                    for frame in frames { try await outbound.write(.binary(frame)) }
                }
                try? await outbound.close(.normalClosure, reason: nil)
            }
            // Heartbeats, acknowledgements of what arrived, and closing a connection whose server fell silent.
            group.addTask { [self] in
                var sinceHeartbeat = Duration.zero
                let tick = min(heartbeat, .milliseconds(50))
                while !Task.isCancelled {
                    try await Task.sleep(for: tick)
                    sinceHeartbeat += tick
                    if ContinuousClock.now - lastHeard.instant.withLock({ $0 }) > max(heartbeat * 3, .milliseconds(500)) {
                        try? await outbound.close(.goingAway, reason: "relay silent")
                        return
                    }
                    let ackDue = state.withLock { $0.receivedSinceAck > 0 }
                    if sinceHeartbeat >= heartbeat {
                        sinceHeartbeat = .zero
                        var frame = ByteBuffer()
                        RelayClientFrame.heartbeat.write(to: &frame)
                        state.withLock { $0.connection?.control.append(frame) }
                        wake.yield()
                    } else if ackDue {
                        wake.yield()
                    }
                }
            }
            group.addTask { [self] in await openUDP(welcome) }
            defer { group.cancelAll() }
            while let message = try await iterator.next() {
                lastHeard.instant.withLock { $0 = .now }
                guard case .binary(let buffer) = message, let frame = try? RelayServerFrame.read(from: buffer) else { continue }
                if let closing = handle(frame, wake: wake) {
                    result.outcome = .closed(closing.0, closing.1)
                    return
                }
            }
        }
    }

    /// Handles a frame from the relay; returns the reason when the relay ends the match for this device.
    private func handle(_ frame: RelayServerFrame, wake: WriterWake) -> (RelayCloseReason, String)? {
        switch frame {
        case .reliable(let seq, let sender, let payload):
            deliveryOrder.withLock { _ in
                let messages = state.withLock { state -> (String, [Data])? in
                    guard state.received(seq: seq) else { return nil }
                    if state.receivedSinceAck >= 32 { wake.yield() }
                    guard let player = state.player(sender) else { return nil }
                    return (player, state.relayedReliable(payload, from: sender))
                }
                guard let (player, messages) = messages else { return }
                for message in messages { deliver(.data(message, from: player)) }
            }
        case .peerOffer(let sender, let offer):
            state.withLock { $0.peerOffered(offer, by: sender, now: now) }
            tickPeers()
        case .unreliable(let sender, let payload):
            if let player = state.withLock({ $0.player(sender) }) { deliver(.data(Data(payload.readableBytesView), from: player)) }
        case .memberState(let member):
            for change in state.withLock({ $0.update(member) }) { deliver(.member(change)) }
        case .ack(let seq):
            state.withLock { $0.acknowledge(through: seq) }
        case .error(let code, let message):
            device.logger.warning(
                "the relay refused part of a message", metadata: [LogKey.matchID: "\(matchID)", LogKey.code: "\(code)", LogKey.message: "\(message)"])
        case .closing(let reason, let message):
            return (reason, message)
        case .voiceChannel(let member, let membership, let channel):
            if let player = state.withLock({ $0.voiceChannelChanged(member: member, channel: channel, membership: membership) }) {
                deliver(.voiceChannel(channel: channel, player: player, membership: membership))
            }
        case .voice(let sender, let channel, let payload):
            if let player = state.withLock({ $0.player(sender) }) {
                deliver(.voice(channel: channel, payload: Data(payload.readableBytesView), from: player))
            }
        case .welcome, .heartbeat:
            break
        }
        return nil
    }

    // MARK: Sending

    /// Queues `payload` for `players` (nil: everyone); see `GKMatch.send`.
    func send(_ payload: Data, to players: [String]?, reliable: Bool) throws {
        let outbound = try state.withLock { try $0.queue(payload, to: players, reliable: reliable, now: now) }
        outbound.wake?.yield()
        guard outbound.datagram != nil || !outbound.direct.isEmpty, let socket = socket.withLock({ $0 }) else { return }
        if let (header, recipients, key) = outbound.datagram {
            // Sealed here, outside the lock, straight from the caller's bytes.
            socket.sendClientData(header, recipients: recipients, payload: payload, key: key)
        }
        send(outbound.direct, on: socket)
    }

    /// Seals datagrams on direct paths where they are sent from (no buffer is allocated) and sends them.
    private func send(_ sends: [MatchPeers.Send], on socket: RelayDatagramSocket) {
        for send in sends {
            let length = RelayDatagram.headerSize + send.body.readableBytes + RelayDatagram.tagSize
            withUnsafeTemporaryAllocation(byteCount: length, alignment: 16) { space in
                send.body.withUnsafeReadableBytes { UnsafeMutableRawBufferPointer(rebasing: space[RelayDatagram.headerSize...]).copyMemory(from: $0) }
                let sealed = RelayDatagram.sealInPlace(send.header, bodyCount: send.body.readableBytes, key: send.key, in: space)
                socket.send(UnsafeRawBufferPointer(rebasing: space[..<sealed]), to: send.address.datagramAddress)
            }
        }
    }

    /// Joins, starts or stops receiving, or leaves a voice channel; see `MatchVoice`.
    func setVoiceChannel(_ channel: String, _ membership: VoiceChannelMembership) throws {
        try state.withLock { try $0.queueVoiceChannel(channel, membership) }?.yield()
    }

    /// Sends a voice packet on `channel` to the members receiving it; see `MatchVoice`.
    func sendVoice(_ payload: Data, on channel: String) throws {
        switch try state.withLock({ try $0.queueVoice(payload, on: channel, now: now) }) {
        case .none: break
        case .wake(let wake): wake.yield()
        case .datagram(let header, let key):
            socket.withLock { $0 }?.sendClientVoice(header, channel: channel, payload: payload, key: key)
        }
    }

    /// The other members in `channel` and whether each receives it.
    func voiceMembers(of channel: String) -> [String: VoiceChannelMembership] {
        state.withLock { $0.voiceMembers(of: channel) }
    }

    /// The other members this device reaches directly now; the rest go through the relay.
    var directPlayers: [String] {
        state.withLock { state in state.peers.links.values.filter { $0.path.directAddress != nil }.map(\.playerID).sorted() }
    }

    /// How unreliable data and voice travel now (a test hook: tests wait for it instead of for the probes' timing).
    var unreliablePath: UnreliablePath {
        state.withLock { state in
            if state.connection?.udpConfirmed == true { return .udp }
            return state.udpFallback ? .webSocket : .probing
        }
    }

    // MARK: UDP

    /// Opens the UDP path for a new connection: probes until the relay answers, or falls back to the WebSocket.
    private func openUDP(_ welcome: RelayWelcome) async {
        let host = welcome.udpHost.isEmpty ? ((relayServer ?? device.api.server).host ?? "127.0.0.1") : welcome.udpHost
        guard welcome.udpPort != 0 else { return fallBack("the server has no UDP port") }
        let existing = socket.withLock { $0 }
        let datagrams: RelayDatagramSocket
        if let existing {
            datagrams = existing
        } else {
            do {
                datagrams = try RelayDatagramSocket.open(host: host, port: Int(welcome.udpPort)) { [weak self] datagram, sender in
                    self?.received(datagram, from: sender)
                }
            } catch {
                return fallBack("a UDP socket to \(host):\(welcome.udpPort) could not be opened: \(error)")
            }
            let kept = socket.withLock { socket -> Bool in
                guard socket == nil, !state.withLock({ $0.ended }) else { return false }
                socket = datagrams
                return true
            }
            if !kept { return datagrams.close() }
        }
        let deadline = ContinuousClock.now + Self.probeGiveUp
        while ContinuousClock.now < deadline && !Task.isCancelled {
            let probe = state.withLock { state -> ByteBuffer? in
                guard var connection = state.connection, connection.connectionID == welcome.connectionID, !connection.udpConfirmed else { return nil }
                connection.datagramCounter += 1
                var datagram = ByteBuffer()
                RelayDatagram.seal(
                    RelayDatagramHeader(kind: .clientProbe, connectionID: connection.connectionID, counter: connection.datagramCounter),
                    body: ByteBuffer(), key: connection.key, into: &datagram)
                state.connection = connection
                return datagram
            }
            guard let probe else { break }
            datagrams.send(probe)
            try? await Task.sleep(for: Self.probeInterval)
        }
        if !Task.isCancelled && state.withLock({ $0.connection?.connectionID == welcome.connectionID && $0.connection?.udpConfirmed == false }) {
            fallBack("no answer from \(host):\(welcome.udpPort) within \(Self.probeGiveUp)")
        }
        // Offered once the relay has seen the socket's datagrams (or they did not get through): the relay adds the
        // address it saw them come from, which is where a member behind a NAT can be reached.
        if let port = datagrams.localPort {
            let candidates = HostCandidates.gather(port: port, ipv6: datagrams.isIPv6)
            state.withLock { $0.setOffer(candidates: candidates) }?.yield()
        }
    }

    // MARK: Direct paths

    /// Looks after the direct paths until the match ends: probes, resends, and falling back to the relay, as often
    /// as ``MatchPeers/tickInterval`` says.
    private func tendPeers() async {
        while !Task.isCancelled {
            try? await Task.sleep(for: state.withLock { $0.peers.tickInterval })
            tickPeers()
        }
    }

    /// Sends the probes and resends that are due, and queues for the relay what a falling path did not confirm.
    private func tickPeers() {
        let (sends, wake, changes) = state.withLock { $0.tickPeers(now: now) }
        wake?.yield()
        if !sends.isEmpty, let socket = socket.withLock({ $0 }) { send(sends, on: socket) }
        for (player, change) in changes { logPathChange(change, to: player) }
    }

    private func logPathChange(_ change: PeerPath.Change, to player: String) {
        switch change {
        case .none:
            break
        case .direct(let address):
            device.logger.debug(
                "direct path to a member",
                metadata: [LogKey.matchID: "\(matchID)", LogKey.playerID: "\(player)", "address": "\(address.datagramAddress.socketAddress)"])
        case .relay:
            device.logger.debug(
                "the direct path to a member went silent; the relay carries its data", metadata: [LogKey.matchID: "\(matchID)", LogKey.playerID: "\(player)"])
        }
    }

    /// A datagram of a direct path, where the socket received it: answers go back at once, messages to the game.
    private func receivedFromPeer(_ datagram: UnsafeMutableRawBufferPointer, header: RelayDatagramHeader, from sender: DatagramAddress) {
        guard let address = PeerCandidate(sender) else { return }
        deliveryOrder.withLock { _ in
            let result = state.withLock { state -> MatchPeers.Received? in
                guard let key = state.peers.key(for: header), let body = RelayDatagram.openInPlace(datagram, header: header, key: key) else {
                    return nil
                }
                return state.peers.received(header, body: UnsafeRawBufferPointer(body), from: address, now: now)
            }
            guard let result, let player = result.from else { return }
            if !result.replies.isEmpty, let socket = socket.withLock({ $0 }) { send(result.replies, on: socket) }
            logPathChange(result.change, to: player)
            for message in result.deliveries { deliver(.data(message, from: player)) }
        }
    }

    private func fallBack(_ why: String) {
        let first = state.withLock { state -> Bool in
            defer { state.udpFallback = true }
            return !state.udpFallback
        }
        if first {
            device.logger.notice(
                "UDP to the match relay does not get through (\(why)); unreliable data goes over the WebSocket",
                metadata: [LogKey.matchID: "\(matchID)"])
        }
    }

    /// A datagram from the relay, where the socket received it (on the socket's receive thread); it is opened in
    /// place.
    private func received(_ datagram: UnsafeMutableRawBufferPointer, from sender: DatagramAddress) {
        guard let header = RelayDatagram.peekHeader(UnsafeRawBufferPointer(datagram)) else { return }
        if header.kind.isPeer { return receivedFromPeer(datagram, header: header, from: sender) }
        guard header.kind.fromServer else { return }
        let delivery = state.withLock { state -> Event? in
            guard let key = state.connection?.key, state.connection?.connectionID == header.connectionID,
                let body = RelayDatagram.openInPlace(datagram, header: header, key: key),
                state.connection!.replay.accept(header.counter)
            else { return nil }
            switch header.kind {
            case .serverProbeAck:
                state.connection!.udpConfirmed = true
                return nil
            case .serverVoice:
                guard let (sender, channel, payload) = RelayDatagram.readServerVoiceBody(UnsafeRawBufferPointer(body)),
                    let player = state.player(sender)
                else { return nil }
                return .voice(channel: channel, payload: Data(payload), from: player)
            default:
                guard let (sender, payload) = RelayDatagram.readServerDataBody(UnsafeRawBufferPointer(body)), let player = state.player(sender) else {
                    return nil
                }
                return .data(Data(payload), from: player)
            }
        }
        if let delivery { deliver(delivery) }
    }
}

/// When the relay was last heard from on a connection.
private final class HeardAt: Sendable {
    let instant = Mutex(ContinuousClock.now)
}

/// How a match's unreliable data and voice travel.
enum UnreliablePath: Sendable, Equatable {
    /// Over the WebSocket while UDP is being tried (or no connection is open).
    case probing
    /// By UDP: the relay answered the open connection's probe.
    case udp
    /// Over the WebSocket: UDP did not get through.
    case webSocket
}

/// How one relay connection attempt ended.
private enum RelayConnectionOutcome {
    case welcomed(timeout: Duration)
    case closed(RelayCloseReason, String)
    /// The connection failed; an error ends the match (refused for good), nil means try again.
    case failed(GKError?)
}

/// How one connection attempt went, written from inside the WebSocket handler.
private final class ConnectionResult: Sendable {
    private struct State {
        var outcome: RelayConnectionOutcome = .failed(nil)
        var welcomed = false
        var finished = false
        var abandoned = false
    }

    private let state = Mutex(State())

    fileprivate var outcome: RelayConnectionOutcome {
        get { state.withLock { $0.outcome } }
        set { state.withLock { $0.outcome = newValue } }
    }

    var welcomed: Bool {
        get { state.withLock { $0.welcomed } }
        set { state.withLock { $0.welcomed = newValue } }
    }

    var finished: Bool {
        get { state.withLock { $0.finished } }
        set { state.withLock { $0.finished = newValue } }
    }

    var abandoned: Bool {
        get { state.withLock { $0.abandoned } }
        set { state.withLock { $0.abandoned = newValue } }
    }
}

extension Duration {
    /// The duration in seconds.
    var relaySeconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) / 1e18
    }
}
