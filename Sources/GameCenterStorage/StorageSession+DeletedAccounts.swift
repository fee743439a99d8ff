import SQLKit

extension StorageSession {
    /// Deletes a player's account and every record of theirs — sessions, friends and requests, events, scores and
    /// submissions, achievements, memberships and invitations, saves, activities, other players' notices about them —
    /// and records a tombstone with no personal data in its place (`deleted_accounts`), so that no import ever brings
    /// the account back. Records that name this player by id alone (a challenge they started, a turn-based match's
    /// state, a tournament's final standings, an audit entry) stay. Returns false when there was no such account.
    public func deleteAccount(playerID: String, now: Int64) async throws -> Bool {
        guard let account = try await sql.raw("SELECT environment, account_name FROM players WHERE player_id = \(bind: playerID)").first() else {
            return false
        }
        let environment = try account.string("environment")
        let statements: [SQLQueryString] = [
            "DELETE FROM sessions WHERE player_id = \(bind: playerID)",
            "DELETE FROM app_tickets WHERE player_id = \(bind: playerID)",
            "DELETE FROM device_sign_ins WHERE player_id = \(bind: playerID)",
            "DELETE FROM sign_in_failures WHERE environment = \(bind: environment) AND account_name = \(bind: try account.string("account_name"))",
            "DELETE FROM friendships WHERE player_id = \(bind: playerID) OR friend_id = \(bind: playerID)",
            "DELETE FROM friend_requests WHERE from_player = \(bind: playerID) OR to_player = \(bind: playerID)",
            "DELETE FROM events WHERE player_id = \(bind: playerID)",
            // Other players' notices that name this one (a friend added, a request, an invitation) carry their alias.
            "DELETE FROM events WHERE payload LIKE \(bind: "%" + Self.likeEscaped(playerID) + "%") ESCAPE '!'",
            "DELETE FROM played_games WHERE player_id = \(bind: playerID)",
            "DELETE FROM best_scores WHERE player_id = \(bind: playerID)",
            "DELETE FROM occurrence_best_scores WHERE player_id = \(bind: playerID)",
            "DELETE FROM score_submissions WHERE player_id = \(bind: playerID)",
            "DELETE FROM scores WHERE player_id = \(bind: playerID)",
            "DELETE FROM hidden_players WHERE player_id = \(bind: playerID)",
            "DELETE FROM player_bans WHERE player_id = \(bind: playerID)",
            "DELETE FROM tournament_entries WHERE player_id = \(bind: playerID)",
            "DELETE FROM achievement_progress WHERE player_id = \(bind: playerID)",
            "DELETE FROM applied_reports WHERE player_id = \(bind: playerID)",
            "DELETE FROM challenge_participants WHERE player_id = \(bind: playerID)",
            "DELETE FROM match_members WHERE player_id = \(bind: playerID)",
            "DELETE FROM invitations WHERE inviter = \(bind: playerID) OR invitee = \(bind: playerID)",
            "DELETE FROM turn_match_members WHERE player_id = \(bind: playerID)",
            """
            DELETE FROM saved_game_chunks WHERE owner_id IN (SELECT version_id FROM saved_game_versions WHERE player_id = \(bind: playerID)
              UNION SELECT upload_id FROM saved_game_uploads WHERE player_id = \(bind: playerID))
            """,
            "DELETE FROM saved_game_versions WHERE player_id = \(bind: playerID)",
            "DELETE FROM saved_game_uploads WHERE player_id = \(bind: playerID)",
            "DELETE FROM saved_games WHERE player_id = \(bind: playerID)",
            "DELETE FROM activities WHERE player_id = \(bind: playerID)",
            "DELETE FROM play_with_friends WHERE player_id = \(bind: playerID)",
            "DELETE FROM parties WHERE host_id = \(bind: playerID)",
            "DELETE FROM players WHERE player_id = \(bind: playerID)",
            """
            INSERT INTO deleted_accounts (player_id, environment, deleted_at) VALUES (\(bind: playerID), \(bind: environment), \(bind: now))
            ON CONFLICT (player_id) DO NOTHING
            """,
        ]
        for statement in statements { try await sql.raw(statement).run() }
        return true
    }

    /// `text` matching itself in a `LIKE … ESCAPE '!'` pattern.
    private static func likeEscaped(_ text: String) -> String {
        text.replacingOccurrences(of: "!", with: "!!").replacingOccurrences(of: "%", with: "!%").replacingOccurrences(of: "_", with: "!_")
    }

    /// Every deleted account's id (their tombstones).
    public func deletedPlayerIDs() async throws -> Set<String> {
        Set(try await sql.raw("SELECT player_id FROM deleted_accounts").all().map { try $0.string("player_id") })
    }

    /// The games `playerID` has records in: played, or holding a score (a game server may report for a player who
    /// never opened the game).
    public func gamesWithRecords(playerID: String) async throws -> Set<String> {
        Set(
            try await sql.raw(
                """
                SELECT bundle_id FROM played_games WHERE player_id = \(bind: playerID)
                UNION SELECT bundle_id FROM best_scores WHERE player_id = \(bind: playerID)
                """
            ).all().map { try $0.string("bundle_id") })
    }
}
