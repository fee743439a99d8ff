import Foundation
import GameCenterStorage
import Logging
import Synchronization

/// Every leaderboard's in-memory board, built from storage on first use (or at start, ``warm(_:now:)``) and kept
/// current by ``apply(_:bundleID:environment:)`` after each accepted report.
///
/// A board is identified by game, environment and category, and built for a ``Spec``: when a manifest reload
/// changes a leaderboard's order or an aggregate's members, the next use builds a new board for the new spec.
final class LeaderboardIndex: Sendable {
    /// Which board.
    struct BoardID: Hashable, Sendable {
        var bundleID: String
        var environment: String
        var category: String
    }

    /// What a board ranks: the order and the leaderboards whose reports feed it.
    struct Spec: Hashable, Sendable {
        var higherIsBetter: Bool
        var categories: [String]
    }

    private struct Slot {
        var spec: Spec
        var board: Board
        var built: Task<Void, any Error>
    }

    /// Player numbers shared by every board.
    let players = PlayerNumbers()
    private let database: Database
    private let logger: Logger
    private let slots = Mutex<[BoardID: Slot]>([:])

    init(database: Database, logger: Logger) {
        self.database = database
        self.logger = logger
    }

    /// The board for `id`, built from storage first if needed.
    func board(_ id: BoardID, spec: Spec, now: @escaping @Sendable () -> Int64) async throws -> Board {
        let slot = slots.withLock { slots in
            if let slot = slots[id], slot.spec == spec { return slot }
            let board = Board(higherIsBetter: spec.higherIsBetter, categories: spec.categories)
            let slot = Slot(spec: spec, board: board, built: Task { [self] in
                try await build(board, id: id, now: now)
            })
            slots[id] = slot
            return slot
        }
        do {
            try await slot.built.value
        } catch {
            // A failed build (storage down) is retried by the next caller.
            slots.withLock { slots in
                if slots[id]?.board === slot.board { slots[id] = nil }
            }
            throw error
        }
        return slot.board
    }

    /// Applies accepted reports to every board (built or being built) they feed.
    func apply(_ records: [ScoreRecord], bundleID: String, environment: String) {
        let boards = slots.withLock { slots in
            slots.filter { $0.key.bundleID == bundleID && $0.key.environment == environment }.map(\.value.board)
        }
        for record in records {
            let report = Board.Report(player: players.number(for: record.playerID), value: record.value,
                                      scoreID: record.scoreID, reportedAt: record.reportedAt)
            for board in boards where board.categories.contains(record.category) {
                board.apply(report)
            }
        }
    }

    /// Removes a player from every board of a game (their scores were erased).
    func remove(playerID: String, bundleID: String) {
        guard let player = players.existingNumber(for: playerID) else { return }
        let boards = slots.withLock { slots in slots.filter { $0.key.bundleID == bundleID }.map(\.value.board) }
        for board in boards { board.remove(player: player) }
    }

    private func build(_ board: Board, id: BoardID, now: @escaping @Sendable () -> Int64) async throws {
        let started = ContinuousClock.now
        let collected = Collected()
        let players = players
        let higherIsBetter = board.higherIsBetter
        try await database.read { storage in
            try await storage.forEachBestScore(bundleID: id.bundleID, environment: id.environment, categories: board.categories) { _, playerID, scoreID, value in
                collected.best(player: players.number(for: playerID), key: RankKey(value: value, scoreID: scoreID, higherIsBetter: higherIsBetter))
            }
        }
        let since = now() - Board.weekMillis
        try await database.read { storage in
            try await storage.forEachScore(bundleID: id.bundleID, environment: id.environment, categories: board.categories, since: since) { record in
                collected.recent(player: players.number(for: record.playerID),
                                 WindowBoard.Report(value: record.value, scoreID: record.scoreID, reportedAt: record.reportedAt))
            }
        }
        let (best, recent) = collected.take()
        board.finishBuilding(best: best.map { (player: $0.key, key: $0.value) }, recent: recent, now: now())
        logger.debug("built leaderboard index", metadata: [
            "bundle_id": "\(id.bundleID)", "category": "\(id.category)", "environment": "\(id.environment)",
            "entries": "\(best.count)", "players_this_week": "\(recent.count)", "duration": "\(ContinuousClock.now - started)",
        ])
    }

    /// Rows streamed from storage while a board is built.
    private final class Collected: Sendable {
        private struct Rows {
            var best: [UInt32: RankKey] = [:]
            /// Each player's reports of the last week, in report order (the query's order).
            var recent: [UInt32: [WindowBoard.Report]] = [:]
        }

        private let rows = Mutex(Rows())

        /// An aggregate gets one row per member: keep the best.
        func best(player: UInt32, key: RankKey) {
            rows.withLock { rows in
                if let current = rows.best[player], current < key { return }
                rows.best[player] = key
            }
        }

        func recent(player: UInt32, _ report: WindowBoard.Report) {
            rows.withLock { $0.recent[player, default: []].append(report) }
        }

        func take() -> (best: [UInt32: RankKey], recent: [UInt32: [WindowBoard.Report]]) {
            rows.withLock { ($0.best, $0.recent) }
        }
    }
}
