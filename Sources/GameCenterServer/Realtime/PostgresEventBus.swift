import Foundation
import GameCenterProtocol
import GameCenterStorage
import Logging
import ServiceLifecycle
import Synchronization

/// The bus of several nodes on one PostgreSQL: each notice is delivered to this node's subscribers at once and sent
/// to the other nodes with `NOTIFY` on ``channel``; every node listens on a connection of its own and hands the other
/// nodes' notices to its subscribers.
///
/// Notices are wake-ups only: events stay rows in storage with their per-player sequence, and a subscriber re-reads
/// from its cursor. So a node whose listening connection failed, once it listens again, wakes every subscriber of
/// its own (``InProcessEventBus/wakeEveryone()``) and nothing is lost. Notices queue for sending (at most
/// ``maximumQueued``) and go ``batchSize`` to a statement; when the queue overflows, the other nodes are told to wake
/// everyone instead. Run it as a service of the node.
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

    /// What one notice says on the wire (JSON): the sending node, and a player whose events grew, a session that
    /// ended, `scores` (the node stored score reports), a player whose scores in `game` were erased
    /// (`scoresRemovedOf`), or `everyone` (notices were lost: re-read all).
    private struct Wire: Codable {
        var node: String
        var player: String?
        var session: String?
        var reason: String?
        var scores: Bool?
        var scoresRemovedOf: String?
        var game: String?
        var everyone: Bool?
    }

    /// Notices waiting to be sent.
    private struct Outgoing {
        var notices: [Wire] = []
        var overflowed = false
    }

    private let local = InProcessEventBus()
    private let database: Database
    /// This node's id: its own notices come back to it and are skipped.
    private let node: String
    private let logger: Logger
    private let outgoing = Mutex(Outgoing())
    private let sessionEndedElsewhere = Mutex<(@Sendable (String) -> Void)?>(nil)
    private let scoresStoredElsewhere = Mutex<(@Sendable () -> Void)?>(nil)
    private let scoresRemovedElsewhere = Mutex<(@Sendable (_ playerID: String, _ bundleID: String) -> Void)?>(nil)
    private let wakeSender: AsyncStream<Void>.Continuation
    private let senderWakes: AsyncStream<Void>
    private let scoresWake: AsyncStream<Void>.Continuation
    private let scoresWakes: AsyncStream<Void>

    init(database: Database, node: String, logger: Logger) {
        self.database = database
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

    /// Queues `wire` for the other nodes.
    private func enqueue(_ wire: Wire) {
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
        sessionEndedElsewhere.withLock { $0 = handler }
    }

    /// Calls `handler` when another node stored score reports, and whenever this node (again) listens, as it may have
    /// missed some meanwhile (``ScoreFollower`` catches up).
    func whenScoresStoredElsewhere(_ handler: @escaping @Sendable () -> Void) {
        scoresStoredElsewhere.withLock { $0 = handler }
    }

    /// Calls `handler` when another node erased a player's scores in a game.
    func whenScoresRemovedElsewhere(_ handler: @escaping @Sendable (_ playerID: String, _ bundleID: String) -> Void) {
        scoresRemovedElsewhere.withLock { $0 = handler }
    }

    /// Sends this node's notices and hands the other nodes' to this node's subscribers, until cancelled.
    func run() async throws {
        await withDiscardingTaskGroup { group in
            group.addTask { await self.send() }
            group.addTask { await self.sendScoresNotices() }
            group.addTask { await self.listen() }
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
                    try await database.notify(channel: Self.channel, payloads: payloads)
                } catch {
                    logger.warning("could not notify the other nodes", metadata: [LogKey.error: "\(error)"])
                }
            }
        }
    }

    /// Tells the other nodes that this one stored score reports, at most once per ``scoresNoticeInterval``.
    private func sendScoresNotices() async {
        guard let payload = try? String(decoding: JSONEncoder().encode(Wire(node: node, scores: true)), as: UTF8.self) else { return }
        for await _ in scoresWakes {
            do {
                try await database.notify(channel: Self.channel, payloads: [payload])
            } catch {
                logger.warning("could not notify the other nodes", metadata: [LogKey.error: "\(error)"])
            }
            try? await Task.sleep(for: Self.scoresNoticeInterval)
        }
    }

    private func listen() async {
        let decoder = JSONDecoder()
        var delay = Duration.milliseconds(100)
        while !Task.isCancelled {
            do {
                try await database.listen(channel: Self.channel) { payloads in
                    // Listening (again): anything sent while this node was not is in storage; every subscriber re-reads.
                    self.local.wakeEveryone()
                    self.scoresStoredElsewhere.withLock { $0 }?()
                    for try await payload in payloads {
                        guard let wire = try? decoder.decode(Wire.self, from: Data(payload.utf8)), wire.node != self.node else { continue }
                        if wire.everyone == true {
                            self.local.wakeEveryone()
                            self.scoresStoredElsewhere.withLock { $0 }?()
                        } else if wire.scores == true {
                            self.scoresStoredElsewhere.withLock { $0 }?()
                        } else if let player = wire.scoresRemovedOf, let game = wire.game {
                            self.scoresRemovedElsewhere.withLock { $0 }?(player, game)
                        } else if let player = wire.player {
                            self.local.publish(.playerEvents(playerID: player))
                        } else if let session = wire.session {
                            self.sessionEndedElsewhere.withLock { $0 }?(session)
                            self.local.publish(.sessionEnded(sessionID: session, reason: wire.reason ?? "signed out on another node"))
                        }
                    }
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
}
