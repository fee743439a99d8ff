import SQLKit

/// A game's event from the `game_events` outbox, as stored.
public struct GameEventRecord: Sendable, Equatable {
    /// Orders the events: committed earlier, smaller id (with holes on PostgreSQL, where transactions commit in any
    /// order).
    public var eventID: Int64
    public var bundleID: String
    public var environment: String
    /// The webhook event type (`match.ended`, …).
    public var kind: String
    /// What the event's deliveries are ordered by (a match id).
    public var orderKey: String
    /// The event's data as JSON.
    public var payload: String
    public var createdAt: Int64
}

extension StorageSession {
    /// Appends a game's event to the outbox, in the caller's transaction (so it is stored if and only if the change it
    /// tells of is); answers its id.
    @discardableResult
    public func appendGameEvent(bundleID: String, environment: String, kind: String, orderKey: String, payload: String, now: Int64) async throws
        -> Int64
    {
        guard
            let row = try await sql.raw(
                """
                INSERT INTO game_events (bundle_id, environment, kind, order_key, payload, created_at)
                VALUES (\(bind: bundleID), \(bind: environment), \(bind: kind), \(bind: orderKey), \(bind: payload), \(bind: now))
                RETURNING event_id
                """
            ).first()
        else { throw StorageError.notFound("the new game event's id") }
        return try row.int("event_id")
    }

    /// Games' events stored after `eventID`, in order, at most `limit`.
    public func gameEvents(after eventID: Int64, limit: Int) async throws -> [GameEventRecord] {
        try await sql.raw(
            """
            SELECT \(unsafeRaw: Self.gameEventColumns) FROM game_events WHERE event_id > \(bind: eventID) ORDER BY event_id LIMIT \(bind: Int64(limit))
            """
        ).all().map(Self.gameEvent)
    }

    /// The games' events with these ids (missing ids are skipped), in order.
    public func gameEvents(ids: [Int64]) async throws -> [GameEventRecord] {
        guard !ids.isEmpty else { return [] }
        return try await sql.raw(
            "SELECT \(unsafeRaw: Self.gameEventColumns) FROM game_events WHERE event_id IN (\(binds: ids)) ORDER BY event_id"
        ).all().map(Self.gameEvent)
    }

    /// The newest game event's id; 0 when there is none.
    public func lastGameEventID() async throws -> Int64 {
        try await sql.raw("SELECT COALESCE(MAX(event_id), 0) AS last FROM game_events").first().map { try $0.int("last") } ?? 0
    }

    private static let gameEventColumns = "event_id, bundle_id, environment, kind, order_key, payload, created_at"

    private static func gameEvent(_ row: any SQLRow) throws -> GameEventRecord {
        GameEventRecord(
            eventID: try row.int("event_id"), bundleID: try row.string("bundle_id"), environment: try row.string("environment"),
            kind: try row.string("kind"), orderKey: try row.string("order_key"), payload: try row.string("payload"),
            createdAt: try row.int("created_at"))
    }
}
