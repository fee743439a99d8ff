import Foundation
import GameCenterStorage
import SQLKit

extension Database {
    /// Fills one leaderboard for `gamecenter-bench leaderboard`: `count` players (ids `PREFIX1…PREFIXn`), one
    /// report each with a scattered value, and their bests, written by set-based SQL both engines run.
    func fillLeaderboard(bundleID: String, category: String, playerPrefix: String, count: Int, now: Int64) async throws {
        try await fillPlayers(prefix: playerPrefix, count: count, now: now)
        try await write { storage in
            try await storage.sql.raw(
                """
                WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < \(bind: count))
                INSERT INTO scores (bundle_id, environment, category, player_id, value, context, reported_at)
                SELECT \(bind: bundleID), 'sandbox', \(bind: category), \(bind: playerPrefix) || i, (i * 7919) % 1000003, 0, \(bind: now) - i % 1000 FROM n
                """
            ).run()
            try await storage.sql.raw(
                """
                INSERT INTO best_scores (bundle_id, environment, category, player_id, score_id, value)
                SELECT bundle_id, environment, category, player_id, score_id, value FROM scores
                WHERE bundle_id = \(bind: bundleID) AND category = \(bind: category)
                """
            ).run()
        }
    }

    /// Stores `count` sandbox players with ids `PREFIX1…PREFIXn` (no password can sign them in), for benchmarks.
    ///
    /// Each alias ("Bench 10") comes with its skeleton as the server computes it (confusables map `1` to `l` and
    /// `0` to `O`, then lowercase: "bench lo"): without one, a server starting on this database computes every
    /// skeleton in the background, and that work lands in whatever is measured first.
    func fillPlayers(prefix: String, count: Int, now: Int64) async throws {
        try await write { storage in
            try await storage.sql.raw(
                """
                WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < \(bind: count))
                INSERT INTO players (
                    player_id, environment, account_name, password_hash, alias, alias_skeleton, underage, event_seq, created_at, updated_at)
                SELECT \(bind: prefix) || i, 'sandbox', \(bind: prefix) || i, '-', 'Bench ' || i,
                    lower(replace(replace('Bench ' || i, '1', 'l'), '0', 'O')), 0, 0, \(bind: now), \(bind: now) FROM n
                """
            ).run()
        }
    }

    /// The "naive SQL leaderboard" anchor: a table of one row per player with an index on the value, filled with
    /// `count` rows like ``fillLeaderboard(bundleID:category:playerPrefix:count:now:)``.
    func createNaiveLeaderboard(count: Int) async throws {
        try await write { storage in
            try await storage.sql.raw("DROP TABLE IF EXISTS naive_leaderboard").run()
            try await storage.sql.raw("CREATE TABLE naive_leaderboard (player_id TEXT PRIMARY KEY, value BIGINT NOT NULL, reported_at BIGINT NOT NULL)").run()
            try await storage.sql.raw(
                """
                WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < \(bind: count))
                INSERT INTO naive_leaderboard (player_id, value, reported_at) SELECT 'p' || i, (i * 7919) % 1000003, i FROM n
                """
            ).run()
            try await storage.sql.raw("CREATE INDEX naive_by_value ON naive_leaderboard (value)").run()
        }
        if engine == .postgres { try await read { try await $0.sql.raw("ANALYZE naive_leaderboard").run() } }
    }

    /// The naive leaderboard's report: an upsert keeping the better value, one transaction each, from
    /// `concurrency` loops for `seconds`. Returns the upserts done and the time taken.
    func runNaiveReports(seconds: Double, concurrency: Int, count: Int) async throws -> (upserts: Int, elapsed: Double) {
        try await runLoops(seconds: seconds, concurrency: concurrency) { worker, n in
            let player = "p\((worker * 7_777_777 + n * 104_729) % count + 1)", value = Int64((n * 31 + worker) % 1_000_003)
            try await self.read { storage in
                try await storage.sql.raw(
                    """
                    INSERT INTO naive_leaderboard (player_id, value, reported_at) VALUES (\(bind: player), \(bind: value), \(bind: Int64(n)))
                    ON CONFLICT (player_id) DO UPDATE SET value = excluded.value, reported_at = excluded.reported_at
                    WHERE excluded.value > naive_leaderboard.value
                    """
                ).run()
            }
        }
    }

    /// The naive leaderboard's rank: `COUNT(*)` of the better rows, timed one query at a time. Returns latencies
    /// in milliseconds.
    func naiveRankLatencies(queries: Int, count: Int) async throws -> [Double] {
        var latencies: [Double] = []
        for n in 0..<queries {
            let player = "p\((n * 104_729) % count + 1)"
            let started = ContinuousClock.now
            _ = try await read { storage in
                try await storage.sql.raw(
                    """
                    SELECT COUNT(*) AS better FROM naive_leaderboard
                    WHERE value > (SELECT value FROM naive_leaderboard WHERE player_id = \(bind: player))
                    """
                ).first()
            }
            let (s, atto) = (ContinuousClock.now - started).components
            latencies.append(Double(s) * 1000 + Double(atto) / 1e15)
        }
        return latencies
    }
}
