import Foundation
import GameCenterProtocol
import GameCenterStorage
import Logging
import ServiceLifecycle
import Synchronization

/// The bus of several nodes on one PostgreSQL: each notice is delivered to this node's subscribers at once and sent
/// to the other nodes, which hand it to their subscribers. With ``Wakeups/listen`` notices go by `NOTIFY` on
/// ``channel`` and every node listens on a connection of its own; with ``Wakeups/poll(every:)`` (databases without
/// `NOTIFY`, such as CockroachDB) they are rows of `node_notices` that every node reads at that interval, from the last
/// it read, looking again for rows that committed late (``FollowedIDs``).
///
/// Notices are wake-ups only: events stay rows in storage with their per-player sequence, and a subscriber re-reads
/// from its cursor. So a node whose listening connection (or reading) failed, once it listens (reads) again, wakes
/// every subscriber of its own (``InProcessEventBus/wakeEveryone()``) and nothing is lost. Notices queue for sending
/// (at most ``maximumQueued``) and go ``batchSize`` to a statement; when the queue overflows, the other nodes are
/// told to wake everyone instead. Run it as a service of the node.
final class PostgresEventBus: EventBus, Service {
    /// The notification channel.
    static let channel = "gamecenter_bus"
    /// Notices waiting to be sent to the other nodes.
    static let maximumQueued = 10_000
    /// Notices sent in one statement.
    static let batchSize = 100
    /// Between two notices that this node stored score reports: one says so for every report of the interval, so
    /// that a node taking thousands of reports a second sends a hundred `NOTIFY`s, not thousands (each commits under
    /// PostgreSQL's notification lock; one per report cost a fifth of the single score reports' throughput).
    static let scoresNoticeInterval: Duration = .milliseconds(10)
    /// How long a polled notice is kept: a node that could not read for longer wakes everyone when it reads again.
    static let polledNoticeLifetimeMilliseconds: Int64 = 5 * 60 * 1000
    /// How often a polling node forgets notices older than ``polledNoticeLifetimeMilliseconds``.
    static let forgetNoticesInterval: Duration = .seconds(10)

    /// How a node learns of the other nodes' notices.
    enum Wakeups: Sendable, Equatable {
        /// PostgreSQL's `LISTEN/NOTIFY`: at once.
        case listen
        /// Reading `node_notices` every `interval` (databases without `NOTIFY`): within about the interval.
        case poll(every: Duration)
    }

    /// What one notice says on the wire (JSON): the sending node, and a player whose events grew, a session that
    /// ended, `scores` (the node stored score reports), a player whose scores in `game` were erased
    /// (`scoresRemovedOf`), that the node reloaded the manifests (`manifests`), or `everyone` (notices were lost:
    /// re-read all).
    private struct Wire: Codable {
        var node: String
        var player: String?
        var session: String?
        var reason: String?
        var scores: Bool?
        var scoresRemovedOf: String?
        var game: String?
        var manifests: Bool?
        var everyone: Bool?
        /// When the sending node published it (server clock, ms), for the bus's lag.
        var sentAt: Int64?
    }

    /// Notices waiting to be sent.
    private struct Outgoing {
        var notices: [Wire] = []
        var overflowed = false
    }

    private let local = InProcessEventBus()
    private let database: Database
    /// Dates the polled notices (the server's clock, as every stored time).
    private let clock: ServerClock
    /// Where the lag between another node's notice and its arrival here is recorded.
    private let metrics: ServerMetrics
    private let wakeups: Wakeups
    /// This node's id: its own notices come back to it and are skipped.
    private let node: String
    private let logger: Logger
    private let outgoing = Mutex(Outgoing())
    private let sessionEndedElsewhere = Mutex<Callback<String>?>(nil)
    private let scoresStoredElsewhere = Mutex<Callback<Void>?>(nil)
    private let scoresRemovedElsewhere = Mutex<Callback<Void>?>(nil)
    private let manifestsReloadedElsewhere = Mutex<Callback<Void>?>(nil)
    /// Whether this node heard the others before: only hearing them *again* may have missed a manifest reload (the
    /// node loaded its manifests just before it first listened).
    private let heardBefore = Mutex(false)
    private let wakeSender: AsyncStream<Void>.Continuation
    private let senderWakes: AsyncStream<Void>
    private let scoresWake: AsyncStream<Void>.Continuation
    private let scoresWakes: AsyncStream<Void>

    init(database: Database, node: String, wakeups: Wakeups = .listen, clock: ServerClock, metrics: ServerMetrics, logger: Logger) {
        self.database = database
        self.clock = clock
        self.metrics = metrics
        self.wakeups = wakeups
        self.node = node
        self.logger = logger
        (senderWakes, wakeSender) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        (scoresWakes, scoresWake) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
    }

    func publish(_ notice: BusNotice) {
        local.publish(notice)
        let wire =
            switch notice {
            case .playerEvents(let playerID): Wire(node: node, player: playerID)
            case .sessionEnded(let sessionID, let reason): Wire(node: node, session: sessionID, reason: reason)
            }
        enqueue(wire)
    }

    func scoresRemoved(playerID: String, bundleID: String) {
        enqueue(Wire(node: node, scoresRemovedOf: playerID, game: bundleID))
    }

    func manifestsReloaded() {
        enqueue(Wire(node: node, manifests: true))
    }

    /// Queues `wire` for the other nodes.
    private func enqueue(_ wire: Wire) {
        var wire = wire
        wire.sentAt = clock.wallMillis()
        outgoing.withLock { outgoing in
            if outgoing.notices.count < Self.maximumQueued { outgoing.notices.append(wire) } else { outgoing.overflowed = true }
        }
        wakeSender.yield()
    }

    func subscribe(playerID: String, sessionID: String, deliver: @escaping @Sendable (BusNotice) -> Void) -> BusSubscription {
        local.subscribe(playerID: playerID, sessionID: sessionID, deliver: deliver)
    }

    func scoresStored() {
        scoresWake.yield()
    }

    /// Calls `handler` with each session another node ended (this node's caches forget it at once).
    func whenSessionEndsElsewhere(_ handler: @escaping @Sendable (String) -> Void) {
        sessionEndedElsewhere.withLock { $0 = Callback(handler) }
    }

    /// Calls `handler` when another node stored score reports, and whenever this node (again) listens, as it may have
    /// missed some meanwhile (``ScoreFollower`` catches up).
    func whenScoresStoredElsewhere(_ handler: @escaping @Sendable () -> Void) {
        scoresStoredElsewhere.withLock { $0 = Callback { _ in handler() } }
    }

    /// Calls `handler` when another node erased a player's scores, and whenever this node (again) hears the others, as
    /// it may have missed some meanwhile (``ScoreFollower`` catches up).
    func whenScoresRemovedElsewhere(_ handler: @escaping @Sendable () -> Void) {
        scoresRemovedElsewhere.withLock { $0 = Callback { _ in handler() } }
    }

    /// Calls `handler` when another node reloaded the manifests, and whenever this node hears the others again after a
    /// failure, as it may have missed a reload meanwhile (reloading unchanged manifests changes nothing).
    func whenManifestsReloadedElsewhere(_ handler: @escaping @Sendable () -> Void) {
        manifestsReloadedElsewhere.withLock { $0 = Callback { _ in handler() } }
    }

    /// Sends this node's notices and hands the other nodes' to this node's subscribers, until cancelled.
    func run() async throws {
        await withDiscardingTaskGroup { group in
            group.addTask { await self.send() }
            group.addTask { await self.sendScoresNotices() }
            group.addTask {
                switch self.wakeups {
                case .listen: await self.listen()
                case .poll(let interval): await self.poll(every: interval)
                }
            }
            try? await gracefulShutdown()
            wakeSender.finish()
            scoresWake.finish()
            group.cancelAll()
        }
    }

    private func send() async {
        let encoder = JSONEncoder()
        for await _ in senderWakes {
            while true {
                let batch = outgoing.withLock { outgoing -> [Wire] in
                    if outgoing.overflowed {
                        outgoing.overflowed = false
                        outgoing.notices.removeAll()
                        return [Wire(node: node, everyone: true)]
                    }
                    let batch = Array(outgoing.notices.prefix(Self.batchSize))
                    outgoing.notices.removeFirst(batch.count)
                    return batch
                }
                guard !batch.isEmpty else { break }
                let payloads = batch.compactMap { try? String(decoding: encoder.encode($0), as: UTF8.self) }
                do {
                    try await deliver(payloads)
                } catch {
                    logger.warning("could not notify the other nodes", metadata: [LogKey.error: "\(error)"])
                }
            }
        }
    }

    /// Tells the other nodes that this one stored score reports, at most once per ``scoresNoticeInterval`` (or per
    /// polling interval, when the others poll: more often would only add rows they read together).
    private func sendScoresNotices() async {
        let interval =
            switch wakeups {
            case .listen: Self.scoresNoticeInterval
            case .poll(let every): max(every, Self.scoresNoticeInterval)
            }
        guard let payload = try? String(decoding: JSONEncoder().encode(Wire(node: node, scores: true)), as: UTF8.self) else { return }
        for await _ in scoresWakes {
            do {
                try await deliver([payload])
            } catch {
                logger.warning("could not notify the other nodes", metadata: [LogKey.error: "\(error)"])
            }
            try? await Task.sleep(for: interval)
        }
    }

    /// Sends `payloads` to the other nodes.
    private func deliver(_ payloads: [String]) async throws {
        switch wakeups {
        case .listen:
            try await database.notify(channel: Self.channel, payloads: payloads)
        case .poll:
            let now = clock.wallMillis()
            try await database.writeStatement { try await $0.postNotices(payloads, from: self.node, now: now) }
        }
    }

    private func listen() async {
        let decoder = JSONDecoder()
        var delay = Duration.milliseconds(100)
        while !Task.isCancelled {
            do {
                try await database.listen(channel: Self.channel) { payloads in
                    // Listening (again): anything sent while this node was not is in storage; every subscriber re-reads.
                    self.caughtUp()
                    for try await payload in payloads { self.receive(payload, decoder: decoder) }
                }
                delay = .milliseconds(100)
            } catch {
                if Task.isCancelled { return }
                logger.warning("listening for the other nodes' events failed; trying again", metadata: [LogKey.error: "\(error)"])
            }
            try? await Task.sleep(for: delay)
            delay = min(delay * 2, .seconds(5))
        }
    }

    /// Reads the other nodes' notices every `interval`, from the last read. When a read fails, the next that succeeds
    /// starts after the newest notice and wakes every subscriber, as listening again does (meanwhile reads are tried
    /// at most once a second, and the failure is logged once); every ``forgetNoticesInterval`` the notices older than
    /// ``polledNoticeLifetimeMilliseconds`` are forgotten.
    private func poll(every interval: Duration) async {
        let decoder = JSONDecoder()
        var seen: FollowedIDs?
        var forgotten = ContinuousClock.now
        var failing = false
        while !Task.isCancelled {
            do {
                if seen == nil {
                    seen = FollowedIDs(after: try await database.read { try await $0.lastNoticeID() })
                    caughtUp()
                }
                if var followed = seen {
                    let notices = try await newNotices(&followed)
                    seen = followed
                    for notice in notices where notice.nodeID != node { receive(notice.payload, decoder: decoder) }
                }
                if failing {
                    failing = false
                    logger.info("reading the other nodes' notices again")
                }
                if ContinuousClock.now - forgotten >= Self.forgetNoticesInterval {
                    forgotten = .now
                    let before = clock.wallMillis() - Self.polledNoticeLifetimeMilliseconds
                    _ = try await database.writeStatement { try await $0.forgetNotices(before: before) }
                }
            } catch {
                if Task.isCancelled { return }
                if !failing { logger.warning("reading the other nodes' notices failed; trying again", metadata: [LogKey.error: "\(error)"]) }
                failing = true
                seen = nil
            }
            try? await Task.sleep(for: failing ? max(interval, .seconds(1)) : interval)
        }
    }

    /// The notices posted since `seen`'s cursor and those of its holes that appeared, oldest first.
    private func newNotices(_ seen: inout FollowedIDs) async throws -> [NodeNotice] {
        seen.expire(at: .now)
        let holes = Array(seen.holes.keys)
        var found = try await database.read { try await $0.notices(ids: holes) }
        seen.filled(found.map(\.noticeID))
        while true {
            let after = seen.cursor
            let batch = try await database.read { try await $0.notices(after: after, limit: Self.batchSize) }
            seen.read(batch.map(\.noticeID), at: .now)
            found += batch
            if batch.count < Self.batchSize { return found }
        }
    }

    /// This node (again) hears the others: what they sent meanwhile is in storage, so every subscriber re-reads and the
    /// boards catch up.
    private func caughtUp() {
        local.wakeEveryone()
        scoresStoredElsewhere.withLock { $0 }?.call(())
        scoresRemovedElsewhere.withLock { $0 }?.call(())
        if heardBefore.withLock({ heard in
            defer { heard = true }; return heard
        }) {
            manifestsReloadedElsewhere.withLock { $0 }?.call(())
        }
    }

    /// Hands one notice of another node to this node's subscribers.
    private func receive(_ payload: String, decoder: JSONDecoder) {
        guard let wire = try? decoder.decode(Wire.self, from: Data(payload.utf8)), wire.node != node else { return }
        if let sentAt = wire.sentAt { metrics.busLagSeconds.recordMilliseconds(max(0, clock.wallMillis() - sentAt)) }
        if wire.everyone == true {
            caughtUp()
        } else if wire.scores == true {
            scoresStoredElsewhere.withLock { $0 }?.call(())
        } else if wire.scoresRemovedOf != nil {
            scoresRemovedElsewhere.withLock { $0 }?.call(())
        } else if wire.manifests == true {
            manifestsReloadedElsewhere.withLock { $0 }?.call(())
        } else if let player = wire.player {
            local.publish(.playerEvents(playerID: player))
        } else if let session = wire.session {
            sessionEndedElsewhere.withLock { $0 }?.call(session)
            local.publish(.sessionEnded(sessionID: session, reason: wire.reason ?? "signed out on another node"))
        }
    }
}
