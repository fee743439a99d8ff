import SQLKit

/// One stored bucket of a rule-based queue's metrics.
public struct QueueMetricsRow: Sendable, Equatable {
    /// When the bucket starts (ms since 1970).
    public var start: Int64
    /// The figures as JSON (the server's mergeable sketches).
    public var figures: String

    public init(start: Int64, figures: String) {
        self.start = start
        self.figures = figures
    }
}

extension StorageSession {
    /// Merges figures into the stored bucket of `queue` that starts at `start`: `merge` gets the stored figures (nil:
    /// none yet) and answers the figures to store. The bucket's row is locked meanwhile (PostgreSQL), so that two nodes
    /// flushing the same bucket both count. Run it inside ``Database/write(_:)``.
    public func mergeQueueMetrics(
        bundleID: String, environment: String, queue: String, start: Int64, _ merge: (_ stored: String?) throws -> String
    ) async throws {
        try await sql.raw(
            """
            INSERT INTO matchmaking_queue_metrics (bundle_id, environment, queue, bucket_start, figures)
            VALUES (\(bind: bundleID), \(bind: environment), \(bind: queue), \(bind: start), '')
            ON CONFLICT (bundle_id, environment, queue, bucket_start) DO NOTHING
            """
        ).run()
        let lock = SQLQueryString(engine == .postgres ? " FOR UPDATE" : "")
        let stored = try await sql.raw(
            """
            SELECT figures FROM matchmaking_queue_metrics
            WHERE bundle_id = \(bind: bundleID) AND environment = \(bind: environment) AND queue = \(bind: queue) AND bucket_start = \(bind: start)\(lock)
            """
        ).first()?.decode(column: "figures", as: String.self)
        let figures = try merge(stored.flatMap { $0.isEmpty ? nil : $0 })
        try await sql.raw(
            """
            UPDATE matchmaking_queue_metrics SET figures = \(bind: figures)
            WHERE bundle_id = \(bind: bundleID) AND environment = \(bind: environment) AND queue = \(bind: queue) AND bucket_start = \(bind: start)
            """
        ).run()
    }

    /// The stored buckets of `queue` that start in `from..<to`, oldest first.
    public func queueMetrics(bundleID: String, environment: String, queue: String, from: Int64, to: Int64) async throws -> [QueueMetricsRow] {
        try await sql.raw(
            """
            SELECT bucket_start, figures FROM matchmaking_queue_metrics
            WHERE bundle_id = \(bind: bundleID) AND environment = \(bind: environment) AND queue = \(bind: queue)
              AND bucket_start >= \(bind: from) AND bucket_start < \(bind: to) AND figures <> ''
            ORDER BY bucket_start
            """
        ).all().map { QueueMetricsRow(start: try $0.int("bucket_start"), figures: try $0.string("figures")) }
    }

    /// Forgets every queue's buckets that start before `before`; returns how many.
    @discardableResult
    public func deleteQueueMetrics(before: Int64) async throws -> Int {
        try await sql.raw("DELETE FROM matchmaking_queue_metrics WHERE bucket_start < \(bind: before) RETURNING bucket_start").all().count
    }
}
