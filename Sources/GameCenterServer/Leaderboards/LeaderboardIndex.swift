import Foundation
import GameCenterProtocol
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
        /// A recurring leaderboard's occurrence (its start); nil for a classic board or a recurring one's lifetime bests.
        var occurrence: Int64? = nil
    }

    /// Occurrence boards kept in memory per leaderboard: the running one, the one before, and one more read lately.
    /// Older ones are read again from storage when asked for.
    static let occurrenceBoardsKept = 3

    /// What a board ranks: the order and the leaderboards whose reports feed it.
    struct Spec: Hashable, Sendable {
        var higherIsBetter: Bool
        var categories: [String]
    }

    /// The boards of one game in one environment.
    private struct GameEnvironment: Hashable {
        var bundleID: String
        var environment: String
    }

    private struct Slot {
        var spec: Spec
        var board: Board
        var built: Task<Void, any Error>
    }

    /// Player numbers shared by every board.
    let players = PlayerNumbers()
    /// The reports behind the boards' entries, as far as they were read or accepted recently.
    let records = ScoreRecordCache()
    /// Recurring leaderboards' occurrences.
    let occurrences: OccurrenceTracker
    /// Players hidden from their game's boards: none of their reports is ranked.
    let hidden = HiddenPlayers()
    private let database: Database
    private let logger: Logger
    private let slots = Mutex<[BoardID: Slot]>([:])

    init(database: Database, logger: Logger) {
        self.database = database
        self.logger = logger
        self.occurrences = OccurrenceTracker { bundleID, category, erasableBefore in
            Task { await Self.forgetOccurrences(bundleID: bundleID, category: category, before: erasableBefore, database: database, logger: logger) }
        }
    }

    /// Erases the scores of a recurring leaderboard's occurrences that started before `start` (older than the manifest
    /// keeps, and one more), a few thousand rows per transaction so that reports never wait long behind it. Every node
    /// may do it at once: erasing is idempotent.
    static func forgetOccurrences(bundleID: String, category: String, before start: Int64, database: Database, logger: Logger) async {
        let batch = 2000
        var erased = 0
        do {
            while true {
                let count = try await database.write { try await $0.deleteOccurrences(bundleID: bundleID, category: category, before: start, limit: batch) }
                erased += count
                if count < batch { break }
            }
        } catch {
            logger.warning(
                "could not forget old occurrences; the next occurrence tries again",
                metadata: [LogKey.bundleID: "\(bundleID)", LogKey.category: "\(category)", LogKey.error: "\(error)"])
        }
        if erased > 0 {
            logger.info(
                "forgot old occurrences", metadata: [LogKey.bundleID: "\(bundleID)", LogKey.category: "\(category)", LogKey.entries: "\(erased)"])
        }
    }

    /// The board for `id`, built from storage first if needed.
    func board(_ id: BoardID, spec: Spec, now: @escaping @Sendable () -> Int64) async throws -> Board {
        let slot = slots.withLock { slots in
            if let slot = slots[id], slot.spec == spec { return slot }
            let board = Board(higherIsBetter: spec.higherIsBetter, categories: spec.categories, occurrence: id.occurrence)
            let slot = Slot(
                spec: spec, board: board,
                built: Task { [self] in
                    if let occurrence = id.occurrence {
                        try await buildOccurrence(board, id: id, occurrence: occurrence)
                    } else {
                        try await build(board, id: id, now: now)
                    }
                })
            slots[id] = slot
            if id.occurrence != nil { Self.evictOldOccurrences(of: id, from: &slots) }
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
        // A hidden player's reports are neither ranked nor remembered as applied: shown again, they are read back.
        let hiddenHere = hidden.players(in: bundleID)
        let records = hiddenHere.isEmpty ? records : records.filter { !hiddenHere.contains($0.playerID) }
        self.records.store(records)
        let boards = slots.withLock { slots in
            slots.filter { $0.key.bundleID == bundleID && $0.key.environment == environment }.map(\.value.board)
        }
        for record in records {
            let report = Board.Report(
                player: players.number(for: record.playerID), value: record.value,
                scoreID: record.scoreID, earnedAt: record.earnedAt)
            for board in boards where board.takes(record) {
                board.apply(report)
            }
        }
    }

    /// Applies stored reports of any game that this node's boards do not hold yet (those they hold are skipped).
    func applyStored(_ scores: [BoardScore]) {
        let known = Set(records.lookup(scores.map(\.record.scoreID)).found.map(\.scoreID))
        let games = Dictionary(grouping: scores.filter { !known.contains($0.record.scoreID) }) {
            GameEnvironment(bundleID: $0.bundleID, environment: $0.environment)
        }
        for (game, scores) in games {
            apply(scores.map(\.record), bundleID: game.bundleID, environment: game.environment)
        }
    }

    /// Takes off every board of a game a player whose scores were erased, then applies `remaining()`: the player's
    /// reports storage holds, read after they were taken off. A report stored just after the erasure, and applied just
    /// before this, is so put back (storage kept it); one applied after is simply applied. Applying it again is
    /// idempotent, so a failed read can be retried by calling this again.
    func removeErased(playerID: String, bundleID: String, remaining: () async throws -> [BoardScore]) async throws {
        remove(playerID: playerID, bundleID: bundleID)
        applyStored(try await remaining())
    }

    /// Takes a player off every board of a game while they are hidden (``hidden`` already holds them).
    func hide(playerID: String, bundleID: String) {
        remove(playerID: playerID, bundleID: bundleID)
    }

    /// Puts a player shown again back on a game's boards: `stored()` reads their reports from storage.
    func show(playerID: String, bundleID: String, stored: () async throws -> [BoardScore]) async throws {
        applyStored(try await stored())
    }

    /// Takes the game's hidden players off a board just built from storage (which does not know who is hidden).
    private func removeHidden(from board: Board, bundleID: String) {
        for playerID in hidden.players(in: bundleID) {
            if let player = players.existingNumber(for: playerID) { board.remove(player: player) }
        }
    }

    /// Removes a player from every board of a game (their scores were erased).
    private func remove(playerID: String, bundleID: String) {
        records.remove(playerID: playerID)
        guard let player = players.existingNumber(for: playerID) else { return }
        let boards = slots.withLock { slots in slots.filter { $0.key.bundleID == bundleID }.map(\.value.board) }
        for board in boards { board.remove(player: player) }
    }

    private func build(_ board: Board, id: BoardID, now: @escaping @Sendable () -> Int64) async throws {
        let started = ContinuousClock.now
        let since = now() - Board.weekMillis
        // Two reads on two connections at once, each a range scan of one index; each index is built as soon as its
        // rows are in.
        async let allTime = allTimeIndex(id: id, categories: board.categories, higherIsBetter: board.higherIsBetter)
        async let windows = windows(id: id, categories: board.categories, higherIsBetter: board.higherIsBetter, since: since, now: now())
        let (built, recent) = try await (allTime, windows)
        let (entries, playersThisWeek) = (built.value.count, recent.value.week.index.count)
        board.finishBuilding(allTime: built, windows: recent)
        removeHidden(from: board, bundleID: id.bundleID)
        logger.debug(
            "built leaderboard index",
            metadata: [
                LogKey.bundleID: "\(id.bundleID)", LogKey.category: "\(id.category)", LogKey.environment: "\(id.environment)",
                LogKey.entries: "\(entries)", LogKey.playersThisWeek: "\(playersThisWeek)", LogKey.duration: "\(ContinuousClock.now - started)",
            ])
    }

    /// Drops from memory the occurrence boards of `id`'s leaderboard beyond the newest ``occurrenceBoardsKept``.
    private static func evictOldOccurrences(of id: BoardID, from slots: inout [BoardID: Slot]) {
        let siblings = slots.keys.filter {
            $0.bundleID == id.bundleID && $0.environment == id.environment && $0.category == id.category && $0.occurrence != nil
        }
        guard siblings.count > occurrenceBoardsKept else { return }
        for old in siblings.sorted(by: { $0.occurrence! > $1.occurrence! }).dropFirst(occurrenceBoardsKept) where old != id {
            slots[old] = nil
        }
    }

    /// Builds one occurrence's board from its players' bests (a new occurrence has none: its board starts empty).
    private func buildOccurrence(_ board: Board, id: BoardID, occurrence: Int64) async throws {
        let rows = Rows<(player: PlayerNumbers.Key, key: RankKey)>()
        let higherIsBetter = board.higherIsBetter
        try await database.read { storage in
            try await storage.forEachOccurrenceBest(
                bundleID: id.bundleID, environment: id.environment, category: id.category, occurrence: occurrence
            ) { playerID, scoreID, value in
                rows.append((PlayerNumbers.Key(playerID), RankKey(value: value, scoreID: scoreID, higherIsBetter: higherIsBetter)))
            }
        }
        let read = rows.take()
        let numbers = players.numbers(for: read.map(\.player))
        let index = Handover(RankIndex(entries: zip(numbers, read).map { (player: $0, key: $1.key) }))
        let empty = WindowBoard(length: Board.dayMillis, higherIsBetter: higherIsBetter)
        board.finishBuilding(allTime: index, windows: Handover((today: empty, week: empty)))
        removeHidden(from: board, bundleID: id.bundleID)
    }

    /// The all-time index: each player's best on the board (an aggregate has a row per member leaderboard: the best
    /// wins).
    private func allTimeIndex(id: BoardID, categories: [String], higherIsBetter: Bool) async throws -> Handover<RankIndex> {
        let rows = Rows<(player: PlayerNumbers.Key, key: RankKey)>()
        try await database.read { storage in
            try await storage.forEachBestScore(bundleID: id.bundleID, environment: id.environment, categories: categories) { playerID, scoreID, value in
                rows.append((PlayerNumbers.Key(playerID), RankKey(value: value, scoreID: scoreID, higherIsBetter: higherIsBetter)))
            }
        }
        let read = rows.take()
        let numbers = players.numbers(for: read.map(\.player))
        var entries = zip(numbers, read).map { (player: $0, key: $1.key) }
        if categories.count > 1 {
            var best: [UInt32: RankKey] = [:]
            best.reserveCapacity(entries.count)
            for entry in entries where best[entry.player].map({ entry.key < $0 }) ?? true { best[entry.player] = entry.key }
            entries = best.map { (player: $0.key, key: $0.value) }
        }
        return Handover(RankIndex(entries: entries))
    }

    /// The day's and the week's windows, from the reports of the last week.
    private func windows(id: BoardID, categories: [String], higherIsBetter: Bool, since: Int64, now: Int64) async throws
        -> Handover<(today: WindowBoard, week: WindowBoard)>
    {
        let rows = Rows<(player: PlayerNumbers.Key, report: WindowBoard.Report)>()
        try await database.read { storage in
            try await storage.forEachRecentScore(bundleID: id.bundleID, environment: id.environment, categories: categories, since: since) {
                playerID, scoreID, value, earnedAt in
                rows.append((PlayerNumbers.Key(playerID), WindowBoard.Report(value: value, scoreID: scoreID, earnedAt: earnedAt)))
            }
        }
        let read = rows.take()
        let numbers = players.numbers(for: read.map(\.player))
        let recent = RecentReports(zip(numbers, read).map { (player: $0, report: $1.report) })
        return await Board.windows(from: recent, higherIsBetter: higherIsBetter, now: now)
    }

    /// Rows streamed from storage (on the database's thread) while a board is built.
    private final class Rows<Row: Sendable>: Sendable {
        private let rows = Mutex<[Row]>([])

        func append(_ row: Row) {
            rows.withLock { $0.append(row) }
        }

        func take() -> [Row] {
            rows.withLock { $0 }
        }
    }
}
