import SQLKit

extension StorageSession {
    /// Appends an event to a player's stream and returns its sequence number.
    ///
    /// The player row's counter is incremented in the same statement that reads it, so concurrent writers to
    /// one player's stream are serialized and sequence numbers become visible in order.
    public func appendEvent(playerID: String, kind: String, payload: String, now: Int64) async throws -> Int64 {
        guard
            let row = try await sql.raw(
                """
                UPDATE players SET event_seq = event_seq + 1 WHERE player_id = \(bind: playerID) RETURNING event_seq
                """
            ).first()
        else { throw StorageError.notFound("no player \(playerID)") }
        let seq = try row.int("event_seq")
        try await sql.raw(
            """
            INSERT INTO events (player_id, seq, kind, payload, created_at)
            VALUES (\(bind: playerID), \(bind: seq), \(bind: kind), \(bind: payload), \(bind: now))
            """
        ).run()
        return seq
    }

    /// Appends one event to each of several players' streams (`events`: player id and payload, each player once) in
    /// two statements whatever their number: the counters are incremented in one `UPDATE`, and the rows inserted in
    /// one `INSERT`. Returns each player's new sequence number.
    public func appendEvents(_ events: [(playerID: String, payload: String)], kind: String, now: Int64) async throws -> [String: Int64] {
        guard !events.isEmpty else { return [:] }
        precondition(Set(events.map(\.playerID)).count == events.count, "one event per player in a batch")
        var sequences: [String: Int64] = [:]
        for row in try await sql.raw(
            """
            UPDATE players SET event_seq = event_seq + 1 WHERE player_id IN (\(binds: events.map(\.playerID))) RETURNING player_id, event_seq
            """
        ).all() {
            sequences[try row.string("player_id")] = try row.int("event_seq")
        }
        let rows = try events.map { event -> SQLQueryString in
            guard let seq = sequences[event.playerID] else { throw StorageError.notFound("no player \(event.playerID)") }
            return "(\(bind: event.playerID), \(bind: seq), \(bind: kind), \(bind: event.payload), \(bind: now))"
        }
        try await sql.raw(
            "INSERT INTO events (player_id, seq, kind, payload, created_at) VALUES \(rows.joined(separator: ", "))"
        ).run()
        return sequences
    }

    /// A player's events after `seq`, oldest first, at most `limit`.
    public func events(playerID: String, after seq: Int64, limit: Int) async throws -> [EventRecord] {
        try await sql.raw(
            """
            SELECT * FROM events WHERE player_id = \(bind: playerID) AND seq > \(bind: seq) ORDER BY seq LIMIT \(bind: Int64(limit))
            """
        ).all().map { row in
            EventRecord(
                playerID: try row.string("player_id"), seq: try row.int("seq"), kind: try row.string("kind"),
                payload: try row.string("payload"), createdAt: try row.int("created_at")
            )
        }
    }

    /// Records that a player signed in to a game at `now`.
    public func recordPlayedGame(playerID: String, bundleID: String, now: Int64) async throws {
        try await sql.raw(
            """
            INSERT INTO played_games (player_id, bundle_id, last_played_at) VALUES (\(bind: playerID), \(bind: bundleID), \(bind: now))
            ON CONFLICT (player_id, bundle_id) DO UPDATE SET last_played_at = excluded.last_played_at
            """
        ).run()
    }

    /// The games each of `playerIDs` played since `since`, most recent first, at most `limit` per player; one query.
    public func playedGames(playerIDs: [String], since: Int64, limit: Int) async throws -> [String: [PlayedGameRecord]] {
        guard !playerIDs.isEmpty else { return [:] }
        var result: [String: [PlayedGameRecord]] = [:]
        for row in try await sql.raw(
            """
            SELECT player_id, bundle_id, last_played_at FROM played_games
            WHERE player_id IN (\(binds: playerIDs)) AND last_played_at >= \(bind: since)
            ORDER BY player_id, last_played_at DESC
            """
        ).all() {
            let player = try row.string("player_id")
            if result[player, default: []].count < limit {
                result[player, default: []].append(PlayedGameRecord(bundleID: try row.string("bundle_id"), lastPlayedAt: try row.int("last_played_at")))
            }
        }
        return result
    }
}
