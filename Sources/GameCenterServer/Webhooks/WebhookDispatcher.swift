import AsyncHTTPClient
import Crypto
import Foundation
import GameCenterProtocol
import GameCenterStorage
import JMESPath
import Logging
import NIOCore
import ServiceLifecycle
import Synchronization

/// Turns stored events into webhook deliveries and delivers them: on one node at a time (the holder of a lease in
/// storage, renewed while it runs), so each event is delivered by one node, in order per endpoint and what the event is
/// about (its order key: a player, a match or a leaderboard).
///
/// - **Events** are read from where they are stored, never from memory, each source by id after a cursor kept in
///   storage: `score.accepted` from the `scores` table; `achievement.completed`, `invitation.answered`, `turn.changed`
///   and `save.changed` from the players' `events` (the copies of a turn-based change its participants each store are
///   one event, their id the change's); `occurrence.started` and `occurrence.ended` from `occurrence_events`;
///   `match.ended`, `score.quarantined` and `score.rejected` from the `game_events` outbox. A transaction can commit a smaller id after a larger one was read,
///   so skipped ids are looked for again for a while (``FollowedIDs``), and the stored cursor stays below the oldest
///   of them: a node that takes the lease over reads them again (a delivery already made for an event is not made
///   twice).
/// - **Deliveries** are stored with the cursor in one transaction, so a restart loses none. An endpoint's deliveries
///   about one player (match, leaderboard) are posted one at a time, oldest first (the others meanwhile, up to
///   ``lanes`` at once); a failure (not 2xx, or no answer within 5 s) is tried again after 1 s, 2 s, 4 s … (at most an hour), and
///   a delivery not made within a day is dead: the admin routes list and replay it.
/// - **Signatures**: `X-GameCenter-Webhook-Signature: v1=HEX`, the HMAC-SHA256 with the endpoint's secret of
///   `TIMESTAMP.BODY`, `TIMESTAMP` being `X-GameCenter-Webhook-Timestamp` (seconds since 1970, of this attempt).
final class WebhookDispatcher: Service, Sendable {
    let database: Database
    let clock: ServerClock
    let nodeID: String
    let logger: Logger

    /// How often new events are looked for while there are endpoints.
    static let scanInterval: Duration = .milliseconds(20)
    /// How long the lease lasts; it is renewed when less than half is left.
    static let leaseMillis: Int64 = 10_000
    /// How long an endpoint has to answer.
    static let timeout: TimeAmount = .seconds(5)
    /// Events read per scan.
    static let batchSize = 500
    /// Pending deliveries of an endpoint read per round.
    static let roundSize = 500
    /// Order keys posted at once per endpoint.
    static let lanes = 16
    /// Days a delivery made is kept (listed by the admin routes).
    static let keepDeliveredDays: Int64 = 7
    /// Days a dead delivery is kept for a replay.
    static let keepDeadDays: Int64 = 30

    private struct State {
        var leaseUntil: Int64 = 0
        /// The scores, players' events, occurrence events and game events seen, once this node holds the lease; nil
        /// otherwise.
        var scores: FollowedIDs?
        var playerEvents: FollowedIDs?
        var occurrences: FollowedIDs?
        var gameEvents: FollowedIDs?
        var endpoints: [WebhookEndpointRecord] = []
        var endpointsReadAt: ContinuousClock.Instant?
        /// When pending deliveries are looked for next.
        var nextDeliveryCheck: Int64 = 0
        /// Endpoints whose deliveries are being posted.
        var posting: Set<String> = []
        /// Whether deliveries were stored while some were being posted (the poster may have looked before they were).
        var storedWhilePosting = false
        /// When a node not holding the lease asks for it again.
        var nextLeaseTry: Int64 = 0
        /// When delivered and dead deliveries past their keeping were last forgotten.
        var forgottenAt: Int64 = 0

        /// Forgets what was seen of every source: it is read from the stored cursors again.
        mutating func forgetSeen() {
            scores = nil
            playerEvents = nil
            occurrences = nil
            gameEvents = nil
        }
    }
    private let state = Mutex(State())

    init(database: Database, clock: ServerClock, nodeID: String, logger: Logger) {
        self.database = database
        self.clock = clock
        self.nodeID = nodeID
        self.logger = logger
    }

    func run() async throws {
        await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                do {
                    try await self.step()
                } catch {
                    self.logger.warning("webhook dispatch failed; trying again", metadata: [LogKey.error: "\(error)"])
                    self.state.withLock { $0.forgetSeen() }
                }
                try? await Task.sleep(for: Self.scanInterval)
            }
        }
        let nodeID = nodeID
        try? await database.write { try await $0.releaseWebhookLease(nodeID: nodeID) }
    }

    /// One round: keep the lease, turn new events into deliveries, post what is due.
    func step() async throws {
        let endpoints = try await currentEndpoints()
        guard !endpoints.isEmpty, try await holdLease() else { return }
        let made = try await ingestScores(endpoints) + ingestPlayerEvents(endpoints) + ingestOccurrences(endpoints) + ingestGameEvents(endpoints)
        let now = clock.nowMillis()
        let check = state.withLock { state in
            if made > 0, !state.posting.isEmpty { state.storedWhilePosting = true }
            let due = made > 0 || now >= state.nextDeliveryCheck
            if due { state.nextDeliveryCheck = now + 1000 }
            return due
        }
        guard check else { return }
        let ids = endpoints.map(\.endpointID)
        let pending = try await database.read { try await $0.webhookEndpointsWithPendingDeliveries(among: ids) }
        try await forgetOldDeliveries(now: now)
        for endpoint in endpoints where pending.contains(endpoint.endpointID) {
            let start = state.withLock { $0.posting.insert(endpoint.endpointID).inserted }
            guard start else { continue }
            Task {
                await self.post(to: endpoint)
                self.state.withLock { state in
                    state.posting.remove(endpoint.endpointID)
                    if state.storedWhilePosting {
                        state.storedWhilePosting = false
                        state.nextDeliveryCheck = 0
                    }
                }
            }
        }
    }

    /// Forgets, every ten minutes, deliveries made more than a week ago and dead ones that died more than 30 days ago
    /// (a few thousand rows a round, so that reports never wait long behind it).
    private func forgetOldDeliveries(now: Int64) async throws {
        let due = state.withLock { state in
            guard now - state.forgottenAt > 600_000 else { return false }
            state.forgottenAt = now
            return true
        }
        guard due else { return }
        let day: Int64 = 86_400_000
        _ = try await database.write {
            try await $0.forgetWebhookDeliveries(deliveredBefore: now - Self.keepDeliveredDays * day, deadBefore: now - Self.keepDeadDays * day, limit: 5000)
        }
    }

    /// An endpoint was added or removed on this node: read them again at the next scan (other nodes do within a second).
    func endpointsChanged() {
        state.withLock { $0.endpointsReadAt = nil }
    }

    private func currentEndpoints() async throws -> [WebhookEndpointRecord] {
        if let (endpoints, readAt) = state.withLock({ state in state.endpointsReadAt.map { (state.endpoints, $0) } }),
            ContinuousClock.now - readAt < .seconds(1)
        {
            return endpoints
        }
        let endpoints = try await database.read { try await $0.webhookEndpoints() }
        state.withLock {
            $0.endpoints = endpoints
            $0.endpointsReadAt = .now
        }
        return endpoints
    }

    private func holdLease() async throws -> Bool {
        let now = clock.nowMillis()
        let (holding, mayTry) = state.withLock { ($0.leaseUntil - now > Self.leaseMillis / 2, now >= $0.nextLeaseTry) }
        if holding { return true }
        // Another node holds it: ask again in a second (it lapses 10 s after its holder stops renewing it).
        guard mayTry else { return false }
        state.withLock { $0.nextLeaseTry = now + 1000 }
        let nodeID = nodeID
        let held = try await database.write { try await $0.takeWebhookLease(nodeID: nodeID, now: now, until: now + Self.leaseMillis) }
        state.withLock { state in
            state.leaseUntil = held ? now + Self.leaseMillis : 0
            if !held { state.forgetSeen() }
        }
        return held
    }

    /// Stores a delivery of each score stored since the last scan (and of each that filled a hole) for every endpoint
    /// of its game and environment that hears `score.accepted`; answers how many it stored.
    private func ingestScores(_ endpoints: [WebhookEndpointRecord]) async throws -> Int {
        let listening = endpoints.filter { $0.events.contains(WebhookEventType.scoreAccepted.rawValue) }
        guard !listening.isEmpty else { return 0 }
        return try await ingest(
            source: "scores", start: listening.map(\.afterScoreID).min() ?? 0, keyPath: \.scores,
            read: { storage, holes, cursor in
                (try await storage.boardScores(ids: holes), try await storage.scores(after: cursor, limit: Self.batchSize))
            },
            id: \.record.scoreID,
            deliveries: { score in
                try listening.filter { $0.bundleID == score.bundleID && $0.environment == score.environment && score.record.scoreID > $0.afterScoreID }
                    .map { endpoint in
                        NewWebhookDelivery(
                            endpointID: endpoint.endpointID, eventID: "score-\(score.record.scoreID)",
                            eventType: WebhookEventType.scoreAccepted.rawValue, orderKey: score.record.playerID, payload: try Self.payload(score))
                    }
            })
    }

    /// The same for players' events that webhooks carry: achievements completed, invitations answered, turn-based
    /// changes and saves changed.
    private func ingestPlayerEvents(_ endpoints: [WebhookEndpointRecord]) async throws -> Int {
        let types: [WebhookEventType] = [.achievementCompleted, .invitationAnswered, .turnChanged, .saveChanged]
        let listening = endpoints.filter { endpoint in types.contains { endpoint.events.contains($0.rawValue) } }
        guard !listening.isEmpty else { return 0 }
        return try await ingest(
            source: "events", start: listening.map(\.afterEventID).min() ?? 0, keyPath: \.playerEvents,
            read: { storage, holes, cursor in
                (try await storage.playerEvents(ids: holes), try await storage.playerEvents(after: cursor, limit: Self.batchSize))
            },
            id: \.eventID,
            deliveries: { event in
                // An event that cannot be read is skipped, never retried forever.
                guard let made = (try? Self.webhookEvent(event)) ?? nil else { return [] }
                return listening.filter {
                    $0.bundleID == made.bundleID && $0.environment == event.environment && event.eventID > $0.afterEventID
                        && $0.events.contains(made.type.rawValue)
                }
                .map { made.delivery(to: $0) }
            })
    }

    /// The same for recurring leaderboards' occurrences that started or ended.
    private func ingestOccurrences(_ endpoints: [WebhookEndpointRecord]) async throws -> Int {
        let types: [WebhookEventType] = [.occurrenceStarted, .occurrenceEnded]
        let listening = endpoints.filter { endpoint in types.contains { endpoint.events.contains($0.rawValue) } }
        guard !listening.isEmpty else { return 0 }
        return try await ingest(
            source: "occurrences", start: listening.map(\.afterOccurrenceID).min() ?? 0, keyPath: \.occurrences,
            read: { storage, holes, cursor in
                (try await storage.occurrenceEvents(ids: holes), try await storage.occurrenceEvents(after: cursor, limit: Self.batchSize))
            },
            id: \.eventID,
            deliveries: { record in
                guard let made = (try? Self.webhookEvent(record)) ?? nil else { return [] }
                return listening.filter {
                    $0.bundleID == record.bundleID && $0.environment == record.environment && record.eventID > $0.afterOccurrenceID
                        && $0.events.contains(made.type.rawValue)
                }
                .map { made.delivery(to: $0) }
            })
    }

    /// The event types the `game_events` outbox carries.
    static let gameEventTypes: Set<String> = [
        WebhookEventType.matchEnded.rawValue, WebhookEventType.scoreQuarantined.rawValue, WebhookEventType.scoreRejected.rawValue,
    ]

    /// The same for the games' events of the `game_events` outbox (real-time matches that ended, scores quarantined or
    /// rejected).
    private func ingestGameEvents(_ endpoints: [WebhookEndpointRecord]) async throws -> Int {
        let listening = endpoints.filter { $0.events.contains(where: Self.gameEventTypes.contains) }
        guard !listening.isEmpty else { return 0 }
        return try await ingest(
            source: "game_events", start: listening.map(\.afterGameEventID).min() ?? 0, keyPath: \.gameEvents,
            read: { storage, holes, cursor in
                (try await storage.gameEvents(ids: holes), try await storage.gameEvents(after: cursor, limit: Self.batchSize))
            },
            id: \.eventID,
            deliveries: { record in
                guard let made = (try? Self.webhookEvent(record)) ?? nil else { return [] }
                return listening.filter {
                    $0.bundleID == record.bundleID && $0.environment == record.environment && record.eventID > $0.afterGameEventID
                        && $0.events.contains(made.type.rawValue)
                }
                .map { made.delivery(to: $0) }
            })
    }

    /// Reads a source's rows after its cursor and in its holes, stores their deliveries and the new cursor in one
    /// transaction (the stored cursor stays below the oldest hole), and remembers what was seen; answers how many
    /// deliveries it stored.
    private func ingest<Row: Sendable>(
        source: String, start: Int64, keyPath: WritableKeyPath<State, FollowedIDs?>,
        read: @escaping @Sendable (StorageSession, [Int64], Int64) async throws -> ([Row], [Row]), id: KeyPath<Row, Int64>,
        deliveries makeDeliveries: (Row) throws -> [NewWebhookDelivery]
    ) async throws -> Int {
        var seen: FollowedIDs
        if let known = state.withLock({ $0[keyPath: keyPath] }) {
            seen = known
        } else {
            seen = FollowedIDs(after: try await database.read { try await $0.webhookCursor(source) } ?? start)
        }
        let holes = Array(seen.holes.keys)
        let cursor = seen.cursor
        let (filled, new) = try await database.read { try await read($0, holes, cursor) }
        let instant = ContinuousClock.now
        seen.filled(filled.map { $0[keyPath: id] })
        seen.read(new.map { $0[keyPath: id] }, at: instant)
        seen.expire(at: instant)
        // Copies of one event (each participant's of a turn-based change) are one delivery per endpoint.
        var made: Set<[String]> = []
        let deliveries = try (filled + new).flatMap(makeDeliveries).filter { made.insert([$0.endpointID, $0.eventID]).inserted }
        let position = min(seen.cursor, (seen.holes.keys.min() ?? Int64.max) - 1)
        let now = clock.nowMillis()
        if !deliveries.isEmpty || position != cursor {
            try await database.write { storage in
                try await storage.insertWebhookDeliveries(deliveries, now: now, expiresAt: now + WebhookService.retryForMillis)
                try await storage.setWebhookCursor(source, to: position)
            }
        }
        state.withLock { $0[keyPath: keyPath] = seen }
        return deliveries.count
    }

    /// Posts an endpoint's due deliveries, a round at a time: the oldest pending ones (``roundSize``), in lanes by order
    /// key (the player, match or leaderboard an event is about), up to ``lanes`` lanes at once, each posting its
    /// deliveries in order and stopping at the first that fails; a key whose oldest delivery waits for a retry waits
    /// whole. Deliveries the
    /// endpoint took are noted in storage together at the end of each round (one write): after a crash, those not yet
    /// noted are posted again.
    private func post(to endpoint: WebhookEndpointRecord) async {
        do {
            while true {
                let pending = try await database.read {
                    try await $0.pendingWebhookDeliveries(endpointID: endpoint.endpointID, limit: Self.roundSize)
                }
                guard !pending.isEmpty else { return }
                let now = clock.nowMillis()
                var lanes: [(key: String, deliveries: [WebhookDeliveryRecord])] = []
                var laneOfKey: [String: Int] = [:]
                var waiting: Set<String> = []
                for delivery in pending where !waiting.contains(delivery.orderKey) {
                    if let lane = laneOfKey[delivery.orderKey] {
                        lanes[lane].deliveries.append(delivery)
                    } else if delivery.nextAttemptAt > now {
                        waiting.insert(delivery.orderKey)
                        state.withLock { $0.nextDeliveryCheck = min($0.nextDeliveryCheck, delivery.nextAttemptAt) }
                    } else {
                        laneOfKey[delivery.orderKey] = lanes.count
                        lanes.append((delivery.orderKey, [delivery]))
                    }
                }
                guard !lanes.isEmpty else { return }
                let delivered = try await withThrowingTaskGroup(of: [Int64].self) { group in
                    var started = 0
                    var delivered: [Int64] = []
                    for lane in lanes {
                        if started >= Self.lanes, let done = try await group.next() { delivered += done }
                        group.addTask { try await self.post(lane.deliveries, to: endpoint) }
                        started += 1
                    }
                    for try await done in group { delivered += done }
                    return delivered
                }
                let noted = clock.nowMillis()
                try await database.write { try await $0.markWebhooksDelivered(delivered, now: noted) }
                // Every lane stopped at a failure: wait for the retries.
                if delivered.isEmpty { return }
            }
        } catch {
            logger.warning("posting webhooks failed; trying again", metadata: ["endpoint": "\(endpoint.endpointID)", LogKey.error: "\(error)"])
        }
    }

    /// Posts one key's deliveries in order until one fails (noted, with its retry or its death); answers those taken.
    private func post(_ deliveries: [WebhookDeliveryRecord], to endpoint: WebhookEndpointRecord) async throws -> [Int64] {
        var delivered: [Int64] = []
        for delivery in deliveries {
            let attempts = delivery.attempts + 1
            guard let failure = await attempt(delivery, to: endpoint, attempt: attempts) else {
                delivered.append(delivery.deliveryID)
                continue
            }
            let after = clock.nowMillis()
            let delay = min(Int64(1000) << min(attempts - 1, 12), 3_600_000)
            let dead = after + delay > delivery.expiresAt
            try await database.write { storage in
                try await storage.markWebhookFailed(delivery.deliveryID, attempts: attempts, nextAttemptAt: after + delay, error: failure, dead: dead)
            }
            guard dead else {
                state.withLock { $0.nextDeliveryCheck = min($0.nextDeliveryCheck, after + delay) }
                return delivered
            }
            logger.warning(
                "a webhook delivery is dead after a day of failures",
                metadata: ["endpoint": "\(endpoint.endpointID)", "event": "\(delivery.eventID)", LogKey.error: "\(failure)"])
        }
        return delivered
    }

    /// Posts one delivery; nil when the endpoint took it, otherwise why not.
    private func attempt(_ delivery: WebhookDeliveryRecord, to endpoint: WebhookEndpointRecord, attempt: Int64) async -> String? {
        let request = Self.request(
            to: endpoint, eventID: delivery.eventID, type: delivery.eventType, attempt: attempt, body: delivery.payload)
        do {
            let response = try await HTTPClient.shared.execute(request, timeout: Self.timeout)
            _ = try? await response.body.collect(upTo: 64 * 1024)
            return (200..<300).contains(response.status.code) ? nil : "the endpoint answered \(response.status.code)"
        } catch {
            return "no answer: \(error)"
        }
    }

    /// A signed POST of `body` (JSON) to an endpoint: the headers every delivery (and every question to a score
    /// verifier) carries.
    static func request(to endpoint: WebhookEndpointRecord, eventID: String, type: String, attempt: Int64, body: String) -> HTTPClientRequest {
        let timestamp = String(Int64(Date().timeIntervalSince1970))
        var request = HTTPClientRequest(url: endpoint.url)
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/json")
        request.headers.add(name: "User-Agent", value: "OpenGameKit-Webhooks/1")
        request.headers.add(name: "X-GameCenter-Webhook-ID", value: eventID)
        request.headers.add(name: "X-GameCenter-Webhook-Type", value: type)
        request.headers.add(name: "X-GameCenter-Webhook-Attempt", value: String(attempt))
        request.headers.add(name: "X-GameCenter-Webhook-Timestamp", value: timestamp)
        request.headers.add(name: "X-GameCenter-Webhook-Signature", value: signature(secret: endpoint.secret, timestamp: timestamp, body: body))
        request.body = .bytes(ByteBuffer(string: body))
        return request
    }

    /// `v1=` and the HMAC-SHA256 of `timestamp.body` with `secret`, in lowercase hex.
    static func signature(secret: String, timestamp: String, body: String) -> String {
        let mac = HMAC<SHA256>.authenticationCode(for: Data("\(timestamp).\(body)".utf8), using: SymmetricKey(data: Data(secret.utf8)))
        return "v1=" + Credentials.hex(mac)
    }

    /// The kinds of turn-based change webhooks carry: those that change the match for every participant (not a
    /// reminder, a request to quit or a participant removing the match from their own list, which concern one player).
    static let turnChangeKinds: Set<TurnBasedEventInfo.Kind> = [
        .turnPassed, .turnSaved, .timedOut, .participantQuit, .invited, .accepted, .declined, .joined, .exchangeRequest, .exchangeCancelled,
        .exchangeCompleted, .exchangesMerged, .matchEnded,
    ]

    /// A player's event as a webhook event; nil for kinds webhooks do not carry. A turn-based change's id is the
    /// change's (`turn-MATCH-VERSION-KIND`, and the exchange's id for exchange kinds), the same in every participant's
    /// copy; the others' is `event-ID`.
    private static func webhookEvent(_ event: OrderedPlayerEvent) throws -> MadeWebhookEvent? {
        let decoder = WireCoding.makeDecoder()
        let payload = Data(event.payload.utf8)
        let seconds = Double(event.createdAt) / 1000
        let id = "event-\(event.eventID)"
        switch EventKind(rawValue: event.kind) {
        case .achievementCompleted:
            let completed = try decoder.decode(AchievementCompleted.self, from: payload)
            return try MadeWebhookEvent(
                .achievementCompleted, id: id, bundleID: completed.bundleID, environment: event.environment, orderKey: event.playerID,
                createdAt: seconds,
                AchievementCompletedData(
                    playerID: event.playerID, identifier: completed.identifier, completedAt: completed.completedAt.timeIntervalSince1970))
        case .inviteeAnswered:
            let answered = try decoder.decode(InviteeAnswered.self, from: payload)
            return try MadeWebhookEvent(
                .invitationAnswered, id: id, bundleID: answered.bundleID, environment: event.environment, orderKey: answered.matchID,
                createdAt: seconds,
                InvitationAnsweredData(matchID: answered.matchID, inviterID: event.playerID, playerID: answered.playerID, state: answered.state.rawValue))
        case .turnBased:
            let change = try decoder.decode(TurnBasedEventInfo.self, from: payload)
            guard turnChangeKinds.contains(change.kind) else { return nil }
            let match = change.match
            let exchangeID = change.exchange?.exchangeID
            return try MadeWebhookEvent(
                .turnChanged, id: "turn-\(match.matchID)-\(match.version)-\(change.kind.rawValue)" + (exchangeID.map { "-\($0)" } ?? ""),
                bundleID: match.bundleID, environment: event.environment, orderKey: match.matchID, createdAt: seconds,
                TurnChangedData(
                    matchID: match.matchID, version: match.version, kind: change.kind.rawValue, status: match.status,
                    ended: match.status == 2, actorIndex: change.actorIndex, currentIndex: match.currentIndex,
                    message: match.message, exchangeID: exchangeID,
                    participants: match.participants.map {
                        TurnParticipantData(playerID: $0.playerID, status: $0.status, outcome: $0.outcome, lastTurnDate: $0.lastTurnDate?.timeIntervalSince1970)
                    }))
        case .savedGame:
            let changed = try decoder.decode(SavedGameEventInfo.self, from: payload)
            return try MadeWebhookEvent(
                .saveChanged, id: id, bundleID: changed.bundleID, environment: event.environment, orderKey: event.playerID, createdAt: seconds,
                SaveChangedData(
                    playerID: event.playerID, name: changed.save.name,
                    versions: changed.save.versions.map {
                        SaveVersionData(
                            versionID: $0.versionID, deviceName: $0.deviceName, modifiedAt: $0.modifiedAt.timeIntervalSince1970, size: $0.size,
                            sha256: $0.sha256)
                    }))
        default:
            return nil
        }
    }

    /// An occurrence's start or end as a webhook event (`occurrence-ID`), ordered by its leaderboard; an end carries
    /// its final standings.
    private static func webhookEvent(_ record: OccurrenceEventRecord) throws -> MadeWebhookEvent? {
        let type: WebhookEventType
        switch LeaderboardOccurrenceEventKind(rawValue: record.kind) {
        case .started: type = .occurrenceStarted
        case .ended: type = .occurrenceEnded
        case nil: return nil
        }
        let standings =
            type == .occurrenceEnded
            ? try WireCoding.makeDecoder().decode([AdminScoreEntry].self, from: Data(record.standings.utf8)).map {
                OccurrenceStandingData(
                    rank: $0.score.rank, playerID: $0.score.playerID, alias: $0.alias, value: $0.score.value, context: $0.score.context,
                    date: $0.score.date.timeIntervalSince1970)
            } : nil
        return try MadeWebhookEvent(
            type, id: "occurrence-\(record.eventID)", bundleID: record.bundleID, environment: record.environment,
            orderKey: "leaderboard:\(record.category)", createdAt: Double(record.recordedAt) / 1000,
            OccurrenceData(
                category: record.category, occurrence: Double(record.occurrence) / 1000, occurrenceEnd: Double(record.occurrenceEnd) / 1000,
                standings: standings))
    }

    /// A game event of the outbox as a webhook event (`game-ID`), its stored data as it is.
    private static func webhookEvent(_ record: GameEventRecord) throws -> MadeWebhookEvent? {
        guard let type = WebhookEventType(rawValue: record.kind) else { return nil }
        return try MadeWebhookEvent(
            type, id: "game-\(record.eventID)", bundleID: record.bundleID, environment: record.environment, orderKey: record.orderKey,
            createdAt: Double(record.createdAt) / 1000, try JSONDecoder().decode(JSONValue.self, from: Data(record.payload.utf8)))
    }

    private static func payload(_ score: BoardScore) throws -> String {
        let event = WebhookEvent(
            id: "score-\(score.record.scoreID)", type: WebhookEventType.scoreAccepted.rawValue, createdAt: Double(score.record.earnedAt) / 1000,
            bundleID: score.bundleID, environment: score.environment,
            data: ScoreAcceptedData(
                playerID: score.record.playerID, category: score.record.category, value: score.record.value, context: score.record.context,
                date: Double(score.record.earnedAt) / 1000, occurrence: score.record.occurrence.map { Double($0) / 1000 }))
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        return String(decoding: try encoder.encode(event), as: UTF8.self)
    }
}

/// A stored event made into a webhook event: the same body for every endpoint that hears it.
private struct MadeWebhookEvent {
    let type: WebhookEventType
    let id: String
    let bundleID: String
    let orderKey: String
    /// The JSON body posted.
    let payload: String

    /// The event `id` of `type` with `data`, in its envelope.
    init<Data: Encodable>(
        _ type: WebhookEventType, id: String, bundleID: String, environment: String, orderKey: String, createdAt: Double, _ data: Data
    ) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let event = WebhookEvent(id: id, type: type.rawValue, createdAt: createdAt, bundleID: bundleID, environment: environment, data: data)
        self.type = type
        self.id = id
        self.bundleID = bundleID
        self.orderKey = orderKey
        payload = String(decoding: try encoder.encode(event), as: UTF8.self)
    }

    /// Its delivery to `endpoint`.
    func delivery(to endpoint: WebhookEndpointRecord) -> NewWebhookDelivery {
        NewWebhookDelivery(endpointID: endpoint.endpointID, eventID: id, eventType: type.rawValue, orderKey: orderKey, payload: payload)
    }
}
