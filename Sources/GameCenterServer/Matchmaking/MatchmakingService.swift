import Foundation
import GameCenterProtocol
import GameCenterStorage
import JMESPath
import Logging
import ServiceLifecycle
import Synchronization

/// The matchmaker: requests wait in an in-memory queue while their device's realtime channel is open; matches
/// and invitations are stored, and every member is told through stored events.
///
/// Several nodes: one node owns each game's queue at a time; the others forward their devices' requests to it and
/// tell it when those devices' channels close (``QueueRouting``).
package final class MatchmakingService: Service, ChannelPresence {
    let database: Database
    let clock: ServerClock
    let recorder: MatchRecorder
    /// Follows membership changes of running matches.
    let relay: RelayService
    let logger: Logger
    let metrics: ServerMetrics
    let limiter: RateLimiter
    /// Seconds an invitation lasts for games whose manifest sets none (``GameCenterApp/Configuration/invitationLifetime``).
    let invitationLifetime: Int
    let state: Mutex<MatchmakerState>
    /// Monotonic time for the queue (fill times, waits, activity).
    let monotonic: MonotonicClock
    /// Which node owns each game's queue, and how requests reach it.
    let queues: any QueueRouting
    /// Who is in which party, for requests with a party code.
    let parties: ActivityService
    /// The rule-based queues' metrics this node counts (it runs their passes).
    let queueMetrics = QueueMetrics()

    /// How long a party member waits for the host's match before playing without the host, and how long the host's
    /// match holds seats for the host's friends in the party who have not asked yet.
    static let partyWaitMillis: Int64 = 60_000
    /// How often fill times and invitation expiries are checked.
    static let tickInterval = Duration.milliseconds(25)
    /// Several nodes: how many ticks between two reads of which nodes are alive (when requests depend on others).
    static let ticksBetweenNodeChecks = 40

    init(
        database: Database, recorder: MatchRecorder, clock: ServerClock, relay: RelayService, metrics: ServerMetrics, limiter: RateLimiter,
        invitationLifetime: Int, queues: any QueueRouting, parties: ActivityService, monotonic: MonotonicClock = .system(), logger: Logger
    ) {
        self.parties = parties
        self.monotonic = monotonic
        self.queues = queues
        self.state = Mutex(MatchmakerState(nodeID: queues.nodeID))
        self.metrics = metrics
        self.limiter = limiter
        self.invitationLifetime = invitationLifetime
        self.database = database
        self.clock = clock
        self.recorder = recorder
        self.relay = relay
        self.logger = logger
    }

    /// Monotonic milliseconds for the queue (fill times, activity).
    var queueNow: Int64 { monotonic.nowMillis() }

    /// How long `game`'s invitations (and friends chosen to play it with) wait: its manifest's setting, else the
    /// server's.
    func invitationSeconds(for game: Game) -> Int {
        game.matchmaking.invitationSeconds ?? invitationLifetime
    }

    /// The queue a device's game and environment wait in.
    static func gameKey(_ device: DeviceIdentity) -> String {
        gameKey(bundleID: device.game.bundleID, environment: device.environment.rawValue)
    }

    /// The queue a game and environment wait in.
    static func gameKey(bundleID: String, environment: String) -> String {
        "\(bundleID)\n\(environment)"
    }

    /// The environment a game key (``gameKey(_:)``) names.
    static func environment(ofGameKey key: String) -> String {
        String(key.split(separator: "\n", omittingEmptySubsequences: false).last ?? "")
    }

    /// This node listens: devices reach it at `url` (nil: not known when it listens on every address and no
    /// `--public-url` says which one devices use).
    func serving(at url: String?) {
        state.withLock { $0.relayURL = url }
    }

    // MARK: Nodes

    /// The node that owns the queue of the device's game (this one, on a single node). A node that finds itself the
    /// owner for the first time abandons the forming matches a dead owner left.
    func queueOwner(of device: DeviceIdentity) async throws -> QueueOwner {
        try await queueOwner(bundleID: device.game.bundleID, environment: device.environment.rawValue)
    }

    func queueOwner(bundleID: String, environment: String) async throws -> QueueOwner {
        let (owner, tookOver) = try await queues.owner(of: Self.gameKey(bundleID: bundleID, environment: environment))
        if tookOver {
            try await recorder.abandonFormingMatches(
                now: clock.nowMillis(), deadNode: "", aliveAfter: clock.wallMillis() - NodeRegistry.healthyWithinMillis,
                game: (bundleID, environment), reason: "the server that held the game's matchmaking queue stopped")
        }
        return owner
    }

    /// Whether the session has a realtime channel open on this node.
    func isChannelOpen(_ sessionID: String) -> Bool {
        state.withLock { $0.openChannels[sessionID, default: 0] > 0 }
    }

    /// The id of the request the session waits with in this node's queue (a request, or an accepted invitation).
    func waitingRequestID(of session: AuthenticatedSession) -> String? {
        state.withLock { $0.waitingRequestID(playerID: session.playerID, sessionID: session.sessionID) }
    }

    /// A request forwarded by node `nodeID` says whether the device's realtime channel is open there.
    func remoteChannel(sessionID: String, on nodeID: String, open: Bool) {
        state.withLock { $0.remoteChannel(sessionID: sessionID, on: nodeID, open: open) }
    }

    /// Node `nodeID` says the device's last channel there closed: its requests leave the queue.
    func remoteChannelClosed(sessionID: String, on nodeID: String) async {
        let now = queueNow
        await apply(state.withLock { $0.remoteChannelClosed(sessionID: sessionID, on: nodeID, now: now) })
    }

    /// An invitation to a match forming here was declined outside the game on another node: the forming match
    /// counts it as answered.
    func declinedElsewhere(invitationID: String) async throws {
        guard (1...64).contains(invitationID.count), let invitation = try await database.read({ try await $0.invitation(id: invitationID) }),
            invitation.state == .declined
        else { return }
        try await closeInvitation(invitation, now: clock.nowMillis())
    }

    /// Reads which nodes are alive when it matters: requests of devices whose channel was on a node that died
    /// leave the queue, and requests this node forwarded to an owner that died fail.
    private func followNodes() async {
        let remote = state.withLock { !$0.remoteChannels.isEmpty }
        guard remote || queues.waitsElsewhere else { return }
        let aliveAfter = clock.wallMillis() - NodeRegistry.healthyWithinMillis
        guard let nodes = try? await database.read({ try await $0.nodes() }) else { return }
        let alive = Set(nodes.filter { $0.lastSeen > aliveAfter }.map(\.nodeID))
        await queues.failRequests(waitingAtNodesOtherThan: alive)
        let now = queueNow
        await apply(state.withLock { $0.forgetChannels(onNodesOtherThan: alive, now: now) })
    }

    // MARK: Requests

    /// Puts a request in the queue (inviting its friends first, when it names any).
    package func request(_ body: MatchRequestBody, device: DeviceIdentity, session: AuthenticatedSession) async throws -> MatchRequestStatus {
        let checked = try MatchRequestRules.check(body, game: device.game, playerID: session.playerID)
        let environment = device.environment.rawValue
        let key = RequestKey(playerID: session.playerID, requestID: checked.requestID)
        if let status = try await existingStatus(key) {
            guard status.state == .waiting else { throw APIError.requestIDReused }
            return status
        }
        var ruleParty: RuleParty?
        if let rules = checked.rules {
            let party = try await self.ruleParty(checked, rules, partyCode: body.partyCode, device: device, session: session)
            guard !checked.playersToInvite.isEmpty else { return try await ruleRequest(party, key: key, session: session) }
            // The invitees answer first, as in classic matchmaking; then the party enters the queue as one request.
            ruleParty = party
        }
        let opensLobby = !checked.playersToInvite.isEmpty || checked.matchID != nil
        // Each invitee counts against the inviter's limits, so inviting and cancelling cannot flood a friend.
        try limiter.take(
            [.init(name: .invitations, subject: session.playerID, cost: checked.playersToInvite.count)]
                + checked.playersToInvite.map { .init(name: .invitationsToOnePlayer, subject: "\(session.playerID) \($0)") })
        var (inviterAlias, baseMembers) = ("", [String]())
        if opensLobby {
            (inviterAlias, baseMembers) = try await database.read { storage in
                try await MatchRequestRules.checkInvitees(checked.playersToInvite, of: session.playerID, environment: environment, in: storage)
                let alias = try await storage.player(id: session.playerID)?.alias ?? ""
                guard let matchID = checked.matchID else { return (alias, [String]()) }
                return (alias, try await Self.runningMembers(matchID, adding: checked, device: device, playerID: session.playerID, in: storage))
            }
        }
        var seat: PartySeat?
        if let code = body.partyCode, ruleParty == nil { seat = try await partySeat(code, checked, device: device, playerID: session.playerID) }
        let ticket = Ticket(
            id: TicketID(0), playerID: session.playerID,
            key: QueueKey(game: Self.gameKey(device), hosted: checked.hosted, playerGroup: checked.playerGroup),
            minPlayers: checked.minPlayers, maxPlayers: checked.maxPlayers, playerAttributes: seat == nil ? checked.playerAttributes : 0,
            fillTime: device.game.matchmaking.fillMilliseconds, party: seat
        )
        let waiting = WaitingRequest(key: key, sessionID: session.sessionID, queuedAt: queueNow, game: Self.gameKey(device))
        let now = clock.nowMillis()
        let invitationSeconds = Int64(invitationSeconds(for: device.game))
        let (decisions, forming) = try state.withLock { state -> (MatchmakingDecisions, FormingMatch?) in
            guard state.isOpen(session.sessionID) else { throw APIError.channelClosed }
            guard !state.isWaiting(session.playerID) else { throw APIError.alreadyWaiting }
            let id = state.makeTicketID()
            let ticket = ticket.withID(id)
            state.addRequest(waiting, ticket: id)
            metrics.matchmakingRequests.increment()
            guard opensLobby else { return (state.record(state.queue.enqueue(ticket, now: queueNow), now: queueNow), nil) }
            let forming = FormingMatch(
                matchID: checked.matchID ?? Credentials.newID(prefix: "m_"), bundleID: device.game.bundleID, environment: environment,
                creatorPlayerID: session.playerID, creatorRequestID: checked.requestID,
                invitations: Dictionary(
                    uniqueKeysWithValues: checked.playersToInvite.map {
                        ($0, (Credentials.newID(prefix: "inv_"), now + invitationSeconds * 1000))
                    }),
                ruleParty: ruleParty
            )
            let outcome = state.queue.openInvitationLobby(
                creator: ticket, invited: checked.playersToInvite, baseMembers: baseMembers,
                openToAutoMatch: ruleParty == nil, now: queueNow)
            if let lobby = outcome.placements.first?.lobby {
                state.forming[lobby] = forming
                for (_, invitation) in forming.invitations { state.lobbyOfInvitation[invitation.invitationID] = lobby }
            }
            return (state.record(outcome, now: queueNow), forming)
        }
        if let forming, !checked.playersToInvite.isEmpty {
            let invitations = checked.playersToInvite.map { invitee in
                InvitationRecord(
                    invitationID: forming.invitations[invitee]!.invitationID, matchID: forming.matchID, bundleID: forming.bundleID,
                    environment: environment, inviter: session.playerID, invitee: invitee, hosted: checked.hosted,
                    minPlayers: checked.minPlayers, maxPlayers: checked.maxPlayers, message: checked.inviteMessage,
                    state: .pending, createdAt: now, expiresAt: forming.invitations[invitee]!.expiresAt
                )
            }
            let match = MatchRecord(
                matchID: forming.matchID, bundleID: forming.bundleID, environment: environment,
                hosted: checked.hosted, state: .forming, createdAt: now, nodeID: queues.nodeID)
            do {
                try await recorder.invite(invitations, match: match, inviterAlias: inviterAlias)
            } catch {
                try? await cancel(requestID: checked.requestID, session: session)
                throw error
            }
        }
        // Read before the match (if any) is stored: the answer then comes from memory, not another query.
        let status = memoryStatus(key)
        await apply(decisions)
        if let status { return status }
        return try await self.status(requestID: checked.requestID, session: session)
    }

    /// What a request naming a queue brings to it: the queue, its rule sets and each player's properties.
    private func ruleParty(
        _ checked: CheckedMatchRequest, _ rules: CheckedRuleFields, partyCode: String?, device: DeviceIdentity, session: AuthenticatedSession
    ) async throws -> RuleParty {
        var properties = rules.properties
        if let partyCode {
            // A party code through a queue is one more property its rules compare (Apple's party-code rule).
            let (party, _, _) = try await parties.party(code: partyCode, device: device, playerID: session.playerID)
            properties["partyCode"] = properties["partyCode"] ?? .string(party.code)
        }
        let game = device.game
        return RuleParty(
            key: RuleQueues.Key(game: Self.gameKey(device), queue: rules.queue.referenceName, hosted: checked.hosted), ruleSet: rules.ruleSet,
            experiment: rules.queue.experimentRuleSet.flatMap { game.matchmaking.ruleSets[$0] }, minPlayers: checked.minPlayers,
            maxPlayers: checked.maxPlayers, properties: properties, recipientProperties: rules.recipientProperties,
            attributes: [
                "appVersion": .string(rules.appVersion), "bundleId": .string(game.bundleID), "platform": .string(rules.platform),
                "locale": .string(device.locale),
            ])
    }

    /// Puts a request naming a queue (and inviting nobody) into that queue: its rule set's passes match it.
    private func ruleRequest(_ party: RuleParty, key: RequestKey, session: AuthenticatedSession) async throws -> MatchRequestStatus {
        let waiting = WaitingRequest(key: key, sessionID: session.sessionID, queuedAt: queueNow, game: party.key.game)
        try state.withLock { state in
            guard state.isOpen(session.sessionID) else { throw APIError.channelClosed }
            guard !state.isWaiting(session.playerID) else { throw APIError.alreadyWaiting }
            let id = state.makeTicketID()
            state.addRequest(waiting, ticket: id)
            metrics.matchmakingRequests.increment()
            // Ages (`secondsInQueue`) follow the server's clock, which `--test-clock` lets tests move.
            let request = party.request(ticket: id, inviter: session.playerID, invitees: [], arrival: clock.nowMillis())
            state.ruleQueues.enqueue(
                request, playerID: session.playerID, key: party.key, ruleSet: party.ruleSet, experiment: party.experiment, now: queueNow)
        }
        if let status = memoryStatus(key) { return status }
        return try await status(requestID: key.requestID, session: session)
    }

    /// Runs the passes of the rule-based queues that are due, outside the lock, and starts their matches.
    private func runRulePasses() async {
        let due = state.withLock { [queueNow] in $0.ruleQueues.takeDuePasses(now: queueNow) }
        let now = clock.nowMillis()
        for pass in due {
            let started = ContinuousClock.now
            let result = pass.matcher.pass(pass.requests, now: now)
            metrics.rulePassSeconds.record(duration: started.duration(to: .now))
            metrics.ruleEvaluations.increment(by: result.evaluations)
            let players = Dictionary(uniqueKeysWithValues: pass.requests.map { ($0.ticket, $0.playerCount) })
            let experimentMatches = pass.experiment?.pass(pass.requests, now: now).matches ?? []
            if pass.experiment != nil { metrics.experimentRuleMatches.increment(by: experimentMatches.count) }
            queueMetrics.record(QueueMetrics.Queue(pass.key), at: now) { bucket in
                bucket.queueSizes.add(Double(pass.requests.count))
                for (rule, tally) in result.tallies {
                    bucket.rules[rule, default: .init()].merge(
                        .init(
                            trueCount: Int64(tally.trueCount), falseCount: Int64(tally.falseCount), numberCount: Int64(tally.numberCount),
                            numberSum: tally.numberSum, errors: Int64(tally.errors)))
                }
                for match in experimentMatches { bucket.experimentMatchSizes.add(Double(match.tickets.reduce(0) { $0 + (players[$1] ?? 1) })) }
            }
            // Waits are measured on the clock the requests' arrivals were read from (the server's).
            let matchedAt = clock.nowMillis()
            let (decisions, waits, stillWaiting, matchSizes) = state.withLock { [queueNow] state in
                let (outcome, waits) = state.ruleQueues.apply(result.matches, key: pass.key, now: matchedAt)
                let sizes = outcome.started.map { $0.playerProperties?.count ?? $0.members.count }
                return (state.record(outcome, now: queueNow), waits, state.ruleQueues.waitingCount(in: pass.key), sizes)
            }
            queueMetrics.record(QueueMetrics.Queue(pass.key), at: matchedAt) { bucket in
                for size in matchSizes { bucket.matchSizes.add(Double(size)) }
            }
            metrics.recordRulePass(
                queue: pass.key.queue, environment: Self.environment(ofGameKey: pass.key.game), matchedWaits: waits, stillWaiting: stillWaiting,
                tallies: result.tallies)
            await apply(decisions)
        }
    }

    /// Requests that entered the device's game's queue `queueName` in the last 60 s (Apple's `queryQueueActivity`).
    func queueActivity(_ queueName: String, device: DeviceIdentity) throws -> QueueActivity {
        guard device.game.matchmaking.queues[queueName] != nil else {
            throw APIError.unknownQueue(queueName, known: device.game.matchmaking.queues.keys.sorted())
        }
        let now = queueNow
        let requests = state.withLock { $0.ruleQueues.activity(game: Self.gameKey(device), queue: queueName, now: now) }
        return QueueActivity(queueName: queueName, requests: requests, windowSeconds: Int(RuleQueues.activityWindowMillis / 1000))
    }

    /// A party member's place in its party: the request's sizes must be the activity's, and it invites nobody.
    private func partySeat(_ code: String, _ request: CheckedMatchRequest, device: DeviceIdentity, playerID: String) async throws -> PartySeat {
        guard request.playersToInvite.isEmpty, request.matchID == nil else {
            throw APIError.matchRequestInvalid("a party's request invites nobody and adds to no match: its party's players are matched together")
        }
        let (party, isFriend, friends) = try await parties.party(code: code, device: device, playerID: playerID)
        let definition = try ActivityService.definition(party.definition, in: device.game)
        let sizes = (max(2, definition.minPlayers ?? 2), definition.maxPlayers ?? 2)
        guard (request.minPlayers, request.maxPlayers) == sizes else {
            throw APIError.matchRequestInvalid(
                "the party \(party.code) plays '\(definition.identifier)': minPlayers \(sizes.0) and maxPlayers \(sizes.1), not \(request.minPlayers) and \(request.maxPlayers)"
            )
        }
        let role: PartySeat.Role = party.hostID == playerID ? .host : isFriend ? .hostFriend : .guest
        return PartySeat(code: party.code, role: role, hostWait: Self.partyWaitMillis, friends: friends)
    }

    /// The members of a running match the caller asks to add players to, the caller excluded.
    private static func runningMembers(
        _ matchID: String, adding request: CheckedMatchRequest, device: DeviceIdentity, playerID: String, in storage: StorageSession
    ) async throws -> [String] {
        guard let match = try await storage.match(id: matchID), match.bundleID == device.game.bundleID,
            match.environment == device.environment.rawValue
        else { throw APIError.noSuchMatch }
        let members = try await storage.matchMembers(matchID).filter { $0.leftAt == nil }.map(\.playerID)
        guard match.state == .started, members.contains(playerID), match.hosted == request.hosted else { throw APIError.matchNotRunning }
        guard members.count + request.playersToInvite.count < request.maxPlayers else {
            throw APIError.matchRequestInvalid(
                "the match has \(members.count) players\(request.playersToInvite.isEmpty ? "" : " and \(request.playersToInvite.count) invited"); maxPlayers \(request.maxPlayers) leaves no seat to add"
            )
        }
        return members.filter { $0 != playerID }
    }

    /// Where one of the caller's requests (or invitation acceptances) stands.
    /// `explain`: with why a waiting request of a rule-based queue still waits (its rules are evaluated against the
    /// queue's other waiting requests, outside the matchmaker's lock).
    func status(requestID: String, session: AuthenticatedSession, explain: Bool = false) async throws -> MatchRequestStatus {
        try await status(RequestKey(playerID: session.playerID, requestID: try MatchRequestRules.requestID(requestID)), explain: explain)
    }

    /// Where the request `key` stands, with why it still waits when `explain` is set (see
    /// ``status(requestID:session:explain:)``).
    func status(_ key: RequestKey, explain: Bool) async throws -> MatchRequestStatus {
        guard var status = try await existingStatus(key) else {
            return MatchRequestStatus(requestID: key.requestID, state: .gone, matchID: nil, players: 0, maxPlayers: 0, invitees: [])
        }
        if explain, status.state == .waiting {
            // The server's clock, as the requests' arrivals and their ages (`secondsInQueue`).
            let now = clock.nowMillis()
            let input = state.withLock { state in
                (state.ticketOfRequest[key] ?? state.queuedPartyTicket(playerID: key.playerID, requestID: key.requestID)).flatMap { ticket in
                    state.ruleQueues.explanationInput(ticket, now: now).map { (ticket, $0) }
                }
            }
            if let (ticket, (matcher, requests, estimate)) = input {
                status.explanation = matcher.explain(ticket, among: requests, now: now, estimate: estimate)
            }
        }
        return status
    }

    private func existingStatus(_ key: RequestKey) async throws -> MatchRequestStatus? {
        if let memory = memoryStatus(key) { return memory }
        guard let matchID = try await database.read({ try await $0.matchID(playerID: key.playerID, requestID: key.requestID) }) else {
            return nil
        }
        return MatchRequestStatus(requestID: key.requestID, state: .matched, matchID: matchID, players: 0, maxPlayers: 0, invitees: [])
    }

    /// The status of a request that waits, or whose match started but is not stored yet.
    private func memoryStatus(_ key: RequestKey) -> MatchRequestStatus? {
        state.withLock { state -> MatchRequestStatus? in
            if let matchID = state.startedNotStored[key] {
                return MatchRequestStatus(requestID: key.requestID, state: .matched, matchID: matchID, players: 0, maxPlayers: 0, invitees: [])
            }
            if let ticket = state.ticketOfRequest[key] ?? state.queuedPartyTicket(playerID: key.playerID, requestID: key.requestID),
                let request = state.ruleQueues.request(ticket)
            {
                let party = state.queuedParties[ticket]
                return MatchRequestStatus(
                    requestID: key.requestID, state: .waiting, matchID: nil, players: request.playerCount,
                    maxPlayers: request.playerRange?.upperBound ?? 0,
                    invitees: (party?.invitees ?? []).map { InviteeStatus(playerID: $0, state: .accepted) })
            }
            let lobbyID =
                state.ticketOfRequest[key].flatMap { state.queue.lobby(containing: $0)?.id }
                ?? state.acceptedLobby(playerID: key.playerID, requestID: key.requestID)
            guard let lobbyID, let lobby = state.queue.lobby(lobbyID) else { return nil }
            let forming = state.forming[lobbyID]
            let invitees = (forming?.invitations.keys.sorted() ?? []).map { player in
                InviteeStatus(
                    playerID: player,
                    state: lobby.pendingInvitations.contains(player)
                        ? .pending
                        : forming?.accepted[player] != nil ? .accepted : .declined)
            }
            return MatchRequestStatus(
                requestID: key.requestID, state: .waiting, matchID: forming?.matchID,
                players: lobby.members.count, maxPlayers: lobby.maxPlayers, invitees: invitees)
        }
    }

    /// Takes a waiting request (or an accepted invitation) out of the queue; a second cancel finds nothing.
    func cancel(requestID: String, session: AuthenticatedSession) async throws {
        let key = RequestKey(playerID: session.playerID, requestID: try MatchRequestRules.requestID(requestID))
        let now = queueNow
        let decisions = try state.withLock { state -> MatchmakingDecisions in
            if let ticket = state.ticketOfRequest[key] {
                return try state.remove(ticket, now: now)
            }
            if let lobby = state.acceptedLobby(playerID: key.playerID, requestID: key.requestID) {
                return try state.removeInvitee(key.playerID, from: lobby, now: now)
            }
            if let party = state.queuedPartyTicket(playerID: key.playerID, requestID: key.requestID) {
                state.leaveParty(key.playerID, ticket: party)
                return MatchmakingDecisions()
            }
            throw APIError.noSuchRequest
        }
        await apply(decisions)
    }

    // MARK: Invitations

    /// The caller's open invitations for the device's game.
    func invitations(device: DeviceIdentity, session: AuthenticatedSession) async throws -> [InvitationInfo] {
        let now = clock.nowMillis()
        return try await database.read { storage in
            let invitations = try await storage.pendingInvitations(
                invitee: session.playerID, bundleID: device.game.bundleID,
                environment: device.environment.rawValue, now: now)
            let inviters = try await storage.players(ids: Array(Set(invitations.map(\.inviter))), environment: nil)
            let aliases = Dictionary(uniqueKeysWithValues: inviters.map { ($0.playerID, $0.alias) })
            return invitations.map { MatchRecorder.info($0, inviterAlias: aliases[$0.inviter] ?? "") }
        }
    }

    /// Joins the inviter's forming match; the match is pushed when it starts.
    func accept(invitationID: String, _ body: AcceptInvitation, device: DeviceIdentity, session: AuthenticatedSession) async throws -> MatchRequestStatus {
        let requestID = try MatchRequestRules.requestID(body.requestID)
        let invitation = try await openInvitation(invitationID, of: session.playerID, in: device.environment, game: device.game.bundleID)
        let key = RequestKey(playerID: session.playerID, requestID: requestID)
        try state.withLock { state in
            guard state.isOpen(session.sessionID) else { throw APIError.channelClosed }
            guard !state.isWaiting(session.playerID) else { throw APIError.alreadyWaiting }
            guard state.ticketOfRequest[key] == nil, state.startedNotStored[key] == nil else { throw APIError.requestIDReused }
        }
        let now = clock.nowMillis()
        guard let answered = try await database.write({ try await $0.answerInvitation(id: invitation.invitationID, state: .accepted, now: now) }) else {
            throw APIError.invitationClosed
        }
        let (decisions, creatorRequestID) = try state.withLock { state -> (MatchmakingDecisions, String) in
            guard let lobby = state.lobbyOfInvitation.removeValue(forKey: invitationID), let forming = state.forming[lobby] else {
                throw APIError.invitationClosed
            }
            state.addAcceptedInvitee(session.playerID, AcceptedInvitee(requestID: requestID, sessionID: session.sessionID), to: lobby)
            do {
                let decisions = try state.record(
                    state.queue.answer(lobby: lobby, player: session.playerID, accepted: true, now: queueNow), now: queueNow)
                state.queueReadyParties(arrival: now, now: queueNow)
                return (decisions, forming.creatorRequestID)
            } catch {
                state.removeAcceptedInvitee(session.playerID, from: lobby)
                throw APIError.invitationClosed
            }
        }
        try await recorder.answered(answered, creatorRequestID: creatorRequestID, state: .accepted, now: now)
        await apply(decisions)
        return try await status(requestID: requestID, session: session)
    }

    /// Says no to an invitation; the inviter is told.
    func decline(invitationID: String, device: DeviceIdentity, session: AuthenticatedSession) async throws {
        try await decline(try await openInvitation(invitationID, of: session.playerID, in: device.environment, game: device.game.bundleID))
    }

    /// Declines an invitation ``openInvitation(_:of:in:game:)`` found; the inviter is told.
    func decline(_ invitation: InvitationRecord) async throws {
        let now = clock.nowMillis()
        guard let answered = try await database.write({ try await $0.answerInvitation(id: invitation.invitationID, state: .declined, now: now) }) else {
            throw APIError.invitationClosed
        }
        try await closeInvitation(answered, now: now)
    }

    /// An invitation addressed to `playerID` in `environment` (and for `game`, when given) that can still be
    /// answered. Another player's invitation is answered as no invitation at all: `noSuchInvitation`.
    func openInvitation(
        _ invitationID: String, of playerID: String, in environment: GameCenterProtocol.Environment, game bundleID: String?
    ) async throws -> InvitationRecord {
        guard (1...64).contains(invitationID.count),
            let invitation = try await database.read({ try await $0.invitation(id: invitationID) }),
            invitation.invitee == playerID, bundleID == nil || invitation.bundleID == bundleID,
            invitation.environment == environment.rawValue
        else { throw APIError.noSuchInvitation }
        guard invitation.state == .pending, invitation.expiresAt > clock.nowMillis() else { throw APIError.invitationClosed }
        return invitation
    }

    /// Counts a declined (or expired) invitation as answered: the inviter is told, the forming match may start.
    private func closeInvitation(_ invitation: InvitationRecord, now: Int64) async throws {
        let answer = state.withLock { state -> (MatchmakingDecisions, String)? in
            guard let lobby = state.lobbyOfInvitation.removeValue(forKey: invitation.invitationID),
                let forming = state.forming[lobby],
                let outcome = try? state.queue.answer(lobby: lobby, player: invitation.invitee, accepted: false, now: queueNow)
            else { return nil }
            let decisions = state.record(outcome, now: queueNow)
            state.queueReadyParties(arrival: now, now: queueNow)
            return (decisions, forming.creatorRequestID)
        }
        guard let (decisions, creatorRequestID) = answer else { return }
        try await recorder.answered(invitation, creatorRequestID: creatorRequestID, state: .declined, now: now)
        await apply(decisions)
    }

    // MARK: Matches and activity

    /// A started match the caller is (or was) a member of; `players` lists the members still in it.
    func match(id: String, session: AuthenticatedSession) async throws -> MatchInfo {
        guard (1...64).contains(id.count) else { throw APIError.noSuchMatch }
        return try await database.read { storage in
            guard let match = try await storage.match(id: id) else { throw APIError.noSuchMatch }
            let members = try await storage.matchMembers(id)
            guard let me = members.first(where: { $0.playerID == session.playerID }) else { throw APIError.noSuchMatch }
            return MatchInfo(
                matchID: id, bundleID: match.bundleID, hosted: match.hosted,
                players: members.filter { $0.leftAt == nil }.map(\.playerID), requestID: me.requestID, relayURL: match.relayURL)
        }
    }

    /// The caller leaves a started match; the others are told.
    func leave(matchID: String, session: AuthenticatedSession) async throws {
        guard (1...64).contains(matchID.count) else { throw APIError.noSuchMatch }
        try await recorder.left(matchID: matchID, playerID: session.playerID, now: clock.nowMillis())
        await relay.membershipChanged(matchID: matchID)
    }

    /// The requests waiting in this node's queues now, by game and environment, with how long each has waited (in
    /// milliseconds), for the studio console.
    func waitingRequests() -> [(bundleID: String, environment: String, waits: [Int64])] {
        let now = queueNow
        let byGame = state.withLock { state in Dictionary(grouping: state.requests.values, by: \.game) }
        return byGame.map { game, requests in
            let parts = game.split(separator: "\n", maxSplits: 1).map(String.init)
            return (parts.first ?? "", parts.count > 1 ? parts[1] : "", requests.map { now - $0.queuedAt }.sorted())
        }.sorted { ($0.bundleID, $0.environment) < ($1.bundleID, $1.environment) }
    }

    /// How many realtime channels are open on this node and how many requests wait in its queues, for the figures it
    /// reports with its heartbeat.
    func nodeCounts() -> (channels: Int, waiting: Int) {
        state.withLock { state in (state.openChannels.values.reduce(0, +), state.requests.count) }
    }

    /// Players of the device's game (and group) who asked for a match within the activity window.
    func activity(device: DeviceIdentity, playerGroup: UInt32?) -> MatchmakingActivity {
        let window = Int64(Limits.matchmakingActivityWindowSeconds) * 1000
        let now = queueNow
        let players = state.withLock { $0.queue.activity(game: Self.gameKey(device), playerGroup: playerGroup, since: now - window) }
        return MatchmakingActivity(players: players, windowSeconds: Limits.matchmakingActivityWindowSeconds)
    }

    // MARK: Channels

    package func channelOpened(sessionID: String) {
        state.withLock { $0.channelOpened(sessionID: sessionID) }
    }

    /// The device's last channel closed: its requests leave the queue (it could not be told of a match), here and
    /// at the owners of other games' queues its requests went to.
    func channelClosed(sessionID: String) async {
        let now = queueNow
        let (decisions, last) = state.withLock { $0.channelClosed(sessionID: sessionID, now: now) }
        await apply(decisions)
        if last { await queues.channelClosed(sessionID: sessionID) }
    }

    /// Counts the requests that left rule-based queues since the last call in their queues' metrics; those taken out
    /// (cancelled, their channel closed) left now.
    private func countDepartures() {
        let departures = state.withLock { $0.ruleQueues.takeDepartures() }
        if !departures.isEmpty { queueMetrics.count(departures, now: clock.nowMillis()) }
    }

    /// Stores what the queue decided and tells the players.
    func apply(_ decisions: MatchmakingDecisions) async {
        // Parties whose invitations were answered by any change enter their queues (`accept` queues its own at once).
        state.withLock { [clock, queueNow] in $0.queueReadyParties(arrival: clock.nowMillis(), now: queueNow) }
        countDepartures()
        for wait in decisions.waitMilliseconds { metrics.matchmakingWait.recordMilliseconds(wait) }
        for decision in decisions.started {
            do {
                try await recorder.started(decision.lobby, now: clock.nowMillis())
                if decision.lobby.isStored { await relay.membershipChanged(matchID: decision.lobby.matchID) }
            } catch {
                logger.error(
                    "a match could not be stored; its players are told it failed",
                    metadata: [LogKey.matchID: "\(decision.lobby.matchID)", LogKey.error: "\(error)"])
                try? await recorder.failed(decision.lobby, reason: "the match could not be stored", now: clock.nowMillis())
            }
            state.withLock { state in
                for participant in decision.lobby.participants {
                    if let requestID = participant.requestID {
                        state.startedNotStored.removeValue(forKey: RequestKey(playerID: participant.playerID, requestID: requestID))
                    }
                }
            }
        }
        for decision in decisions.failed {
            do {
                try await recorder.failed(decision.lobby, reason: decision.reason, now: clock.nowMillis())
            } catch {
                logger.error("a failed match could not be recorded", metadata: [LogKey.matchID: "\(decision.lobby.matchID)", LogKey.error: "\(error)"])
            }
        }
    }

    // MARK: Time

    /// Starts matches whose fill time ran out and answers expired invitations as declined, until shutdown.
    package func run() async throws {
        // This node's forming matches died with its previous run (and, on a single node, every forming match).
        try await recorder.abandonFormingMatches(
            now: clock.nowMillis(), deadNode: queues.nodeID,
            aliveAfter: queues.isShared ? clock.wallMillis() - NodeRegistry.healthyWithinMillis : Int64.max, game: nil,
            reason: "the server restarted")
        // The queues' metrics are stored beside the ticks: a slow or stopped database never holds the queue up.
        let flusher = Task {
            while (try? await Task.sleep(for: QueueMetrics.flushInterval)) != nil { await flushQueueMetrics() }
        }
        var ticks = 0
        while !Task.isCancelled && !Task.isShuttingDownGracefully {
            try? await Task.sleep(for: Self.tickInterval)
            ticks += 1
            if ticks % Self.ticksBetweenNodeChecks == 0 { await followNodes() }
            let now = queueNow
            await apply(state.withLock { state in state.record(state.queue.tick(now: now), now: now) })
            await runRulePasses()
            let wallNow = clock.nowMillis()
            let expired = state.withLock { state in
                state.forming.values.flatMap { forming in forming.invitations.values.filter { $0.expiresAt <= wallNow }.map(\.invitationID) }
                    .filter { state.lobbyOfInvitation[$0] != nil }
            }
            for invitationID in expired {
                guard let invitation = try? await database.read({ try await $0.invitation(id: invitationID) }) else { continue }
                try? await closeInvitation(invitation, now: wallNow)
            }
        }
        flusher.cancel()
        await flushQueueMetrics()
    }

    /// Stores the queues' metrics counted since the last flush (kept for the next one when the database fails).
    func flushQueueMetrics() async {
        countDepartures()
        do {
            try await queueMetrics.flush(into: database, now: clock.nowMillis())
        } catch {
            logger.warning("matchmaking queue metrics could not be stored; they are tried again", metadata: [LogKey.error: "\(error)"])
        }
    }
}

extension Ticket {
    /// The same request under the id the matchmaker assigned.
    func withID(_ id: TicketID) -> Ticket {
        Ticket(
            id: id, playerID: playerID, key: key, minPlayers: minPlayers, maxPlayers: maxPlayers,
            playerAttributes: playerAttributes, fillTime: fillTime, party: party)
    }
}
