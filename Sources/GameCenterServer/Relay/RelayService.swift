import GameCenterProtocol
import GameCenterStorage
import Logging
import NIOCore
import ServiceLifecycle
import Synchronization

/// The match relay: forwards members' reliable data (WebSocket) and unreliable data (UDP, or the WebSocket when
/// UDP does not get through) to the other members of the same match, and only to them.
///
/// Hot state in memory: a match is loaded from storage when its first member connects; departures it decides
/// (timeouts, flooding, a member that cannot keep up) are stored like any other leave, so every member is told.
final class RelayService: Service {
    let database: Database
    let recorder: MatchRecorder
    let clock: ServerClock
    /// Where devices send datagrams, when configured (else the HTTP host they used and the bound port).
    let publicAddress: GameCenterApp.Configuration.PublicAddress?
    let limits: RelayLimits
    let statistics = RelayStatistics()
    let logger: Logger
    private let matches = Mutex<[String: RelayMatch]>([:])
    private let routes = Mutex<[UInt64: DatagramRoute]>([:])
    /// The UDP port and how datagrams decided outside its receive threads go out; nil until it is bound.
    private let datagramSender = Mutex<(port: Int, send: Callback<DatagramOutbox>)?>(nil)
    /// Departures the relay decided, stored by ``run()`` in order. Unbounded by count, bounded by what exists: each
    /// member of a running match departs at most once.
    private let departures: (stream: AsyncStream<Departure>, continuation: AsyncStream<Departure>.Continuation) = AsyncStream.makeStream(of: Departure.self)

    /// A member the relay disconnected.
    private struct Departure {
        let matchID: String
        let playerID: String
        let now: Int64
    }

    /// How often silent members are looked for.
    static let sweepInterval = Duration.milliseconds(100)

    init(
        database: Database, recorder: MatchRecorder, clock: ServerClock,
        publicAddress: GameCenterApp.Configuration.PublicAddress? = nil, limits: RelayLimits = RelayLimits(), logger: Logger
    ) {
        self.publicAddress = publicAddress
        self.database = database
        self.recorder = recorder
        self.clock = clock
        self.limits = limits
        self.logger = logger
    }

    /// The UDP port devices send to, and how to send datagrams to devices from outside its receive threads.
    func useDatagramSender(port: Int, send: @escaping @Sendable (DatagramOutbox) -> Void) {
        datagramSender.withLock { $0 = (port, Callback(send)) }
    }

    /// Where devices send datagrams: an empty host means the host of the URL the device used; port 0 means the
    /// UDP socket is not bound (yet).
    var datagramAddress: (host: String, port: Int) {
        if let publicAddress { return (publicAddress.host, publicAddress.port) }
        return ("", datagramSender.withLock { $0?.port } ?? 0)
    }

    // MARK: Matches

    /// The relayed match `matchID` and the caller's member index in it, loading the match from storage when it is
    /// not in memory yet.
    func join(matchID: String, playerID: String, device: DeviceIdentity) async throws -> (RelayMatch, UInt8) {
        guard (1...64).contains(matchID.count) else { throw APIError.noSuchMatch }
        if let match = matches.withLock({ $0[matchID] }) {
            guard let index = match.state.withLock({ $0.index(of: playerID) }) else { throw APIError.noSuchMatch }
            return (match, index)
        }
        let (record, members) = try await database.read { storage in
            (try await storage.match(id: matchID), try await storage.matchMembers(matchID))
        }
        guard let record, record.state == .started, record.bundleID == device.game.bundleID,
            record.environment == device.environment.rawValue,
            members.contains(where: { $0.playerID == playerID && $0.leftAt == nil })
        else { throw APIError.noSuchMatch }
        guard !record.hosted else { throw APIError.hostedMatchHasNoRelay }
        let timeout = Duration.milliseconds(device.game.matchmaking.timeoutMilliseconds)
        let loaded = RelayMatch(matchID: matchID, timeout: timeout, limits: limits, peerToPeer: !device.game.matchmaking.relayOnly)
        _ = loaded.state.withLock { $0.updateMembers(current: members.filter { $0.leftAt == nil }.map(\.playerID), now: .now) }
        let match = matches.withLock { matches in
            if let existing = matches[matchID] { return existing }
            matches[matchID] = loaded
            return loaded
        }
        guard let index = match.state.withLock({ $0.index(of: playerID) }) else { throw APIError.noSuchMatch }
        return (match, index)
    }

    /// Whether `playerID` may use voice chat: parental controls keep underage accounts from it.
    func mayUseVoice(_ playerID: String) async throws -> Bool {
        try await database.read { try await $0.player(id: playerID) }.map { !$0.underage } ?? false
    }

    /// The match's members changed in storage (players added, a member left over HTTP): the relay follows.
    /// The matches this node relays now, for the studio console: members, how many are connected, and their
    /// traffic so far (reliable messages accepted from members, messages waiting for members to acknowledge).
    func openMatches() -> [RelayMatchSummary] {
        let open = matches.withLock { Array($0.values) }
        return open.map { match in
            match.state.withLock { state in
                RelayMatchSummary(
                    matchID: match.matchID, members: state.members.count,
                    connected: state.members.filter { $0.state != .left && $0.connection != nil }.count,
                    accepted: state.members.reduce(0) { $0 + $1.acceptedSeq }, waiting: state.members.reduce(0) { $0 + $1.outbound.count })
            }
        }.sorted { $0.matchID < $1.matchID }
    }

    func membershipChanged(matchID: String) async {
        guard let match = matches.withLock({ $0[matchID] }) else { return }
        do {
            let current = try await database.read { try await $0.matchMembers(matchID) }.filter { $0.leftAt == nil }.map(\.playerID)
            apply(match.state.withLock { $0.updateMembers(current: current, now: .now) }, of: match)
        } catch {
            logger.error("relay could not read a match's members", metadata: [LogKey.matchID: "\(matchID)", LogKey.error: "\(error)"])
        }
    }

    /// Carries out what a change of a match's state asks for: wakes writers, stores departures, forgets an empty
    /// match.
    func apply(_ effects: RelayMatchState.Effects, of match: RelayMatch) {
        for wake in effects.wakes { wake.yield() }
        for (playerID, reason) in effects.departed {
            logger.info(
                "relay disconnected a member", metadata: [LogKey.matchID: "\(match.matchID)", LogKey.playerID: "\(playerID)", LogKey.reason: "\(reason)"])
            departures.continuation.yield(Departure(matchID: match.matchID, playerID: playerID, now: clock.nowMillis()))
        }
        // Only a departure can end the match: the per-message path skips the check.
        if effects.memberLeft, match.state.withLock({ $0.isOver }) {
            matches.withLock { matches in
                if matches[match.matchID] === match { matches.removeValue(forKey: match.matchID) }
            }
            routes.withLock { routes in routes = routes.filter { $0.value.match !== match } }
        }
    }

    // MARK: Connections

    /// Registers a new connection's datagram route and returns its id (unique among open connections).
    func register(_ match: RelayMatch, memberIndex: UInt8, key: RelayKey) -> UInt64 {
        routes.withLock { routes in
            var id = UInt64.random(in: 1...UInt64.max)
            while routes[id] != nil { id = UInt64.random(in: 1...UInt64.max) }
            routes[id] = DatagramRoute(match: match, memberIndex: memberIndex, key: key)
            return id
        }
    }

    /// Forgets a closed connection's route.
    func unregister(_ connectionID: UInt64) {
        _ = routes.withLock { $0.removeValue(forKey: connectionID) }
    }

    // MARK: Datagrams

    /// Handles one datagram from the UDP socket, where it lies (it is opened in place); answers and forwarded
    /// datagrams are sealed into `out`.
    func receiveDatagram(_ datagram: UnsafeMutableRawBufferPointer, from address: DatagramAddress, into out: DatagramOutbox) {
        guard datagram.count <= RelayDatagram.maximumSize, let header = RelayDatagram.peekHeader(UnsafeRawBufferPointer(datagram)),
            !header.kind.fromServer, !header.kind.isPeer
        else {
            statistics.add(.datagramsMalformed)
            return
        }
        guard let route = routes.withLock({ $0[header.connectionID] }) else {
            statistics.add(.datagramsUnknownConnection)
            return
        }
        guard let body = RelayDatagram.openInPlace(datagram, header: header, key: route.key) else {
            statistics.add(.datagramsForged)
            return
        }
        var recipients = UnsafeRawBufferPointer(start: nil, count: 0)
        var payload = recipients
        var channel = ""
        switch header.kind {
        case .clientData:
            guard let parsed = RelayDatagram.readClientDataBody(UnsafeRawBufferPointer(body)) else {
                statistics.add(.datagramsMalformed)
                return
            }
            (recipients, payload) = parsed
        case .clientVoice:
            guard let parsed = RelayDatagram.readClientVoiceBody(UnsafeRawBufferPointer(body)),
                parsed.payload.count <= VoiceLimits.maximumPayloadBytes
            else {
                statistics.add(.datagramsMalformed)
                return
            }
            (channel, payload) = parsed
        default:
            break
        }
        let now = ContinuousClock.now
        let effects = route.match.state.withLock { state -> RelayMatchState.Effects? in
            guard state.acceptDatagram(route.memberIndex, connectionID: header.connectionID, counter: header.counter, from: address, now: now) else {
                return nil
            }
            switch header.kind {
            case .clientProbe:
                state.probeAck(route.memberIndex, to: address, into: out)
                return RelayMatchState.Effects()
            case .clientVoice:
                return state.receiveVoice(from: route.memberIndex, channel: channel, payload: payload, now: now, statistics: statistics, datagrams: out)
            default:
                return state.receiveUnreliable(
                    from: route.memberIndex, recipients: recipients, payload: payload, now: now,
                    statistics: statistics, datagrams: out)
            }
        }
        guard let effects else {
            statistics.add(.datagramsReplayed)
            return
        }
        if !effects.wakes.isEmpty || effects.memberLeft { apply(effects, of: route.match) }
    }

    /// Sends datagrams decided outside the UDP receive threads (unreliable data that came over a WebSocket).
    func send(_ datagrams: DatagramOutbox) {
        guard !datagrams.isEmpty, let sender = datagramSender.withLock({ $0?.send }) else { return }
        sender.call(datagrams)
    }

    // MARK: Time

    /// Until shutdown: disconnects silent members, and stores every departure the relay decided (the last ones
    /// are stored before it returns).
    func run() async throws {
        await withTaskGroup(of: Void.self) { group in
            group.addTask { [self] in
                for await departure in departures.stream {
                    do {
                        try await recorder.left(matchID: departure.matchID, playerID: departure.playerID, now: departure.now)
                    } catch {
                        logger.info("storing a relay departure failed", metadata: [LogKey.matchID: "\(departure.matchID)", LogKey.error: "\(error)"])
                    }
                }
            }
            while !Task.isCancelled && !Task.isShuttingDownGracefully {
                try? await Task.sleep(for: Self.sweepInterval)
                let now = ContinuousClock.now
                for match in matches.withLock({ Array($0.values) }) {
                    let effects = match.state.withLock { $0.expire(now: now, statistics: statistics) }
                    if effects.memberLeft { apply(effects, of: match) }
                }
            }
            departures.continuation.finish()
        }
    }
}

extension APIError {
    /// A hosted match's players connect to the game's own server.
    static let hostedMatchHasNoRelay = APIError(.relayHostedMatch, "a hosted match has no relay: its players connect to the game's own server")
}

/// One match the relay serves, as the studio console shows it.
struct RelayMatchSummary: Sendable, Equatable {
    let matchID: String
    /// Members of the match, and how many have a connection now.
    let members: Int, connected: Int
    /// Reliable messages accepted from the members so far.
    let accepted: UInt64
    /// Reliable messages waiting for members to acknowledge them.
    let waiting: Int
}
