import PostgresNIO

/// The single score report on PostgreSQL, kept prepared: the report id, the scores and the bests in one statement
/// (see ``StorageSession/reportScores(reportID:_:bundleID:environment:playerID:now:)``). The scores travel as arrays,
/// so one statement text serves every report; the parts see each other only through `RETURNING`. A concurrent report
/// with the same id waits on the first's row of `applied_reports` and then inserts nothing.
struct ScoreReportStatement: PostgresPreparedStatement {
    static let sql = """
        WITH input AS (
            SELECT * FROM unnest($6::TEXT[], $7::BIGINT[], $8::BIGINT[], $9::BIGINT[], $10::BOOLEAN[])
                AS t (category, value, context, reported_at, higher_is_better)),
        applied AS (
            INSERT INTO applied_reports (report_id, player_id, kind, applied_at) VALUES ($1, $2, 'scores', $3)
            ON CONFLICT DO NOTHING RETURNING report_id),
        inserted AS (
            INSERT INTO scores (bundle_id, environment, category, player_id, value, context, reported_at)
            SELECT $4, $5, category, $2, value, context, reported_at FROM input WHERE EXISTS (SELECT 1 FROM applied)
            RETURNING score_id, category, value, context, reported_at),
        higher AS (
            INSERT INTO best_scores (bundle_id, environment, category, player_id, score_id, value)
            SELECT DISTINCT ON (category) $4, $5, category, $2, score_id, value FROM inserted
            WHERE category IN (SELECT category FROM input WHERE higher_is_better) ORDER BY category, value DESC, score_id
            ON CONFLICT (bundle_id, environment, category, player_id) DO UPDATE SET score_id = excluded.score_id, value = excluded.value
            WHERE excluded.value > best_scores.value OR (excluded.value = best_scores.value AND excluded.score_id < best_scores.score_id)),
        lower AS (
            INSERT INTO best_scores (bundle_id, environment, category, player_id, score_id, value)
            SELECT DISTINCT ON (category) $4, $5, category, $2, score_id, value FROM inserted
            WHERE category IN (SELECT category FROM input WHERE NOT higher_is_better) ORDER BY category, value ASC, score_id
            ON CONFLICT (bundle_id, environment, category, player_id) DO UPDATE SET score_id = excluded.score_id, value = excluded.value
            WHERE excluded.value < best_scores.value OR (excluded.value = best_scores.value AND excluded.score_id < best_scores.score_id))
        SELECT score_id, category, value, context, reported_at FROM inserted
        """
    /// The stored score: id, category, value, context, when earned.
    typealias Row = (Int64, String, Int64, Int64, Int64)

    var reportID: String
    var playerID: String
    var now: Int64
    var bundleID: String
    var environment: String
    var scores: [NewScore]

    func makeBindings() throws -> PostgresBindings {
        var bindings = PostgresBindings(capacity: 10)
        bindings.append(reportID)
        bindings.append(playerID)
        bindings.append(now)
        bindings.append(bundleID)
        bindings.append(environment)
        bindings.append(scores.map(\.category))
        bindings.append(scores.map(\.value))
        bindings.append(scores.map { Int64(bitPattern: $0.context) })
        bindings.append(scores.map(\.earnedAt))
        bindings.append(scores.map(\.higherIsBetter))
        return bindings
    }

    func decodeRow(_ row: PostgresRow) throws -> Row {
        try row.decode(Row.self)
    }
}

/// The single achievement report on PostgreSQL, kept prepared: the report id, the progress and the completion events
/// in one statement (see ``StorageSession/reportAchievements(reportID:_:bundleID:playerID:eventKind:now:)``). The
/// upsert tells from the row it wrote whether this report completed the achievement (`completed_by`, and
/// `completed_at` of this moment), and only those completions take an event number and an event row.
struct AchievementReportStatement: PostgresPreparedStatement {
    static let sql = """
        WITH input AS (
            SELECT identifier, percent, CASE WHEN completes THEN $3::BIGINT END AS completed_at,
                CASE WHEN completes THEN $1::TEXT END AS completed_by, NULLIF(event, '') AS event
            FROM unnest($6::TEXT[], $7::DOUBLE PRECISION[], $8::BOOLEAN[], $9::TEXT[]) AS t (identifier, percent, completes, event)),
        applied AS (
            INSERT INTO applied_reports (report_id, player_id, kind, applied_at) VALUES ($1, $2, 'achievements', $3)
            ON CONFLICT DO NOTHING RETURNING report_id),
        upserted AS (
            INSERT INTO achievement_progress (bundle_id, player_id, identifier, percent, completed_at, last_reported_at, completed_by)
            SELECT $4, $2, identifier, percent, completed_at, $3, completed_by FROM input WHERE EXISTS (SELECT 1 FROM applied)
            ON CONFLICT (bundle_id, player_id, identifier) DO UPDATE SET
                percent = CASE WHEN excluded.percent > achievement_progress.percent THEN excluded.percent ELSE achievement_progress.percent END,
                completed_at = COALESCE(achievement_progress.completed_at, excluded.completed_at),
                completed_by = CASE WHEN achievement_progress.completed_at IS NULL THEN excluded.completed_by ELSE achievement_progress.completed_by END,
                last_reported_at = excluded.last_reported_at
            RETURNING identifier, percent, completed_at, last_reported_at, completed_by),
        completed AS (
            SELECT upserted.identifier, input.event, row_number() OVER (ORDER BY upserted.identifier) AS n
            FROM upserted JOIN input USING (identifier)
            WHERE upserted.completed_by = $1 AND upserted.completed_at = $3),
        numbered AS (
            UPDATE players SET event_seq = event_seq + (SELECT COUNT(*) FROM completed)
            WHERE player_id = $2 AND EXISTS (SELECT 1 FROM completed) RETURNING event_seq),
        stored_events AS (
            INSERT INTO events (player_id, seq, kind, payload, created_at)
            SELECT $2, numbered.event_seq - (SELECT COUNT(*) FROM completed) + completed.n, $5, completed.event, $3
            FROM completed, numbered RETURNING seq)
        SELECT identifier, percent, completed_at, last_reported_at, completed_by FROM upserted
        """
    /// The stored progress: identifier, percent, when completed, when last reported, which report completed it.
    typealias Row = (String, Double, Int64?, Int64, String?)

    var reportID: String
    var playerID: String
    var now: Int64
    var bundleID: String
    var eventKind: String
    /// One per achievement.
    var entries: [AchievementReportEntry]

    func makeBindings() throws -> PostgresBindings {
        var bindings = PostgresBindings(capacity: 9)
        bindings.append(reportID)
        bindings.append(playerID)
        bindings.append(now)
        bindings.append(bundleID)
        bindings.append(eventKind)
        bindings.append(entries.map(\.identifier))
        bindings.append(entries.map(\.percent))
        bindings.append(entries.map { $0.percent >= 100 })
        bindings.append(entries.map { $0.percent >= 100 ? $0.completionEvent : "" })
        return bindings
    }

    func decodeRow(_ row: PostgresRow) throws -> Row {
        try row.decode(Row.self)
    }
}
