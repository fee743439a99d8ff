import SQLKit

extension StorageSession {
    /// A player's progress on a game's achievements, by identifier order.
    public func achievementProgress(bundleID: String, playerID: String) async throws -> [AchievementProgressRecord] {
        try await sql.raw(
            """
            SELECT identifier, percent, completed_at, last_reported_at FROM achievement_progress
            WHERE bundle_id = \(bind: bundleID) AND player_id = \(bind: playerID) ORDER BY identifier
            """
        ).all().map { row in
            AchievementProgressRecord(
                identifier: try row.string("identifier"), percent: try row.decode(column: "percent", as: Double.self),
                completedAt: try row.optionalInt("completed_at"), lastReportedAt: try row.int("last_reported_at")
            )
        }
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

    /// Applies reported progress: the stored percentage only ever grows, the first report reaching 100 sets the
    /// completion time, every report updates the report time. Returns the stored state afterwards.
    public func reportAchievement(
        bundleID: String, playerID: String, identifier: String, percent: Double, now: Int64
    ) async throws -> (record: AchievementProgressRecord, newlyCompleted: Bool) {
        let before = try await sql.raw(
            """
            SELECT completed_at FROM achievement_progress
            WHERE bundle_id = \(bind: bundleID) AND player_id = \(bind: playerID) AND identifier = \(bind: identifier)
            """
        ).first()
        let wasCompleted = try before?.optionalInt("completed_at") != nil
        let completedAt: Int64? = percent >= 100 ? now : nil
        guard
            let row = try await sql.raw(
                """
                INSERT INTO achievement_progress (bundle_id, player_id, identifier, percent, completed_at, last_reported_at)
                VALUES (\(bind: bundleID), \(bind: playerID), \(bind: identifier), \(bind: percent), \(bind: completedAt), \(bind: now))
                ON CONFLICT (bundle_id, player_id, identifier) DO UPDATE SET
                    percent = CASE WHEN excluded.percent > achievement_progress.percent THEN excluded.percent ELSE achievement_progress.percent END,
                    completed_at = COALESCE(achievement_progress.completed_at, excluded.completed_at),
                    last_reported_at = excluded.last_reported_at
                RETURNING identifier, percent, completed_at, last_reported_at
                """
            ).first()
        else { throw StorageError.notFound("achievement row vanished") }
        let record = AchievementProgressRecord(
            identifier: try row.string("identifier"), percent: try row.decode(column: "percent", as: Double.self),
            completedAt: try row.optionalInt("completed_at"), lastReportedAt: try row.int("last_reported_at")
        )
        return (record, !wasCompleted && record.completedAt != nil)
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

    /// Records that a device's report was applied; returns false when this player's report of this kind (`scores`,
    /// `achievements`) with this id was applied before. Reports of different kinds never share an id's record.
    public func markReportApplied(reportID: String, playerID: String, kind: String, now: Int64) async throws -> Bool {
        try await sql.raw(
            """
            INSERT INTO applied_reports (report_id, player_id, kind, applied_at)
            VALUES (\(bind: reportID), \(bind: playerID), \(bind: kind), \(bind: now))
            ON CONFLICT DO NOTHING
            RETURNING report_id
            """
        ).first() != nil
    }
}
