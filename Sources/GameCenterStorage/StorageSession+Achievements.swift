import SQLKit

extension StorageSession {
    /// A player's progress on a game's achievements, by identifier order.
    public func achievementProgress(bundleID: String, playerID: String) async throws -> [AchievementProgressRecord] {
        try await sql.raw(
            """
            SELECT identifier, percent, completed_at, last_reported_at FROM achievement_progress
            WHERE bundle_id = \(bind: bundleID) AND player_id = \(bind: playerID) ORDER BY identifier
            """
        ).all().map(Self.progressRecord)
    }

    /// The achievements a player completed in each of `bundleIDs` (games where they completed none are left out): one
    /// statement for any number of games, a primary-key range per game.
    public func completedAchievements(playerID: String, bundleIDs: [String]) async throws -> [String: [String]] {
        guard !bundleIDs.isEmpty else { return [:] }
        var completed: [String: [String]] = [:]
        for row in try await sql.raw(
            """
            SELECT bundle_id, identifier FROM achievement_progress
            WHERE bundle_id IN (\(binds: bundleIDs)) AND player_id = \(bind: playerID) AND completed_at IS NOT NULL
            ORDER BY bundle_id, identifier
            """
        ).all() {
            completed[try row.string("bundle_id"), default: []].append(try row.string("identifier"))
        }
        return completed
    }

    /// How rare a game's achievements are in one environment: how many players played the game there, and how many
    /// of them completed each achievement (achievements nobody completed are left out).
    public func achievementRarity(bundleID: String, environment: String) async throws -> AchievementRarityRecord {
        let players =
            try await sql.raw(
                """
                SELECT COUNT(*) AS players FROM played_games JOIN players ON players.player_id = played_games.player_id
                WHERE played_games.bundle_id = \(bind: bundleID) AND players.environment = \(bind: environment)
                """
            ).first().map { try $0.int("players") } ?? 0
        var completed: [String: Int64] = [:]
        for row in try await sql.raw(
            """
            SELECT achievement_progress.identifier, COUNT(*) AS completions FROM achievement_progress
            JOIN players ON players.player_id = achievement_progress.player_id
            WHERE achievement_progress.bundle_id = \(bind: bundleID) AND players.environment = \(bind: environment)
              AND achievement_progress.completed_at IS NOT NULL
            GROUP BY achievement_progress.identifier
            """
        ).all() {
            completed[try row.string("identifier")] = try row.int("completions")
        }
        return AchievementRarityRecord(players: players, completions: completed)
    }

    /// Applies one report of a player's progress on a game's achievements once per `reportID`: a stored percentage
    /// only ever grows, the first report reaching 100 sets the completion time (`now`) and stores the entry's
    /// `completionEvent` as an event of `eventKind` in the player's stream, every report updates the report time.
    /// Returns the reported achievements' stored progress afterwards, and which of them this report completed; `applied`
    /// is false (and nothing changed) when this player's achievement report with this id was applied before.
    ///
    /// Who completed an achievement is read from the row the upsert wrote (`completed_by`, the completing report's
    /// id), not from a read before it: two reports racing to complete one achievement log one completion, with no lock.
    /// On PostgreSQL this is one prepared statement (``AchievementReportStatement``; run it with
    /// ``Database/writeStatement(_:)``). ``Database/reportAchievements(reportID:_:bundleID:playerID:eventKind:now:)``
    /// sends it together with other players' reports of the same moment.
    public func reportAchievements(
        reportID: String, _ entries: [AchievementReportEntry], bundleID: String, playerID: String, eventKind: String, now: Int64
    ) async throws -> AchievementReportOutcome {
        try await reportAchievements([
            PendingAchievementReport(
                reportID: reportID, entries: Self.merged(entries), bundleID: bundleID, playerID: playerID, eventKind: eventKind, now: now)
        ])[0]
    }

    /// One entry per achievement (a statement may not touch a row twice): the highest progress reported for it, by
    /// identifier.
    static func merged(_ entries: [AchievementReportEntry]) -> [AchievementReportEntry] {
        var merged: [String: AchievementReportEntry] = [:]
        for entry in entries where (merged[entry.identifier]?.percent ?? -1) < entry.percent {
            merged[entry.identifier] = entry
        }
        return merged.values.sorted { $0.identifier < $1.identifier }
    }

    /// ``reportAchievements(reportID:_:bundleID:playerID:eventKind:now:)`` for several reports of distinct players, their
    /// entries ``merged(_:)``: all are applied or none. Answers in the order of `reports`; a report applied before
    /// costs one more statement, which reads its answer. On PostgreSQL this is one statement; on SQLite, in the
    /// writer's transaction, two whatever the number of reports (the report ids, the progress), then two per
    /// completion (its event).
    func reportAchievements(_ reports: [PendingAchievementReport]) async throws -> [AchievementReportOutcome] {
        precondition(Set(reports.map(\.playerID)).count == reports.count, "one report per player in a batch")
        var returned: [String: [StoredProgress]] = [:]
        if engine == .postgres {
            for row in try await execute(AchievementReportStatement(reports: reports)) {
                returned[row.0, default: []].append(
                    StoredProgress(
                        record: AchievementProgressRecord(identifier: row.1, percent: row.2, completedAt: row.3, lastReportedAt: row.4), completedBy: row.5))
            }
        } else {
            let players = try await markReportsApplied(reports.map { ($0.reportID, $0.playerID, $0.now) }, kind: ReportKind.achievements)
            returned = try await storeProgress(reports.filter { players.contains($0.playerID) })
            for player in players where returned[player] == nil { returned[player] = [] }  // applied, with no entries
        }
        var outcomes: [AchievementReportOutcome] = []
        for report in reports {
            // Every entry of an applied report returns its row: none means the id was applied before.
            guard let rows = returned[report.playerID] else {
                outcomes.append(try await unapplied(report.entries, bundleID: report.bundleID, playerID: report.playerID))
                continue
            }
            let outcome = Self.outcome(rows, reportID: report.reportID, now: report.now)
            if engine != .postgres {
                for entry in report.entries where outcome.newlyCompleted.contains(entry.identifier) {
                    _ = try await appendEvent(playerID: report.playerID, kind: report.eventKind, payload: entry.completionEvent, now: report.now)
                }
            }
            outcomes.append(outcome)
        }
        return outcomes
    }

    /// Upserts the progress of `reports` in one statement (SQLite; PostgreSQL's report statement does it itself);
    /// returns the rows it wrote, by player.
    private func storeProgress(_ reports: [PendingAchievementReport]) async throws -> [String: [StoredProgress]] {
        let rows = reports.flatMap { report in
            report.entries.map { entry in
                let completes = entry.percent >= 100
                return SQLGroupExpression(
                    [
                        SQLBind(report.bundleID), SQLBind(report.playerID), SQLBind(entry.identifier), SQLBind(entry.percent),
                        SQLBind(completes ? report.now : nil), SQLBind(report.now), SQLBind(completes ? report.reportID : nil),
                    ] as [any SQLExpression])
            }
        }
        guard !rows.isEmpty else { return [:] }
        var returned: [String: [StoredProgress]] = [:]
        for row in try await sql.raw(
            """
            INSERT INTO achievement_progress (bundle_id, player_id, identifier, percent, completed_at, last_reported_at, completed_by)
            VALUES \(SQLList(rows))
            ON CONFLICT (bundle_id, player_id, identifier) DO UPDATE SET
                percent = CASE WHEN excluded.percent > achievement_progress.percent THEN excluded.percent ELSE achievement_progress.percent END,
                completed_at = COALESCE(achievement_progress.completed_at, excluded.completed_at),
                completed_by = CASE WHEN achievement_progress.completed_at IS NULL THEN excluded.completed_by ELSE achievement_progress.completed_by END,
                last_reported_at = excluded.last_reported_at
            RETURNING player_id, identifier, percent, completed_at, last_reported_at, completed_by
            """
        ).all() {
            returned[try row.string("player_id"), default: []].append(
                StoredProgress(record: try Self.progressRecord(row), completedBy: try row.optionalString("completed_by")))
        }
        return returned
    }

    /// The rows an achievement upsert returned: their records by identifier, and those this report completed.
    private static func outcome(_ rows: [StoredProgress], reportID: String, now: Int64) -> AchievementReportOutcome {
        var progress: [AchievementProgressRecord] = [], completed: [String] = []
        for row in rows {
            progress.append(row.record)
            if row.completedBy == reportID, row.record.completedAt == now { completed.append(row.record.identifier) }
        }
        return AchievementReportOutcome(applied: true, progress: progress.sorted { $0.identifier < $1.identifier }, newlyCompleted: completed.sorted())
    }

    /// The answer to a report whose id was applied before: the reported achievements' stored progress.
    private func unapplied(_ reported: [AchievementReportEntry], bundleID: String, playerID: String) async throws -> AchievementReportOutcome {
        let identifiers = Set(reported.map(\.identifier))
        let progress = try await achievementProgress(bundleID: bundleID, playerID: playerID).filter { identifiers.contains($0.identifier) }
        return AchievementReportOutcome(applied: false, progress: progress)
    }

    private static func progressRecord(_ row: any SQLRow) throws -> AchievementProgressRecord {
        AchievementProgressRecord(
            identifier: try row.string("identifier"), percent: try row.decode(column: "percent", as: Double.self),
            completedAt: try row.optionalInt("completed_at"), lastReportedAt: try row.int("last_reported_at"))
    }

    /// Erases a player's progress on a game's achievements; returns how many were erased.
    @discardableResult
    public func resetAchievements(bundleID: String, playerID: String) async throws -> Int {
        try await sql.raw(
            """
            DELETE FROM achievement_progress WHERE bundle_id = \(bind: bundleID) AND player_id = \(bind: playerID)
            RETURNING identifier
            """
        ).all().count
    }

    /// Records that a device's report was applied; returns false when this player's report of this kind (a
    /// ``ReportKind``) with this id was applied before. Reports of different kinds never share an id's record.
    public func markReportApplied(reportID: String, playerID: String, kind: String, now: Int64) async throws -> Bool {
        try await markReportsApplied([(reportID, playerID, now)], kind: kind).contains(playerID)
    }

    /// ``markReportApplied(reportID:playerID:kind:now:)`` for reports of distinct players, in one statement; returns
    /// the players whose report was not applied before.
    func markReportsApplied(_ reports: [(reportID: String, playerID: String, now: Int64)], kind: String) async throws -> Set<String> {
        guard !reports.isEmpty else { return [] }
        let rows = reports.map { report in
            SQLGroupExpression([SQLBind(report.reportID), SQLBind(report.playerID), SQLBind(kind), SQLBind(report.now)] as [any SQLExpression])
        }
        return Set(
            try await sql.raw(
                """
                INSERT INTO applied_reports (report_id, player_id, kind, applied_at) VALUES \(SQLList(rows))
                ON CONFLICT DO NOTHING
                RETURNING player_id
                """
            ).all().map { try $0.string("player_id") })
    }
}

/// A row an achievement upsert returned.
private struct StoredProgress {
    var record: AchievementProgressRecord
    /// The report that completed the achievement, if it is complete.
    var completedBy: String?
}
