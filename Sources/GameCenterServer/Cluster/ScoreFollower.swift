import Foundation
import GameCenterProtocol
import GameCenterStorage
import Logging
import ServiceLifecycle
import Synchronization

/// Keeps this node's boards (``LeaderboardIndex``) current with the reports other nodes store on the same
/// PostgreSQL: when another node says it stored reports (a bus wake-up, ``PostgresEventBus``), this node reads the
/// reports stored since the last it saw, ``batchSize`` at a time, and applies those its boards do not hold yet.
///
/// Storage is the truth and the wake-up only a hint: a node that was not listening catches up from its cursor when it
/// listens again, and a report whose transaction committed after a later one was read is found again
/// (``FollowedIDs``). A board built from storage meanwhile holds what it read plus what is applied after; applying
/// a report twice changes nothing. Reports this node stored itself are on its boards already and are skipped.
///
/// Erasures of a player's scores (`score_removals`) are followed the same way, in order and once each: a wake-up
/// (``wakeForRemovals()``) reads those noted since the last it saw, so one whose notice was lost (the node was not
/// listening, or the bus's queue overflowed) is applied when the node hears the others again. Run it as a service of
/// the node.
final class ScoreFollower: Service, Sendable {
    /// Reports read in one statement.
    static let batchSize = 1_000
    /// How often holes (skipped ids) are looked for again while there are some.
    static let holeInterval: Duration = .milliseconds(50)
    /// How long an erasure's note is kept for nodes that were not listening.
    static let removalLifetimeMilliseconds: Int64 = 24 * 3600 * 1000

    private let database: Database
    private let index: LeaderboardIndex
    /// Dates what is forgotten (the server's clock, as every stored time).
    private let clock: ServerClock
    private let logger: Logger
    private let seen: Mutex<FollowedIDs>
    private let wakes: AsyncStream<Void>
    private let waker: AsyncStream<Void>.Continuation
    private let removalsSeen: Mutex<FollowedIDs>
    private let removalWakes: AsyncStream<Void>
    private let removalWaker: AsyncStream<Void>.Continuation

    /// A follower starting after the last report stored now, before any board is built. Ids skipped over among the
    /// last ``FollowedIDs/maximumHoles`` are holes: reports other nodes are committing at this moment.
    static func start(database: Database, index: LeaderboardIndex, clock: ServerClock, logger: Logger) async throws -> ScoreFollower {
        let (last, recent, lastRemoval) = try await database.read { storage in
            let last = try await storage.lastScoreID()
            return (
                last, try await storage.scoreIDs(after: max(0, last - Int64(FollowedIDs.maximumHoles))), try await storage.lastScoreRemovalID()
            )
        }
        var seen = FollowedIDs(after: max(0, last - Int64(FollowedIDs.maximumHoles)))
        seen.read(recent, at: .now)
        return ScoreFollower(
            database: database, index: index, seen: seen, removalsSeen: FollowedIDs(after: lastRemoval), clock: clock, logger: logger)
    }

    private init(database: Database, index: LeaderboardIndex, seen: FollowedIDs, removalsSeen: FollowedIDs, clock: ServerClock, logger: Logger) {
        self.database = database
        self.clock = clock
        self.index = index
        self.logger = logger
        self.seen = Mutex(seen)
        self.removalsSeen = Mutex(removalsSeen)
        (wakes, waker) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        (removalWakes, removalWaker) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
    }

    /// Another node stored reports (or this node may have missed some): catch up soon. Never blocks.
    func wake() {
        waker.yield()
    }

    /// Another node erased a player's scores (or this node may have missed an erasure): catch up soon. Never blocks.
    func wakeForRemovals() {
        removalWaker.yield()
    }

    /// Catches up at each wake-up, and looks for holes while there are some, until the node shuts down.
    func run() async throws {
        await withDiscardingTaskGroup { group in
            group.addTask {
                while (try? await Task.sleep(for: Self.holeInterval)) != nil {
                    if self.seen.withLock({ !$0.holes.isEmpty }) { self.wake() }
                    if self.removalsSeen.withLock({ !$0.holes.isEmpty }) { self.wakeForRemovals() }
                }
            }
            group.addTask {
                var forgotten = ContinuousClock.now
                for await _ in self.removalWakes {
                    do {
                        try await self.catchUpRemovals()
                        if ContinuousClock.now - forgotten > .seconds(600) {
                            forgotten = .now
                            let before = self.clock.nowMillis() - Self.removalLifetimeMilliseconds
                            try await self.database.write { try await $0.forgetScoreRemovals(before: before) }
                        }
                    } catch {
                        self.logger.warning(
                            "following the other nodes' erasures failed; trying again at the next wake-up", metadata: [LogKey.error: "\(error)"])
                    }
                }
            }
            group.addTask {
                for await _ in self.wakes {
                    do {
                        try await self.catchUp()
                    } catch {
                        self.logger.warning("following the other nodes' scores failed; trying again at the next wake-up", metadata: [LogKey.error: "\(error)"])
                    }
                }
            }
            try? await gracefulShutdown()
            waker.finish()
            removalWaker.finish()
            group.cancelAll()
        }
    }

    /// Applies the reports stored since the cursor, and the holes that filled.
    func catchUp() async throws {
        try await Self.follow(
            seen, byIDs: { ids in try await self.database.read { try await $0.boardScores(ids: ids) } },
            after: { id in try await self.database.read { try await $0.scores(after: id, limit: Self.batchSize) } },
            id: { (score: BoardScore) in score.record.scoreID }, apply: index.applyStored)
    }

    /// Takes off this node's boards the players whose scores were erased, and puts back what storage kept of them
    /// (reports stored after the erasure, which this node may have applied before reading it): erasures in holes that
    /// filled, then those noted after the cursor, in id order. Erasures this node made are applied again, which
    /// changes nothing.
    func catchUpRemovals() async throws {
        try await Self.follow(
            removalsSeen, byIDs: { ids in try await self.database.read { try await $0.scoreRemovals(ids: ids) } },
            after: { id in try await self.database.read { try await $0.scoreRemovals(after: id, limit: Self.batchSize) } },
            id: { (removal: ScoreRemoval) in removal.removalID }
        ) { removals in
            for removal in removals {
                try await self.index.removeErased(playerID: removal.playerID, bundleID: removal.bundleID) {
                    try await self.database.read { try await $0.boardScores(playerID: removal.playerID, bundleID: removal.bundleID) }
                }
            }
        }
    }

    /// Reads the rows of a followed table that `seen` has not seen — its holes that appeared (``batchSize`` ids to a
    /// read), then the rows after its cursor (``batchSize`` to a read) — and hands each batch to `apply` as soon as it
    /// is read, marking it seen once applied: a read (or an apply) that fails is tried again at the next wake-up, and
    /// nothing applied before it is lost. Applying a row twice must change nothing.
    private static func follow<Row>(
        _ seen: borrowing Mutex<FollowedIDs>, byIDs: ([Int64]) async throws -> [Row], after: (Int64) async throws -> [Row],
        id: (Row) -> Int64, apply: ([Row]) async throws -> Void
    ) async throws {
        let holes = seen.withLock { seen in
            seen.expire(at: .now)
            return Array(seen.holes.keys)
        }
        for start in stride(from: 0, to: holes.count, by: batchSize) {
            let found = try await byIDs(Array(holes[start..<min(start + batchSize, holes.count)]))
            try await apply(found)
            seen.withLock { $0.filled(found.map(id)) }
        }
        while true {
            let batch = try await after(seen.withLock { $0.cursor })
            try await apply(batch)
            seen.withLock { $0.read(batch.map(id), at: .now) }
            if batch.count < batchSize { return }
        }
    }
}
