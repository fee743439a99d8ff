import SQLKit

/// A party's row: players of one game who share a code.
public struct PartyRecord: Sendable, Equatable {
    public var partyID: String
    public var bundleID: String
    public var environment: String
    public var code: String
    /// Whether others may still join (its host has not ended their activity).
    public var isLive: Bool
    public var definition: String
    public var hostID: String
    public var createdAt: Int64
    public var expiresAt: Int64

    public init(
        partyID: String, bundleID: String, environment: String, code: String, isLive: Bool, definition: String, hostID: String, createdAt: Int64,
        expiresAt: Int64
    ) {
        self.partyID = partyID
        self.bundleID = bundleID
        self.environment = environment
        self.code = code
        self.isLive = isLive
        self.definition = definition
        self.hostID = hostID
        self.createdAt = createdAt
        self.expiresAt = expiresAt
    }
}

/// One player's activity, as stored.
public struct ActivityRecord: Sendable, Equatable {
    public var activityID: String
    public var bundleID: String
    public var environment: String
    public var playerID: String
    public var definition: String
    public var partyID: String?
    /// `initialized`, `active`, `paused` or `ended`.
    public var state: String
    /// JSON object of string properties.
    public var properties: String
    public var createdAt: Int64
    public var startedAt: Int64?
    public var resumedAt: Int64?
    /// Active time before `resumedAt`.
    public var activeMillis: Int64
    public var endedAt: Int64?

    public init(
        activityID: String, bundleID: String, environment: String, playerID: String, definition: String, partyID: String?, state: String,
        properties: String, createdAt: Int64, startedAt: Int64?, resumedAt: Int64?, activeMillis: Int64, endedAt: Int64?
    ) {
        self.activityID = activityID
        self.bundleID = bundleID
        self.environment = environment
        self.playerID = playerID
        self.definition = definition
        self.partyID = partyID
        self.state = state
        self.properties = properties
        self.createdAt = createdAt
        self.startedAt = startedAt
        self.resumedAt = resumedAt
        self.activeMillis = activeMillis
        self.endedAt = endedAt
    }
}

extension StorageSession {
    /// The live party of a game with this code, or nil (none, ended by its host, or expired at `now`).
    public func liveParty(bundleID: String, environment: String, code: String, now: Int64) async throws -> PartyRecord? {
        try await sql.raw(
            """
            SELECT * FROM parties WHERE bundle_id = \(bind: bundleID) AND environment = \(bind: environment) AND live_code = \(bind: code)
              AND expires_at > \(bind: now)
            """
        ).first().map(Self.partyRecord)
    }

    /// The live parties with this code in any game of an environment (the Game Center app, which has no game).
    public func liveParties(environment: String, code: String, now: Int64) async throws -> [PartyRecord] {
        try await sql.raw(
            """
            SELECT * FROM parties WHERE environment = \(bind: environment) AND live_code = \(bind: code) AND expires_at > \(bind: now)
            ORDER BY bundle_id LIMIT 20
            """
        ).all().map(Self.partyRecord)
    }

    /// The party with this id, or nil.
    public func party(id: String) async throws -> PartyRecord? {
        try await sql.raw("SELECT * FROM parties WHERE party_id = \(bind: id)").first().map(Self.partyRecord)
    }

    /// Stores a new live party; false (nothing stored) when a live party of the game has its code. A party whose code
    /// expired gives the code up first.
    public func insertParty(_ party: PartyRecord) async throws -> Bool {
        try await sql.raw(
            """
            UPDATE parties SET live_code = NULL
            WHERE bundle_id = \(bind: party.bundleID) AND environment = \(bind: party.environment) AND live_code = \(bind: party.code)
              AND expires_at <= \(bind: party.createdAt)
            """
        ).run()
        return try await sql.raw(
            """
            INSERT INTO parties (party_id, bundle_id, environment, code, live_code, definition, host_id, created_at, expires_at)
            VALUES (\(bind: party.partyID), \(bind: party.bundleID), \(bind: party.environment), \(bind: party.code), \(bind: party.code),
                \(bind: party.definition), \(bind: party.hostID), \(bind: party.createdAt), \(bind: party.expiresAt))
            ON CONFLICT DO NOTHING
            RETURNING party_id
            """
        ).first() != nil
    }

    /// Locks a party's row until the transaction ends (joins are counted one after the other on every node).
    public func lockParty(id: String) async throws {
        try await sql.raw("UPDATE parties SET code = code WHERE party_id = \(bind: id)").run()
    }

    /// The party takes no more players: its code is free for another party.
    public func closeParty(id: String) async throws {
        try await sql.raw("UPDATE parties SET live_code = NULL WHERE party_id = \(bind: id)").run()
    }

    /// Stores a new activity.
    public func insertActivity(_ activity: ActivityRecord) async throws {
        try await sql.raw(
            """
            INSERT INTO activities (activity_id, bundle_id, environment, player_id, definition, party_id, state, properties, created_at, started_at,
                resumed_at, active_millis, ended_at)
            VALUES (\(bind: activity.activityID), \(bind: activity.bundleID), \(bind: activity.environment), \(bind: activity.playerID),
                \(bind: activity.definition), \(bind: activity.partyID), \(bind: activity.state), \(bind: activity.properties), \(bind: activity.createdAt),
                \(bind: activity.startedAt), \(bind: activity.resumedAt), \(bind: activity.activeMillis), \(bind: activity.endedAt))
            """
        ).run()
    }

    /// The activity with this id, or nil.
    public func activity(id: String) async throws -> ActivityRecord? {
        try await sql.raw("SELECT * FROM activities WHERE activity_id = \(bind: id)").first().map(Self.activityRecord)
    }

    /// Stores an activity's new state; false when it had ended meanwhile (by another device of the player).
    public func updateActivity(_ activity: ActivityRecord) async throws -> Bool {
        try await sql.raw(
            """
            UPDATE activities SET state = \(bind: activity.state), started_at = \(bind: activity.startedAt), resumed_at = \(bind: activity.resumedAt),
                active_millis = \(bind: activity.activeMillis), ended_at = \(bind: activity.endedAt)
            WHERE activity_id = \(bind: activity.activityID) AND ended_at IS NULL
            RETURNING activity_id
            """
        ).first() != nil
    }

    /// The activities in a party that have not ended, in the order their players joined.
    public func partyActivities(partyID: String) async throws -> [ActivityRecord] {
        try await sql.raw(
            "SELECT * FROM activities WHERE party_id = \(bind: partyID) AND ended_at IS NULL ORDER BY created_at, activity_id"
        ).all().map(Self.activityRecord)
    }

    fileprivate static func partyRecord(_ row: any SQLRow) throws -> PartyRecord {
        PartyRecord(
            partyID: try row.string("party_id"), bundleID: try row.string("bundle_id"), environment: try row.string("environment"),
            code: try row.string("code"), isLive: try row.optionalString("live_code") != nil, definition: try row.string("definition"),
            hostID: try row.string("host_id"), createdAt: try row.int("created_at"), expiresAt: try row.int("expires_at"))
    }

    fileprivate static func activityRecord(_ row: any SQLRow) throws -> ActivityRecord {
        ActivityRecord(
            activityID: try row.string("activity_id"), bundleID: try row.string("bundle_id"), environment: try row.string("environment"),
            playerID: try row.string("player_id"), definition: try row.string("definition"), partyID: try row.optionalString("party_id"),
            state: try row.string("state"), properties: try row.string("properties"), createdAt: try row.int("created_at"),
            startedAt: try row.optionalInt("started_at"), resumedAt: try row.optionalInt("resumed_at"), activeMillis: try row.int("active_millis"),
            endedAt: try row.optionalInt("ended_at"))
    }
}
