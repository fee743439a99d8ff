import SQLKit
import SQLiteNIO
import Synchronization

extension StorageSession {
    /// Applies one report of a player's scores (all of one game and environment) once per `reportID` (noting it as
    /// applied at `now`): stores them as ``insertScores(_:bundleID:environment:playerID:)`` does and returns the stored
    /// records in the order of `scores`, or nil when this player's score report with this id was applied before.
    ///
    /// On PostgreSQL this is one prepared statement (``ScoreReportStatement``; run it with
    /// ``Database/writeStatement(_:)``). ``Database/reportScores(reportID:_:bundleID:environment:playerID:now:)``
    /// sends it together with other players' reports of the same moment.
    public func reportScores(
        reportID: String, _ scores: [NewScore], bundleID: String, environment: String, playerID: String, now: Int64
    ) async throws -> [ScoreRecord]? {
        guard !scores.isEmpty else {
            guard try await markReportsApplied([(reportID, playerID, now)], kind: ReportKind.scores).contains(playerID) else { return nil }
            return []
        }
        guard
            case .applied(let records) = try await reportScores([
                PendingScoreReport(reportID: reportID, scores: scores, bundleID: bundleID, environment: environment, playerID: playerID, now: now)
            ])[0]
        else { return nil }
        return records
    }

    /// ``reportScores(reportID:_:bundleID:environment:playerID:now:)`` for several reports of distinct players, each
    /// with one score or more: all are applied or none. Answers in the order of `reports`. On PostgreSQL this is one
    /// statement; on SQLite, in the writer's transaction, three or four whatever the number of reports: the report
    /// ids, the scores, and `best_scores` (one statement per direction of ranking present).
    func reportScores(_ reports: [PendingScoreReport]) async throws -> [ScoreReportAnswer] {
        precondition(Set(reports.map(\.playerID)).count == reports.count, "one report per player in a batch")
        var returned: [String: [StoredScore]] = [:]
        var refused: Set<String> = []
        let applied: [PendingScoreReport]
        if engine == .postgres {
            // Signed reports' counters are taken in the same statement; a refused one answers a row with score id -1.
            for row in try await execute(ScoreReportStatement(reports: reports)) {
                guard row.0 >= 0 else {
                    refused.insert(row.1)
                    continue
                }
                returned[row.1, default: []].append(StoredScore(scoreID: row.0, category: row.2, value: row.3, context: row.4, earnedAt: row.5))
            }
            applied = reports.filter { !refused.contains($0.playerID) }
        } else {
            // Signed reports take their counters first (one statement); those refused store nothing.
            let counters = reports.compactMap(\.counter)
            if !counters.isEmpty {
                let taken = try await advanceReportCounters(counters.map { ($0.sessionID, $0.counter) })
                refused = Set(reports.filter { $0.counter.map { !taken.contains($0.sessionID) } ?? false }.map(\.playerID))
            }
            let counted = reports.filter { !refused.contains($0.playerID) }
            let players =
                counted.isEmpty ? [] : try await markReportsApplied(counted.map { ($0.reportID, $0.playerID, $0.now) }, kind: ReportKind.scores)
            applied = counted.filter { players.contains($0.playerID) }
            returned = try await storeScores(applied)
        }
        let records = try Self.records(of: applied, returned: returned)
        if engine != .postgres {
            try await updateBestScores(
                applied.flatMap { report in
                    zip(report.scores, records[report.playerID] ?? []).map {
                        BestScoreCandidate(bundleID: report.bundleID, environment: report.environment, higherIsBetter: $0.higherIsBetter, record: $1)
                    }
                })
        }
        // Every score of an applied report returns its row: none means the id was applied before.
        return reports.map { refused.contains($0.playerID) ? .counterTaken : .applied(records[$0.playerID]) }
    }

    /// Stores one player's reports (all of one game and environment), each dated when it was earned, and keeps
    /// `best_scores` current: a report replaces the stored best when its value is better, or equal and stored earlier
    /// (smaller id). Returns the stored records in the order of `scores`.
    public func insertScores(
        _ scores: [NewScore], bundleID: String, environment: String, playerID: String
    ) async throws -> [ScoreRecord] {
        guard !scores.isEmpty else { return [] }
        let report = PendingScoreReport(reportID: "", scores: scores, bundleID: bundleID, environment: environment, playerID: playerID, now: 0)
        let records = try Self.records(of: [report], returned: try await storeScores([report]))[playerID] ?? []
        try await updateBestScores(
            zip(scores, records).map { BestScoreCandidate(bundleID: bundleID, environment: environment, higherIsBetter: $0.higherIsBetter, record: $1) })
        return records
    }

    /// Inserts the scores of `reports` in one statement; returns the rows it stored, by player. The `occurrence`
    /// column is written only when a score is on a recurring board.
    private func storeScores(_ reports: [PendingScoreReport]) async throws -> [String: [StoredScore]] {
        let recurring = reports.contains { $0.scores.contains { $0.occurrence != nil } }
        let rows = reports.flatMap { report in
            report.scores.map { score in
                SQLGroupExpression(
                    [
                        SQLBind(report.bundleID), SQLBind(report.environment), SQLBind(score.category), SQLBind(report.playerID),
                        SQLBind(score.value), SQLBind(Int64(bitPattern: score.context)), SQLBind(score.earnedAt),
                    ] + (recurring ? [SQLBind(score.occurrence)] : []) as [any SQLExpression])
            }
        }
        guard !rows.isEmpty else { return [:] }
        var returned: [String: [StoredScore]] = [:]
        for row in try await sql.raw(
            """
            INSERT INTO scores (bundle_id, environment, category, player_id, value, context, reported_at\(SQLRaw(recurring ? ", occurrence" : "")))
            VALUES \(SQLList(rows)) RETURNING score_id, player_id, category, value, context, reported_at
            """
        ).all() {
            returned[try row.string("player_id"), default: []].append(
                StoredScore(
                    scoreID: try row.int("score_id"), category: try row.string("category"), value: try row.int("value"),
                    context: try row.int("context"), earnedAt: try row.int("reported_at")))
        }
        return returned
    }

    /// The records of each of `reports` (by player) from the rows its `INSERT … RETURNING` gave back, in the order of
    /// its scores. Reports with no rows are left out.
    private static func records(of reports: [PendingScoreReport], returned: [String: [StoredScore]]) throws -> [String: [ScoreRecord]] {
        var records: [String: [ScoreRecord]] = [:]
        for report in reports {
            guard let rows = returned[report.playerID] else { continue }
            records[report.playerID] = try Self.records(report.scores, returned: rows, playerID: report.playerID)
        }
        return records
    }

    /// The records of `scores` from the rows an `INSERT … RETURNING score_id, category, value, context, reported_at`
    /// gave back. `RETURNING` promises no order: the ids are handed out by content (reports with equal content are
    /// interchangeable), the smaller id to the earlier report.
    private static func records(_ scores: [NewScore], returned: [StoredScore], playerID: String) throws -> [ScoreRecord] {
        var idsByContent: [ScoreContent: [Int64]] = [:]
        for row in returned {
            let content = ScoreContent(category: row.category, value: row.value, context: UInt64(bitPattern: row.context), earnedAt: row.earnedAt)
            idsByContent[content, default: []].append(row.scoreID)
        }
        for key in idsByContent.keys { idsByContent[key]?.sort(by: >) }
        return try scores.map { score in
            let content = ScoreContent(category: score.category, value: score.value, context: score.context, earnedAt: score.earnedAt)
            guard let id = idsByContent[content]?.popLast() else { throw StorageError.notFound("a stored score went missing") }
            return ScoreRecord(
                scoreID: id, category: score.category, playerID: playerID, value: score.value,
                context: score.context, earnedAt: score.earnedAt, occurrence: score.occurrence)
        }
    }

    /// Keeps `best_scores` (and, for scores on recurring boards, `occurrence_best_scores`) current for `candidates`
    /// (SQLite; PostgreSQL's report statement does it itself): one statement per table and direction of ranking
    /// present, whatever the number of players and boards.
    private func updateBestScores(_ candidates: [BestScoreCandidate]) async throws {
        try await updateBest(candidates, occurrences: false)
        try await updateBest(candidates.filter { $0.record.occurrence != nil }, occurrences: true)
    }

    private func updateBest(_ candidates: [BestScoreCandidate], occurrences: Bool) async throws {
        // One row per player's board (a statement may not touch a row twice): the best, earliest among equals.
        var best: [BestScoreCandidate.Key: BestScoreCandidate] = [:]
        for candidate in candidates {
            let key = candidate.key(occurrences: occurrences)
            if let current = best[key], !Self.isBetter(candidate.record, than: current.record, higherIsBetter: candidate.higherIsBetter) {
                continue
            }
            best[key] = candidate
        }
        let table = SQLRaw(occurrences ? "occurrence_best_scores" : "best_scores")
        let occurrenceColumn = SQLRaw(occurrences ? "occurrence, " : "")
        for higherIsBetter in [true, false] {
            let rows = best.filter { $0.value.higherIsBetter == higherIsBetter }.sorted { $0.key < $1.key }.map { key, candidate in
                SQLGroupExpression(
                    [
                        SQLBind(candidate.bundleID), SQLBind(candidate.environment), SQLBind(candidate.record.category),
                        SQLBind(candidate.record.playerID), SQLBind(candidate.record.scoreID), SQLBind(candidate.record.value),
                    ] + (occurrences ? [SQLBind(key.occurrence)] : []) as [any SQLExpression])
            }
            guard !rows.isEmpty else { continue }
            let better = SQLRaw(higherIsBetter ? ">" : "<")
            try await sql.raw(
                """
                INSERT INTO \(table) (bundle_id, environment, category, player_id, score_id, value\(SQLRaw(occurrences ? ", occurrence" : ""))) VALUES \(SQLList(rows))
                ON CONFLICT (bundle_id, environment, category, \(occurrenceColumn)player_id) DO UPDATE SET score_id = excluded.score_id, value = excluded.value
                WHERE excluded.value \(better) \(table).value
                   OR (excluded.value = \(table).value AND excluded.score_id < \(table).score_id)
                """
            ).run()
        }
    }

    private static func isBetter(_ a: ScoreRecord, than b: ScoreRecord, higherIsBetter: Bool) -> Bool {
        if a.value != b.value { return higherIsBetter ? a.value > b.value : a.value < b.value }
        return a.scoreID < b.scoreID
    }

    /// The stored reports with these ids (missing ids are skipped), in no particular order.
    public func scores(ids: [Int64]) async throws -> [ScoreRecord] {
        guard !ids.isEmpty else { return [] }
        if let connection = sqliteConnection {
            countDirectStatement()
            // Every leaderboard page reads these rows: taken by position, not decoded by name.
            let rows = Mutex<[ScoreRecord]>([])
            try await connection.query(
                """
                SELECT score_id, category, player_id, value, context, reported_at, occurrence FROM scores
                WHERE score_id IN (\(Self.placeholders(ids.count)))
                """, ids.map { .integer(SQLiteInt64($0)) }
            ) { row in
                let columns = row.columns
                guard columns.count == 7, case .integer(let id) = columns[0].data, case .text(let category) = columns[1].data,
                    case .text(let player) = columns[2].data, case .integer(let value) = columns[3].data,
                    case .integer(let context) = columns[4].data, case .integer(let earnedAt) = columns[5].data
                else { return }
                let occurrence: Int64? = if case .integer(let start) = columns[6].data { Int64(start) } else { nil }
                rows.withLock {
                    $0.append(
                        ScoreRecord(
                            scoreID: Int64(id), category: category, playerID: player, value: Int64(value),
                            context: UInt64(bitPattern: Int64(context)), earnedAt: Int64(earnedAt), occurrence: occurrence))
                }
            }
            return rows.withLock { $0 }
        }
        return try await sql.raw(
            """
            SELECT score_id, category, player_id, value, context, reported_at, occurrence FROM scores WHERE score_id IN (\(binds: ids))
            """
        ).all().map(Self.scoreRecord)
    }

    /// Calls `body` with every player's all-time best on each of `categories` of one game and environment (a player
    /// with bests on several categories comes once per category).
    public func forEachBestScore(
        bundleID: String, environment: String, categories: [String],
        _ body: @escaping @Sendable (_ playerID: String, _ scoreID: Int64, _ value: Int64) -> Void
    ) async throws {
        guard !categories.isEmpty else { return }
        try await forEachBest(
            sqlite: """
                SELECT player_id, score_id, value FROM best_scores
                WHERE bundle_id = ? AND environment = ? AND category IN (\(Self.placeholders(categories.count)))
                """,
            [.text(bundleID), .text(environment)] + categories.map { .text($0) },
            postgres: """
                SELECT player_id, score_id, value FROM best_scores
                WHERE bundle_id = \(bind: bundleID) AND environment = \(bind: environment) AND category IN (\(binds: categories))
                """, body)
    }

    /// Calls `body` with every player's best in one occurrence (its start) of a recurring leaderboard.
    public func forEachOccurrenceBest(
        bundleID: String, environment: String, category: String, occurrence: Int64,
        _ body: @escaping @Sendable (_ playerID: String, _ scoreID: Int64, _ value: Int64) -> Void
    ) async throws {
        try await forEachBest(
            sqlite: """
                SELECT player_id, score_id, value FROM occurrence_best_scores
                WHERE bundle_id = ? AND environment = ? AND category = ? AND occurrence = ?
                """,
            [.text(bundleID), .text(environment), .text(category), .integer(SQLiteInt64(occurrence))],
            postgres: """
                SELECT player_id, score_id, value FROM occurrence_best_scores
                WHERE bundle_id = \(bind: bundleID) AND environment = \(bind: environment) AND category = \(bind: category)
                  AND occurrence = \(bind: occurrence)
                """, body)
    }

    /// Runs a query of bests — rows of (player, score id, value) — and calls `body` with each. A board of a million
    /// players is read at every start: SQLite's rows are taken as they come, by position (a lookup by name hashes the
    /// name, three times a row).
    private func forEachBest(
        sqlite: String, _ binds: [SQLiteData], postgres: SQLQueryString,
        _ body: @escaping @Sendable (_ playerID: String, _ scoreID: Int64, _ value: Int64) -> Void
    ) async throws {
        if let connection = sqliteConnection {
            countDirectStatement()
            try await connection.query(sqlite, binds) { row in
                let columns = row.columns
                guard columns.count == 3, case .text(let player) = columns[0].data,
                    case .integer(let id) = columns[1].data, case .integer(let value) = columns[2].data
                else { return }
                body(player, Int64(id), Int64(value))
            }
            return
        }
        try await sql.raw(postgres).run { row in
            guard let player = try? row.string("player_id"), let id = try? row.int("score_id"), let value = try? row.int("value") else { return }
            body(player, id, value)
        }
    }

    /// Forgets up to `limit` scores of the occurrences of a recurring leaderboard that started before `start`, with
    /// their bests (a board keeps only its most recent occurrences); a score that is still a player's lifetime best
    /// stays. Returns the scores erased: fewer than `limit` means none is left.
    public func deleteOccurrences(bundleID: String, category: String, before start: Int64, limit: Int) async throws -> Int {
        try await sql.raw(
            """
            DELETE FROM occurrence_best_scores WHERE bundle_id = \(bind: bundleID) AND category = \(bind: category) AND occurrence < \(bind: start)
            """
        ).run()
        return try await sql.raw(
            """
            DELETE FROM scores WHERE score_id IN (
                SELECT score_id FROM scores s WHERE bundle_id = \(bind: bundleID) AND category = \(bind: category) AND occurrence < \(bind: start)
                  AND NOT EXISTS (
                    SELECT 1 FROM best_scores b WHERE b.bundle_id = s.bundle_id AND b.environment = s.environment AND b.category = s.category
                      AND b.player_id = s.player_id AND b.score_id = s.score_id)
                LIMIT \(bind: Int64(limit)))
            RETURNING score_id
            """
        ).all().count
    }

    /// Calls `body` with every report on `categories` of one game and environment earned at or after `since`, in no
    /// particular order. Reads only the time index, which carries these columns.
    public func forEachRecentScore(
        bundleID: String, environment: String, categories: [String], since: Int64,
        _ body: @escaping @Sendable (_ playerID: String, _ scoreID: Int64, _ value: Int64, _ earnedAt: Int64) -> Void
    ) async throws {
        guard !categories.isEmpty else { return }
        if let connection = sqliteConnection {
            countDirectStatement()
            try await connection.query(
                """
                SELECT player_id, score_id, value, reported_at FROM scores INDEXED BY scores_by_time
                WHERE bundle_id = ? AND environment = ? AND reported_at >= ? AND category IN (\(Self.placeholders(categories.count)))
                """, [.text(bundleID), .text(environment), .integer(SQLiteInt64(since))] + categories.map { .text($0) }
            ) { row in
                let columns = row.columns
                guard columns.count == 4, case .text(let player) = columns[0].data, case .integer(let id) = columns[1].data,
                    case .integer(let value) = columns[2].data, case .integer(let earnedAt) = columns[3].data
                else { return }
                body(player, Int64(id), Int64(value), Int64(earnedAt))
            }
            return
        }
        try await sql.raw(
            """
            SELECT player_id, score_id, value, reported_at FROM scores
            WHERE bundle_id = \(bind: bundleID) AND environment = \(bind: environment) AND reported_at >= \(bind: since)
              AND category IN (\(binds: categories))
            """
        ).run { row in
            guard let player = try? row.string("player_id"), let id = try? row.int("score_id"),
                let value = try? row.int("value"), let earnedAt = try? row.int("reported_at")
            else { return }
            body(player, id, value, earnedAt)
        }
    }

    /// The reports stored after `scoreID`, in id order, at most `limit`: what a node following the other nodes'
    /// reports has not seen yet (a range scan of the primary key).
    public func scores(after scoreID: Int64, limit: Int) async throws -> [BoardScore] {
        try await sql.raw(
            """
            SELECT score_id, bundle_id, environment, category, player_id, value, context, reported_at, occurrence FROM scores
            WHERE score_id > \(bind: scoreID) ORDER BY score_id LIMIT \(bind: limit)
            """
        ).all().map(Self.boardScore)
    }

    /// The reports among `ids` that exist, with their boards.
    public func boardScores(ids: [Int64]) async throws -> [BoardScore] {
        guard !ids.isEmpty else { return [] }
        return try await sql.raw(
            """
            SELECT score_id, bundle_id, environment, category, player_id, value, context, reported_at, occurrence FROM scores
            WHERE score_id IN (\(binds: ids))
            """
        ).all().map(Self.boardScore)
    }

    /// Every report a player stored in a game, in both environments, in id order: after an erasure of their scores,
    /// the reports stored since (a range scan of `scores_by_player`).
    public func boardScores(playerID: String, bundleID: String) async throws -> [BoardScore] {
        try await sql.raw(
            """
            SELECT score_id, bundle_id, environment, category, player_id, value, context, reported_at, occurrence FROM scores
            WHERE player_id = \(bind: playerID) AND bundle_id = \(bind: bundleID) ORDER BY score_id
            """
        ).all().map(Self.boardScore)
    }

    /// The ids of the reports stored after `scoreID` (in id order).
    public func scoreIDs(after scoreID: Int64) async throws -> [Int64] {
        try await sql.raw("SELECT score_id FROM scores WHERE score_id > \(bind: scoreID) ORDER BY score_id").all().map { try $0.int("score_id") }
    }

    /// The largest report id stored; 0 when there is none.
    public func lastScoreID() async throws -> Int64 {
        try await sql.raw("SELECT COALESCE(MAX(score_id), 0) AS last FROM scores").first().map { try $0.int("last") } ?? 0
    }

    /// Erases every score of a player in one game; returns how many reports were erased.
    @discardableResult
    public func deleteScores(bundleID: String, playerID: String) async throws -> Int {
        try await sql.raw("DELETE FROM best_scores WHERE bundle_id = \(bind: bundleID) AND player_id = \(bind: playerID)").run()
        try await sql.raw("DELETE FROM occurrence_best_scores WHERE bundle_id = \(bind: bundleID) AND player_id = \(bind: playerID)").run()
        return try await sql.raw(
            """
            DELETE FROM scores WHERE bundle_id = \(bind: bundleID) AND player_id = \(bind: playerID) RETURNING score_id
            """
        ).all().count
    }

    /// Notes that a player's scores in a game were erased (``deleteScores(bundleID:playerID:)``), for the other nodes'
    /// boards (``scoreRemovals(after:limit:)``); PostgreSQL only (SQLite serves one node), nothing on SQLite.
    public func noteScoresRemoved(bundleID: String, playerID: String, now: Int64) async throws {
        guard engine == .postgres else { return }
        try await sql.raw(
            "INSERT INTO score_removals (bundle_id, player_id, removed_at) VALUES (\(bind: bundleID), \(bind: playerID), \(bind: now))"
        ).run()
    }

    /// The newest erasure's id, 0 when there is none.
    public func lastScoreRemovalID() async throws -> Int64 {
        try await sql.raw("SELECT MAX(removal_id) AS last FROM score_removals").first()?.decode(column: "last", as: Int64?.self) ?? 0
    }

    /// The erasures noted after `id`, oldest first, at most `limit`.
    public func scoreRemovals(after id: Int64, limit: Int) async throws -> [ScoreRemoval] {
        try await sql.raw(
            "SELECT removal_id, bundle_id, player_id FROM score_removals WHERE removal_id > \(bind: id) ORDER BY removal_id LIMIT \(bind: Int64(limit))"
        ).all().map(Self.scoreRemoval)
    }

    /// The erasures with these ids (missing ones skipped), oldest first.
    public func scoreRemovals(ids: [Int64]) async throws -> [ScoreRemoval] {
        guard !ids.isEmpty else { return [] }
        return try await sql.raw(
            "SELECT removal_id, bundle_id, player_id FROM score_removals WHERE removal_id IN (\(binds: ids)) ORDER BY removal_id"
        ).all().map(Self.scoreRemoval)
    }

    private static func scoreRemoval(_ row: any SQLRow) throws -> ScoreRemoval {
        ScoreRemoval(removalID: try row.int("removal_id"), bundleID: try row.string("bundle_id"), playerID: try row.string("player_id"))
    }

    /// Forgets the erasures noted before `time`.
    public func forgetScoreRemovals(before time: Int64) async throws {
        try await sql.raw("DELETE FROM score_removals WHERE removed_at < \(bind: time)").run()
    }

    private static func placeholders(_ count: Int) -> String {
        Array(repeating: "?", count: count).joined(separator: ", ")
    }

    private static func boardScore(_ row: any SQLRow) throws -> BoardScore {
        BoardScore(bundleID: try row.string("bundle_id"), environment: try row.string("environment"), record: try scoreRecord(row))
    }

    private static func scoreRecord(_ row: any SQLRow) throws -> ScoreRecord {
        ScoreRecord(
            scoreID: try row.int("score_id"), category: try row.string("category"), playerID: try row.string("player_id"),
            value: try row.int("value"), context: UInt64(bitPattern: try row.int("context")), earnedAt: try row.int("reported_at"),
            occurrence: try row.decode(column: "occurrence", as: Int64?.self))
    }
}

/// A row an insert of scores returned.
private struct StoredScore {
    var scoreID: Int64
    var category: String
    var value: Int64
    /// As stored: the context's bits as a signed integer.
    var context: Int64
    var earnedAt: Int64
}

/// An erasure of a player's scores in a game, as noted for the other nodes.
public struct ScoreRemoval: Sendable, Equatable {
    /// Its place in the order erasures were noted.
    public var removalID: Int64
    /// The game.
    public var bundleID: String
    /// The player whose scores were erased.
    public var playerID: String
}

/// A stored score that may be its player's best on its leaderboard.
private struct BestScoreCandidate {
    /// A row of `best_scores` (`occurrence` 0), or of `occurrence_best_scores`.
    struct Key: Hashable, Comparable {
        var bundleID: String
        var environment: String
        var category: String
        var occurrence: Int64
        var playerID: String

        static func < (a: Key, b: Key) -> Bool {
            (a.bundleID, a.environment, a.category, a.occurrence, a.playerID) < (b.bundleID, b.environment, b.category, b.occurrence, b.playerID)
        }
    }

    var bundleID: String
    var environment: String
    var higherIsBetter: Bool
    var record: ScoreRecord

    /// The row of `occurrence_best_scores` (`occurrences`) or of `best_scores` this candidate may replace.
    func key(occurrences: Bool) -> Key {
        Key(
            bundleID: bundleID, environment: environment, category: record.category, occurrence: occurrences ? record.occurrence ?? 0 : 0,
            playerID: record.playerID)
    }
}

/// What tells two reports of one batch apart.
private struct ScoreContent: Hashable {
    var category: String
    var value: Int64
    var context: UInt64
    var earnedAt: Int64
}
