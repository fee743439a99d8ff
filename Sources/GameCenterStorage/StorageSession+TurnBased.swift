import Foundation
import SQLKit

/// One stored turn-based match: its state document and the columns queries look for.
public struct TurnMatchRecord: Sendable, Equatable {
    public var matchID: String
    public var bundleID: String
    public var environment: String
    public var version: Int64
    /// GameKit's match status raw value.
    public var status: Int
    public var seats: Int
    public var playerGroup: Int64
    public var openSeats: Int
    /// When the server's clock next changes the match (a turn or exchange timeout).
    public var deadline: Int64?
    public var createdAt: Int64
    /// The state machine's document (JSON).
    public var state: String

    public init(
        matchID: String, bundleID: String, environment: String, version: Int64, status: Int, seats: Int, playerGroup: Int64, openSeats: Int,
        deadline: Int64?, createdAt: Int64, state: String
    ) {
        self.matchID = matchID
        self.bundleID = bundleID
        self.environment = environment
        self.version = version
        self.status = status
        self.seats = seats
        self.playerGroup = playerGroup
        self.openSeats = openSeats
        self.deadline = deadline
        self.createdAt = createdAt
        self.state = state
    }
}

/// A player a match is kept for.
public struct TurnMatchMember: Sendable, Equatable {
    public var playerID: String
    /// Whether the player is still playing it (counts towards the game's open matches per player).
    public var playing: Bool

    public init(playerID: String, playing: Bool) {
        self.playerID = playerID
        self.playing = playing
    }
}

extension StorageSession {
    /// Stores a new match with its data and members.
    public func insertTurnMatch(_ record: TurnMatchRecord, data: Data, members: [TurnMatchMember]) async throws {
        try await sql.raw(
            """
            INSERT INTO turn_matches (match_id, bundle_id, environment, version, status, seats, player_group, open_seats, deadline, created_at, state)
            VALUES (\(bind: record.matchID), \(bind: record.bundleID), \(bind: record.environment), \(bind: record.version),
                    \(bind: Int64(record.status)), \(bind: Int64(record.seats)), \(bind: record.playerGroup), \(bind: Int64(record.openSeats)),
                    \(bind: record.deadline), \(bind: record.createdAt), \(bind: record.state))
            """
        ).run()
        try await sql.raw("INSERT INTO turn_match_data (match_id, data) VALUES (\(bind: record.matchID), \(bind: data))").run()
        try await setTurnMatchMembers(record.matchID, bundleID: record.bundleID, members)
    }

    /// Replaces the match's stored state, if it is still at `expectedVersion`; the data too when `data` is given.
    /// Returns false (changing nothing) when another write came first.
    public func updateTurnMatch(_ record: TurnMatchRecord, expectedVersion: Int64, data: Data?, members: [TurnMatchMember]?) async throws -> Bool {
        let updated = try await sql.raw(
            """
            UPDATE turn_matches SET version = \(bind: record.version), status = \(bind: Int64(record.status)),
                open_seats = \(bind: Int64(record.openSeats)), deadline = \(bind: record.deadline), state = \(bind: record.state)
            WHERE match_id = \(bind: record.matchID) AND version = \(bind: expectedVersion)
            RETURNING version
            """
        ).all()
        guard !updated.isEmpty else { return false }
        if let data {
            try await sql.raw("UPDATE turn_match_data SET data = \(bind: data) WHERE match_id = \(bind: record.matchID)").run()
        }
        if let members { try await setTurnMatchMembers(record.matchID, bundleID: record.bundleID, members) }
        return true
    }

    /// A change of a match that keeps its members: its record replaced if it is still at `expectedVersion`, its data
    /// when given, and `events` appended to their players' streams in order (a player with several takes consecutive
    /// sequence numbers). On PostgreSQL one statement (``TurnChangeStatement``: run it with `writeStatement`, no
    /// transaction needed); on SQLite the same writes one by one. Returns false, having written nothing, when another
    /// write came first.
    public func storeTurnChange(
        _ record: TurnMatchRecord, expectedVersion: Int64, data: Data?, events: [(playerID: String, payload: String)], kind: String, now: Int64
    ) async throws -> Bool {
        if postgresConnection != nil {
            let replaced = try await execute(
                TurnChangeStatement(record: record, expectedVersion: expectedVersion, data: data, events: events, kind: kind, now: now))
            return replaced.first == 1
        }
        guard try await updateTurnMatch(record, expectedVersion: expectedVersion, data: data, members: nil) else { return false }
        // `appendEvents` takes one event per player: the events go in runs of distinct players, each player's in order.
        var runs: [[(playerID: String, payload: String)]] = []
        var inRun = Set<String>()
        for event in events {
            if runs.isEmpty || inRun.contains(event.playerID) {
                runs.append([])
                inRun = []
            }
            runs[runs.count - 1].append(event)
            inRun.insert(event.playerID)
        }
        for run in runs { _ = try await appendEvents(run, kind: kind, now: now) }
        return true
    }

    private func setTurnMatchMembers(_ matchID: String, bundleID: String, _ members: [TurnMatchMember]) async throws {
        try await sql.raw("DELETE FROM turn_match_members WHERE match_id = \(bind: matchID)").run()
        for member in members {
            try await sql.raw(
                """
                INSERT INTO turn_match_members (player_id, match_id, bundle_id, playing)
                VALUES (\(bind: member.playerID), \(bind: matchID), \(bind: bundleID), \(bind: Int64(member.playing ? 1 : 0)))
                """
            ).run()
        }
    }

    /// Forgets a match every player removed (its data and members go with it).
    public func deleteTurnMatch(_ matchID: String, expectedVersion: Int64) async throws -> Bool {
        try await !sql.raw(
            "DELETE FROM turn_matches WHERE match_id = \(bind: matchID) AND version = \(bind: expectedVersion) RETURNING match_id"
        ).all().isEmpty
    }

    /// The match with this id.
    public func turnMatch(id: String) async throws -> TurnMatchRecord? {
        try await sql.raw("SELECT * FROM turn_matches WHERE match_id = \(bind: id)").first().map(Self.turnMatchRecord)
    }

    /// The match's data.
    public func turnMatchData(id: String) async throws -> Data? {
        try await sql.raw("SELECT data FROM turn_match_data WHERE match_id = \(bind: id)").first()?.decode(column: "data", as: Data.self)
    }

    /// The matches of `bundleID` kept for `playerID`, oldest first.
    public func turnMatches(playerID: String, bundleID: String) async throws -> [TurnMatchRecord] {
        try await sql.raw(
            """
            SELECT m.* FROM turn_match_members AS p JOIN turn_matches AS m ON m.match_id = p.match_id
            WHERE p.player_id = \(bind: playerID) AND p.bundle_id = \(bind: bundleID) ORDER BY m.created_at, m.match_id
            """
        ).all().map(Self.turnMatchRecord)
    }

    /// The matches of every game kept for `playerID`, newest first, at most `limit`.
    public func turnMatches(playerID: String, limit: Int) async throws -> [TurnMatchRecord] {
        try await sql.raw(
            """
            SELECT m.* FROM turn_match_members AS p JOIN turn_matches AS m ON m.match_id = p.match_id
            WHERE p.player_id = \(bind: playerID) ORDER BY m.created_at DESC, m.match_id LIMIT \(bind: Int64(limit))
            """
        ).all().map(Self.turnMatchRecord)
    }

    /// How many matches of `bundleID` `playerID` is playing.
    public func playingTurnMatchCount(playerID: String, bundleID: String) async throws -> Int {
        let row = try await sql.raw(
            """
            SELECT COUNT(*) AS playing FROM turn_match_members
            WHERE player_id = \(bind: playerID) AND bundle_id = \(bind: bundleID) AND playing = 1
            """
        ).first()
        return Int(try row?.int("playing") ?? 0)
    }

    /// The oldest matches with an open seat that fit a request and `playerID` is not in, at most `limit`.
    public func turnMatchesWithOpenSeats(
        bundleID: String, environment: String, playerGroup: Int64, seats: Int, excluding playerID: String, limit: Int
    ) async throws -> [String] {
        try await sql.raw(
            """
            SELECT match_id FROM turn_matches AS m
            WHERE bundle_id = \(bind: bundleID) AND environment = \(bind: environment) AND player_group = \(bind: playerGroup)
              AND seats = \(bind: Int64(seats)) AND open_seats > 0
              AND NOT EXISTS (SELECT 1 FROM turn_match_members AS p WHERE p.match_id = m.match_id AND p.player_id = \(bind: playerID))
            ORDER BY created_at, match_id LIMIT \(bind: Int64(limit))
            """
        ).all().map { try $0.string("match_id") }
    }

    /// Matches whose deadline is at or before `now`, earliest first, at most `limit`.
    public func turnMatchesDue(now: Int64, limit: Int) async throws -> [String] {
        try await sql.raw(
            """
            SELECT match_id FROM turn_matches WHERE deadline IS NOT NULL AND deadline <= \(bind: now)
            ORDER BY deadline LIMIT \(bind: Int64(limit))
            """
        ).all().map { try $0.string("match_id") }
    }

    private static func turnMatchRecord(_ row: any SQLRow) throws -> TurnMatchRecord {
        TurnMatchRecord(
            matchID: try row.string("match_id"), bundleID: try row.string("bundle_id"), environment: try row.string("environment"),
            version: try row.int("version"), status: Int(try row.int("status")), seats: Int(try row.int("seats")),
            playerGroup: try row.int("player_group"), openSeats: Int(try row.int("open_seats")), deadline: try row.optionalInt("deadline"),
            createdAt: try row.int("created_at"), state: try row.string("state"))
    }
}
