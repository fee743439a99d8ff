import Foundation
import GameCenterStorage
import SQLKit

extension Database {
    /// The benchmark anchor "a plain SQL upsert loop on the same engine": `concurrency` loops, each upserting one
    /// row per statement in autocommit mode (one transaction, one fsync each; no group commit) into a scratch table
    /// for `seconds`. Returns the upserts done and the time taken.
    func runUpsertAnchor(seconds: Double, concurrency: Int) async throws -> (upserts: Int, elapsed: Double) {
        try await write { try await $0.sql.raw("CREATE TABLE IF NOT EXISTS anchor_upsert (k TEXT PRIMARY KEY, v DOUBLE PRECISION NOT NULL)").run() }
        let result = try await runLoops(seconds: seconds, concurrency: concurrency) { worker, count in
            let key = "w\(worker)-\(count % 1000)", value = Double(count)
            // `read` hands out a plain pooled connection: each statement commits on its own.
            try await self.read { storage in
                try await storage.sql.raw(
                    """
                    INSERT INTO anchor_upsert (k, v) VALUES (\(bind: key), \(bind: value))
                    ON CONFLICT (k) DO UPDATE SET v = excluded.v
                    """
                ).run()
            }
        }
        try await write { try await $0.sql.raw("DROP TABLE anchor_upsert").run() }
        return result
    }

    /// Runs `step(worker, n)` in `concurrency` loops until `seconds` have passed; returns the steps done and the
    /// time taken.
    func runLoops(
        seconds: Double, concurrency: Int, _ step: @escaping @Sendable (_ worker: Int, _ n: Int) async throws -> Void
    ) async throws -> (upserts: Int, elapsed: Double) {
        let start = ContinuousClock.now
        let deadline = start + .milliseconds(Int64(seconds * 1000))
        let total = try await withThrowingTaskGroup(of: Int.self) { group in
            for worker in 0..<concurrency {
                group.addTask {
                    var n = 0
                    while ContinuousClock.now < deadline {
                        try await step(worker, n)
                        n += 1
                    }
                    return n
                }
            }
            return try await group.reduce(0, +)
        }
        let (s, atto) = (ContinuousClock.now - start).components
        return (total, Double(s) + Double(atto) / 1e18)
    }
}
