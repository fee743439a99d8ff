import SQLKit

extension StorageSession {
    /// Records that an occurrence of a recurring leaderboard started or ended, unless it was recorded before (by this
    /// node or another): returns the new event's id, or nil when it existed.
    public func recordOccurrenceEvent(_ event: NewOccurrenceEvent) async throws -> Int64? {
        try await sql.raw(
            """
            INSERT INTO occurrence_events (bundle_id, environment, category, occurrence, occurrence_end, kind, recorded_at, standings)
            VALUES (\(bind: event.bundleID), \(bind: event.environment), \(bind: event.category), \(bind: event.occurrence),
                \(bind: event.occurrenceEnd), \(bind: event.kind), \(bind: event.recordedAt), \(bind: event.standings))
            ON CONFLICT (bundle_id, environment, category, occurrence, kind) DO NOTHING
            RETURNING event_id
            """
        ).first().map { try $0.int("event_id") }
    }

    /// Whether an occurrence's start or end is recorded.
    public func hasOccurrenceEvent(bundleID: String, environment: String, category: String, occurrence: Int64, kind: String) async throws -> Bool {
        try await sql.raw(
            """
            SELECT 1 AS found FROM occurrence_events WHERE bundle_id = \(bind: bundleID) AND environment = \(bind: environment)
              AND category = \(bind: category) AND occurrence = \(bind: occurrence) AND kind = \(bind: kind)
            """
        ).first() != nil
    }

    /// A game's occurrence events recorded after `eventID`, oldest first, at most `limit`.
    public func occurrenceEvents(bundleID: String, after eventID: Int64, limit: Int) async throws -> [OccurrenceEventRecord] {
        try await sql.raw(
            """
            SELECT \(unsafeRaw: Self.occurrenceEventColumns) FROM occurrence_events
            WHERE bundle_id = \(bind: bundleID) AND event_id > \(bind: eventID) ORDER BY event_id LIMIT \(bind: Int64(limit))
            """
        ).all().map(Self.occurrenceEvent)
    }

    /// Every game's occurrence events recorded after `eventID`, oldest first, at most `limit` (for webhooks).
    public func occurrenceEvents(after eventID: Int64, limit: Int) async throws -> [OccurrenceEventRecord] {
        try await sql.raw(
            """
            SELECT \(unsafeRaw: Self.occurrenceEventColumns) FROM occurrence_events
            WHERE event_id > \(bind: eventID) ORDER BY event_id LIMIT \(bind: Int64(limit))
            """
        ).all().map(Self.occurrenceEvent)
    }

    /// The occurrence events with these ids (missing ids are skipped), in order.
    public func occurrenceEvents(ids: [Int64]) async throws -> [OccurrenceEventRecord] {
        guard !ids.isEmpty else { return [] }
        return try await sql.raw(
            "SELECT \(unsafeRaw: Self.occurrenceEventColumns) FROM occurrence_events WHERE event_id IN (\(binds: ids)) ORDER BY event_id"
        ).all().map(Self.occurrenceEvent)
    }

    /// The newest occurrence event's id; 0 when there is none.
    public func lastOccurrenceEventID() async throws -> Int64 {
        try await sql.raw("SELECT COALESCE(MAX(event_id), 0) AS last FROM occurrence_events").first().map { try $0.int("last") } ?? 0
    }

    private static let occurrenceEventColumns =
        "event_id, bundle_id, environment, category, occurrence, occurrence_end, kind, recorded_at, standings"

    private static func occurrenceEvent(_ row: any SQLRow) throws -> OccurrenceEventRecord {
        OccurrenceEventRecord(
            eventID: try row.int("event_id"), bundleID: try row.string("bundle_id"), environment: try row.string("environment"),
            category: try row.string("category"), occurrence: try row.int("occurrence"), occurrenceEnd: try row.int("occurrence_end"),
            kind: try row.string("kind"), recordedAt: try row.int("recorded_at"), standings: try row.string("standings"))
    }
}

/// An occurrence's start or end about to be recorded.
public struct NewOccurrenceEvent: Sendable, Equatable {
    public var bundleID: String
    public var environment: String
    public var category: String
    /// The occurrence's start and end (milliseconds since 1970).
    public var occurrence: Int64
    public var occurrenceEnd: Int64
    /// `started` or `ended`.
    public var kind: String
    public var recordedAt: Int64
    /// The final standings of an end (JSON); `[]` for a start.
    public var standings: String

    public init(
        bundleID: String, environment: String, category: String, occurrence: Int64, occurrenceEnd: Int64, kind: String, recordedAt: Int64,
        standings: String
    ) {
        self.bundleID = bundleID
        self.environment = environment
        self.category = category
        self.occurrence = occurrence
        self.occurrenceEnd = occurrenceEnd
        self.kind = kind
        self.recordedAt = recordedAt
        self.standings = standings
    }
}

/// A recorded occurrence start or end.
public struct OccurrenceEventRecord: Sendable, Equatable {
    /// Orders the events: recorded earlier, smaller id.
    public var eventID: Int64
    public var bundleID: String
    public var environment: String
    public var category: String
    public var occurrence: Int64
    public var occurrenceEnd: Int64
    public var kind: String
    public var recordedAt: Int64
    public var standings: String
}
