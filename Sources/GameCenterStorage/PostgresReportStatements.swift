import PostgresNIO

/// Score reports on PostgreSQL, kept prepared: for each report the report id, the scores and the bests, in one
/// statement for any number of reports of distinct players (a batch of ``StatementBatcher``; one report when alone).
/// Every entry travels as a row of arrays (its report's id, player, time, game and environment repeated), so one
/// statement text serves every batch; the parts see each other only through `RETURNING`. A concurrent report with
/// the same id waits on the first's row of `applied_reports` and then inserts nothing.
struct ScoreReportStatement: PostgresPreparedStatement {
    static let sql = """
        WITH signed AS (
            SELECT player_id, session_id, counter FROM unnest($12::TEXT[], $13::TEXT[], $14::BIGINT[]) AS c (player_id, session_id, counter)),
        counted AS (
            UPDATE report_keys AS k SET counter = signed.counter FROM signed
            WHERE k.session_id = signed.session_id AND signed.counter > k.counter
            RETURNING k.session_id),
        refused AS (
            SELECT player_id FROM signed WHERE session_id NOT IN (SELECT session_id FROM counted)),
        input AS (
            SELECT report_id, player_id, applied_at, bundle_id, environment, category, value, context, reported_at, higher_is_better,
                NULLIF(occurrence_or_min, '-9223372036854775808'::BIGINT) AS occurrence
            FROM unnest($1::TEXT[], $2::TEXT[], $3::BIGINT[], $4::TEXT[], $5::TEXT[], $6::TEXT[], $7::BIGINT[], $8::BIGINT[],
                $9::BIGINT[], $10::BOOLEAN[], $11::BIGINT[])
                AS t (report_id, player_id, applied_at, bundle_id, environment, category, value, context, reported_at, higher_is_better,
                    occurrence_or_min)
            WHERE player_id NOT IN (SELECT player_id FROM refused)),
        applied AS (
            INSERT INTO applied_reports (report_id, player_id, kind, applied_at)
            SELECT DISTINCT ON (player_id) report_id, player_id, 'scores', applied_at FROM input ORDER BY player_id
            ON CONFLICT DO NOTHING RETURNING report_id, player_id),
        inserted AS (
            INSERT INTO scores (bundle_id, environment, category, player_id, value, context, reported_at, occurrence)
            SELECT bundle_id, environment, category, player_id, value, context, reported_at, occurrence
            FROM input JOIN applied USING (report_id, player_id)
            RETURNING score_id, bundle_id, environment, category, player_id, value, context, reported_at, occurrence),
        orders AS (SELECT DISTINCT player_id, category, higher_is_better FROM input),
        higher AS (
            INSERT INTO best_scores (bundle_id, environment, category, player_id, score_id, value)
            SELECT DISTINCT ON (player_id, category) bundle_id, environment, category, player_id, score_id, value
            FROM inserted JOIN orders USING (player_id, category) WHERE higher_is_better ORDER BY player_id, category, value DESC, score_id
            ON CONFLICT (bundle_id, environment, category, player_id) DO UPDATE SET score_id = excluded.score_id, value = excluded.value
            WHERE excluded.value > best_scores.value OR (excluded.value = best_scores.value AND excluded.score_id < best_scores.score_id)),
        lower AS (
            INSERT INTO best_scores (bundle_id, environment, category, player_id, score_id, value)
            SELECT DISTINCT ON (player_id, category) bundle_id, environment, category, player_id, score_id, value
            FROM inserted JOIN orders USING (player_id, category) WHERE NOT higher_is_better ORDER BY player_id, category, value ASC, score_id
            ON CONFLICT (bundle_id, environment, category, player_id) DO UPDATE SET score_id = excluded.score_id, value = excluded.value
            WHERE excluded.value < best_scores.value OR (excluded.value = best_scores.value AND excluded.score_id < best_scores.score_id)),
        occurrence_higher AS (
            INSERT INTO occurrence_best_scores (bundle_id, environment, category, occurrence, player_id, score_id, value)
            SELECT DISTINCT ON (player_id, category) bundle_id, environment, category, occurrence, player_id, score_id, value
            FROM inserted JOIN orders USING (player_id, category) WHERE higher_is_better AND occurrence IS NOT NULL
            ORDER BY player_id, category, value DESC, score_id
            ON CONFLICT (bundle_id, environment, category, occurrence, player_id) DO UPDATE SET score_id = excluded.score_id, value = excluded.value
            WHERE excluded.value > occurrence_best_scores.value
               OR (excluded.value = occurrence_best_scores.value AND excluded.score_id < occurrence_best_scores.score_id)),
        occurrence_lower AS (
            INSERT INTO occurrence_best_scores (bundle_id, environment, category, occurrence, player_id, score_id, value)
            SELECT DISTINCT ON (player_id, category) bundle_id, environment, category, occurrence, player_id, score_id, value
            FROM inserted JOIN orders USING (player_id, category) WHERE NOT higher_is_better AND occurrence IS NOT NULL
            ORDER BY player_id, category, value ASC, score_id
            ON CONFLICT (bundle_id, environment, category, occurrence, player_id) DO UPDATE SET score_id = excluded.score_id, value = excluded.value
            WHERE excluded.value < occurrence_best_scores.value
               OR (excluded.value = occurrence_best_scores.value AND excluded.score_id < occurrence_best_scores.score_id))
        SELECT score_id, player_id, category, value, context, reported_at FROM inserted
        UNION ALL SELECT -1, player_id, '', 0, 0, 0 FROM refused
        """
    /// The stored score: id, player, category, value, context, when earned; or, for a signed report whose counter was
    /// not above its key's last (nothing of it stored), id -1 and the player.
    typealias Row = (Int64, String, String, Int64, Int64, Int64)

    /// Of distinct players.
    var reports: [PendingScoreReport]

    func makeBindings() throws -> PostgresBindings {
        let entries = reports.flatMap { report in report.scores.map { (report, $0) } }
        var bindings = PostgresBindings(capacity: 14)
        bindings.append(entries.map(\.0.reportID))
        bindings.append(entries.map(\.0.playerID))
        bindings.append(entries.map(\.0.now))
        bindings.append(entries.map(\.0.bundleID))
        bindings.append(entries.map(\.0.environment))
        bindings.append(entries.map(\.1.category))
        bindings.append(entries.map(\.1.value))
        bindings.append(entries.map { Int64(bitPattern: $0.1.context) })
        bindings.append(entries.map(\.1.earnedAt))
        bindings.append(entries.map(\.1.higherIsBetter))
        // Arrays carry no NULLs here: a classic board's score sends Int64.min, which the statement reads as NULL.
        bindings.append(entries.map { $0.1.occurrence ?? Int64.min })
        let signed = reports.compactMap { report in report.counter.map { (report.playerID, $0) } }
        bindings.append(signed.map(\.0))
        bindings.append(signed.map(\.1.sessionID))
        bindings.append(signed.map(\.1.counter))
        return bindings
    }

    func decodeRow(_ row: PostgresRow) throws -> Row {
        try row.decode(Row.self)
    }
}

/// Achievement reports on PostgreSQL, kept prepared: for each report the report id, the progress and the completion
/// events, in one statement for any number of reports of distinct players (as ``ScoreReportStatement``). The upsert
/// tells from the row it wrote whether this report completed the achievement (`completed_by`, and `completed_at` of
/// this moment), and only those completions take an event number (per player, in identifier order) and an event row.
struct AchievementReportStatement: PostgresPreparedStatement {
    static let sql = """
        WITH input AS (
            SELECT report_id, player_id, now, bundle_id, event_kind, identifier, percent,
                CASE WHEN completes THEN now END AS completed_at, CASE WHEN completes THEN report_id END AS completed_by,
                NULLIF(event, '') AS event
            FROM unnest($1::TEXT[], $2::TEXT[], $3::BIGINT[], $4::TEXT[], $5::TEXT[], $6::TEXT[], $7::DOUBLE PRECISION[], $8::BOOLEAN[], $9::TEXT[])
                AS t (report_id, player_id, now, bundle_id, event_kind, identifier, percent, completes, event)),
        applied AS (
            INSERT INTO applied_reports (report_id, player_id, kind, applied_at)
            SELECT DISTINCT ON (player_id) report_id, player_id, 'achievements', now FROM input ORDER BY player_id
            ON CONFLICT DO NOTHING RETURNING report_id, player_id),
        upserted AS (
            INSERT INTO achievement_progress (bundle_id, player_id, identifier, percent, completed_at, last_reported_at, completed_by)
            SELECT bundle_id, player_id, identifier, percent, completed_at, now, completed_by FROM input JOIN applied USING (report_id, player_id)
            ON CONFLICT (bundle_id, player_id, identifier) DO UPDATE SET
                percent = CASE WHEN excluded.percent > achievement_progress.percent THEN excluded.percent ELSE achievement_progress.percent END,
                completed_at = COALESCE(achievement_progress.completed_at, excluded.completed_at),
                completed_by = CASE WHEN achievement_progress.completed_at IS NULL THEN excluded.completed_by ELSE achievement_progress.completed_by END,
                last_reported_at = excluded.last_reported_at
            RETURNING player_id, identifier, percent, completed_at, last_reported_at, completed_by),
        completed AS (
            SELECT upserted.player_id, input.event, input.event_kind, input.now,
                row_number() OVER (PARTITION BY upserted.player_id ORDER BY upserted.identifier) AS n
            FROM upserted JOIN input ON input.player_id = upserted.player_id AND input.identifier = upserted.identifier
            WHERE upserted.completed_by = input.report_id AND upserted.completed_at = input.now),
        counts AS (SELECT player_id, COUNT(*) AS total FROM completed GROUP BY player_id),
        numbered AS (
            UPDATE players SET event_seq = players.event_seq + counts.total FROM counts
            WHERE players.player_id = counts.player_id RETURNING players.player_id, players.event_seq, counts.total),
        stored_events AS (
            INSERT INTO events (player_id, seq, kind, payload, created_at)
            SELECT completed.player_id, numbered.event_seq - numbered.total + completed.n, completed.event_kind, completed.event, completed.now
            FROM completed JOIN numbered ON numbered.player_id = completed.player_id RETURNING seq)
        SELECT player_id, identifier, percent, completed_at, last_reported_at, completed_by FROM upserted
        """
    /// The stored progress: player, identifier, percent, when completed, when last reported, which report completed it.
    typealias Row = (String, String, Double, Int64?, Int64, String?)

    /// Of distinct players, each entry of one achievement.
    var reports: [PendingAchievementReport]

    func makeBindings() throws -> PostgresBindings {
        let entries = reports.flatMap { report in report.entries.map { (report, $0) } }
        var bindings = PostgresBindings(capacity: 9)
        bindings.append(entries.map(\.0.reportID))
        bindings.append(entries.map(\.0.playerID))
        bindings.append(entries.map(\.0.now))
        bindings.append(entries.map(\.0.bundleID))
        bindings.append(entries.map(\.0.eventKind))
        bindings.append(entries.map(\.1.identifier))
        bindings.append(entries.map(\.1.percent))
        bindings.append(entries.map { $0.1.percent >= 100 })
        bindings.append(entries.map { $0.1.percent >= 100 ? $0.1.completionEvent : "" })
        return bindings
    }

    func decodeRow(_ row: PostgresRow) throws -> Row {
        try row.decode(Row.self)
    }
}
