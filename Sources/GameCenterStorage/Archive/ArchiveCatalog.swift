/// The type of a column in an archive's JSON Lines: how its value is written and read back.
public enum ArchiveColumnType: String, Sendable {
    /// A JSON string.
    case text
    /// A JSON integer (64-bit).
    case integer
    /// A JSON number.
    case real
    /// Bytes, as a standard base64 JSON string.
    case bytes
}

/// One column of an archived table; a JSON line carries every column of its kind, `null` where the row has none.
public struct ArchiveColumn: Sendable {
    /// The column's name, which is also its key in the JSON object.
    public let name: String
    /// How the value is written.
    public let type: ArchiveColumnType
}

/// One kind of record in an archive: a file of JSON Lines holding the rows of one table, in its key's order.
///
/// `gameFilter` and `playerFilter` are SQL conditions choosing the rows of one game or one player, with `:scope`
/// standing for the bundle or player id; a kind without one is left out of that scope's archive. `serverFilter`
/// chooses the rows of a whole server's archive (nil: every row).
public struct ArchiveKind: Sendable {
    /// The file's name in the archive (`scores.jsonl`).
    public let file: String
    /// The table its rows come from and go to.
    public let table: String
    /// Every column, in the order each line writes them.
    public let columns: [ArchiveColumn]
    /// The columns the rows are ordered by (a unique key), so that two exports of the same data are the same bytes.
    public let order: [String]
    let serverFilter: String?
    let gameFilter: String?
    let playerFilter: String?
    /// The column holding the player a row belongs to (rows of a deleted player are never imported).
    let playerColumns: [String]
    /// A text column that may name players anywhere in it (a notice's JSON): a row naming a deleted one is not imported.
    let mentionColumn: String?
    /// A column PostgreSQL numbers from a sequence, moved past the imported ids after an import.
    let sequenceColumn: String?
    /// Each column's key as a line writes it, with its quotes and colon (`"name":`).
    let lineKeys: [[UInt8]]

    init(
        _ file: String, table: String? = nil, _ columns: [(String, ArchiveColumnType)], order: [String], game: String?, player: String?,
        playerColumns: [String] = ["player_id"], mentions: String? = nil, sequence: String? = nil, server: String? = nil
    ) {
        self.mentionColumn = mentions
        self.serverFilter = server
        self.file = file
        self.table = table ?? String(file.dropLast(".jsonl".count))
        self.columns = columns.map { ArchiveColumn(name: $0.0, type: $0.1) }
        self.lineKeys = columns.map { Array("\"\($0.0)\":".utf8) }
        self.order = order
        self.gameFilter = game
        self.playerFilter = player
        self.playerColumns = playerColumns
        self.sequenceColumn = sequence
    }
}

/// Every kind of record an archive holds, in the order an import writes them (a row's references come first).
///
/// Not archived, on purpose: sessions, sign-in throttles, device sign-ins and app tickets (a moved player signs in
/// again), report-signing keys, nodes, queue owners and notes between nodes (the cluster's own state), webhook endpoints and deliveries and
/// identity keys (they hold secrets: make them again on the new server), idempotency records, unfinished save uploads
/// and play-with-friends requests (they expire within minutes), the studio console's users and sessions (staff accounts:
/// add them again with `gamecenter console add-user`), matchmaking queues' metrics (statistics of the last 30 days).
public enum ArchiveCatalog {
    /// The players of a game: anyone with a record of it (so that every archived row's player is archived too).
    private static let gamePlayers = """
        player_id IN (SELECT player_id FROM played_games WHERE bundle_id = :scope
          UNION SELECT player_id FROM best_scores WHERE bundle_id = :scope
          UNION SELECT player_id FROM score_submissions WHERE bundle_id = :scope
          UNION SELECT player_id FROM achievement_progress WHERE bundle_id = :scope
          UNION SELECT player_id FROM match_members WHERE match_id IN (SELECT match_id FROM matches WHERE bundle_id = :scope)
          UNION SELECT inviter FROM invitations WHERE bundle_id = :scope
          UNION SELECT invitee FROM invitations WHERE bundle_id = :scope
          UNION SELECT player_id FROM turn_match_members WHERE bundle_id = :scope
          UNION SELECT player_id FROM challenge_participants WHERE challenge_id IN (SELECT challenge_id FROM challenges WHERE bundle_id = :scope)
          UNION SELECT player_id FROM saved_games WHERE bundle_id = :scope
          UNION SELECT player_id FROM activities WHERE bundle_id = :scope
          UNION SELECT host_id FROM parties WHERE bundle_id = :scope
          UNION SELECT player_id FROM hidden_players WHERE bundle_id = :scope)
        """
    private static let byGame = "bundle_id = :scope"
    private static let byPlayer = "player_id = :scope"

    /// The kinds, in import order.
    public static let kinds: [ArchiveKind] = [
        ArchiveKind(
            "accounts.jsonl", table: "players",
            [
                ("player_id", .text), ("environment", .text), ("account_name", .text), ("password_hash", .text), ("alias", .text),
                ("alias_skeleton", .text), ("underage", .integer), ("status", .text), ("event_seq", .integer), ("created_at", .integer),
                ("updated_at", .integer),
            ], order: ["player_id"], game: gamePlayers, player: byPlayer),
        ArchiveKind(
            "deleted_accounts.jsonl", [("player_id", .text), ("environment", .text), ("deleted_at", .integer)], order: ["player_id"],
            game: "1 = 1", player: nil, playerColumns: []),
        ArchiveKind(
            "played_games.jsonl", [("player_id", .text), ("bundle_id", .text), ("last_played_at", .integer)], order: ["player_id", "bundle_id"],
            game: byGame, player: byPlayer),
        ArchiveKind(
            "friendships.jsonl", [("player_id", .text), ("friend_id", .text), ("created_at", .integer)], order: ["player_id", "friend_id"],
            game: gamePlayers + " AND " + gamePlayers.replacingOccurrences(of: "player_id IN", with: "friend_id IN"),
            player: "player_id = :scope OR friend_id = :scope", playerColumns: ["player_id", "friend_id"]),
        ArchiveKind(
            "friend_requests.jsonl",
            [
                ("request_id", .text), ("from_player", .text), ("to_player", .text), ("message", .text), ("status", .text), ("created_at", .integer),
                ("answered_at", .integer),
            ], order: ["request_id"],
            game: gamePlayers.replacingOccurrences(of: "player_id IN", with: "from_player IN") + " AND "
                + gamePlayers.replacingOccurrences(of: "player_id IN", with: "to_player IN"),
            player: "from_player = :scope OR to_player = :scope", playerColumns: ["from_player", "to_player"]),
        ArchiveKind(
            "player_events.jsonl", table: "events",
            [("player_id", .text), ("seq", .integer), ("kind", .text), ("payload", .text), ("created_at", .integer)], order: ["player_id", "seq"],
            game: nil, player: byPlayer, mentions: "payload"),
        ArchiveKind(
            "applied_reports.jsonl", [("player_id", .text), ("kind", .text), ("report_id", .text), ("applied_at", .integer)],
            order: ["player_id", "kind", "report_id"], game: gamePlayers, player: byPlayer),
        ArchiveKind(
            "scores.jsonl",
            [
                ("score_id", .integer), ("bundle_id", .text), ("environment", .text), ("category", .text), ("player_id", .text), ("value", .integer),
                ("context", .integer), ("reported_at", .integer), ("occurrence", .integer),
            ], order: ["score_id"], game: byGame, player: byPlayer, sequence: "score_id"),
        ArchiveKind(
            "best_scores.jsonl",
            [("bundle_id", .text), ("environment", .text), ("category", .text), ("player_id", .text), ("score_id", .integer), ("value", .integer)],
            order: ["bundle_id", "environment", "category", "player_id"], game: byGame, player: byPlayer),
        ArchiveKind(
            "occurrence_best_scores.jsonl",
            [
                ("bundle_id", .text), ("environment", .text), ("category", .text), ("occurrence", .integer), ("player_id", .text),
                ("score_id", .integer), ("value", .integer),
            ], order: ["bundle_id", "environment", "category", "occurrence", "player_id"], game: byGame, player: byPlayer),
        ArchiveKind(
            "score_submissions.jsonl",
            [
                ("submission_id", .text), ("bundle_id", .text), ("environment", .text), ("category", .text), ("player_id", .text),
                ("report_id", .text), ("position", .integer), ("value", .integer), ("context", .integer), ("earned_at", .integer),
                ("occurrence", .integer), ("higher_is_better", .integer), ("details", .text), ("attachment", .bytes), ("state", .text),
                ("reason", .text), ("score_id", .integer), ("created_at", .integer), ("decided_at", .integer), ("decided_by", .text),
            ], order: ["submission_id"], game: byGame, player: byPlayer),
        ArchiveKind(
            "hidden_players.jsonl", [("bundle_id", .text), ("player_id", .text), ("hidden_at", .integer)], order: ["bundle_id", "player_id"],
            game: byGame, player: byPlayer),
        ArchiveKind(
            "player_bans.jsonl", [("player_id", .text), ("reason", .text), ("banned_by", .text), ("banned_at", .integer)], order: ["player_id"],
            game: gamePlayers, player: byPlayer),
        ArchiveKind(
            "tournament_sizes.jsonl",
            [
                ("bundle_id", .text), ("environment", .text), ("category", .text), ("occurrence", .integer), ("entrants", .integer),
                ("closed_at", .integer), ("opened_at", .integer),
            ], order: ["bundle_id", "environment", "category", "occurrence"], game: byGame, player: nil, playerColumns: []),
        ArchiveKind(
            "tournament_entries.jsonl",
            [
                ("bundle_id", .text), ("environment", .text), ("category", .text), ("occurrence", .integer), ("player_id", .text),
                ("attempts_used", .integer), ("extra_attempts", .integer), ("joined_at", .integer),
            ], order: ["bundle_id", "environment", "category", "occurrence", "player_id"], game: byGame, player: byPlayer),
        ArchiveKind(
            "occurrence_events.jsonl",
            [
                ("event_id", .integer), ("bundle_id", .text), ("environment", .text), ("category", .text), ("occurrence", .integer),
                ("occurrence_end", .integer), ("kind", .text), ("recorded_at", .integer), ("standings", .text),
            ], order: ["event_id"], game: byGame, player: nil, playerColumns: [], sequence: "event_id"),
        ArchiveKind(
            "challenges.jsonl",
            [
                ("challenge_id", .text), ("bundle_id", .text), ("environment", .text), ("definition", .text), ("category", .text),
                ("occurrence", .integer), ("creator_id", .text), ("code", .text), ("created_at", .integer), ("ends_at", .integer),
                ("rematch_of", .text), ("ending_soon_at", .integer), ("ended_at", .integer),
            ], order: ["challenge_id"], game: byGame,
            player: "creator_id = :scope OR challenge_id IN (SELECT challenge_id FROM challenge_participants WHERE player_id = :scope)",
            playerColumns: []),
        ArchiveKind(
            "challenge_participants.jsonl",
            [
                ("challenge_id", .text), ("player_id", .text), ("status", .text), ("invited_at", .integer), ("joined_at", .integer),
                ("after_score", .integer), ("final_value", .integer), ("final_attempts", .integer),
            ], order: ["challenge_id", "player_id"], game: "challenge_id IN (SELECT challenge_id FROM challenges WHERE bundle_id = :scope)",
            player: byPlayer),
        ArchiveKind(
            "achievements.jsonl", table: "achievement_progress",
            [
                ("bundle_id", .text), ("player_id", .text), ("identifier", .text), ("percent", .real), ("completed_at", .integer),
                ("last_reported_at", .integer), ("completed_by", .text),
            ], order: ["bundle_id", "player_id", "identifier"], game: byGame, player: byPlayer),
        ArchiveKind(
            "matches.jsonl",
            [
                ("match_id", .text), ("bundle_id", .text), ("environment", .text), ("hosted", .integer), ("state", .text), ("created_at", .integer),
                ("started_at", .integer), ("node_id", .text), ("relay_url", .text),
            ], order: ["match_id"], game: byGame,
            player: "match_id IN (SELECT match_id FROM match_members WHERE player_id = :scope)", playerColumns: []),
        ArchiveKind(
            "match_members.jsonl",
            [("match_id", .text), ("player_id", .text), ("request_id", .text), ("joined_at", .integer), ("left_at", .integer)],
            order: ["match_id", "player_id"], game: "match_id IN (SELECT match_id FROM matches WHERE bundle_id = :scope)", player: byPlayer),
        ArchiveKind(
            "invitations.jsonl",
            [
                ("invitation_id", .text), ("match_id", .text), ("bundle_id", .text), ("environment", .text), ("inviter", .text), ("invitee", .text),
                ("hosted", .integer), ("min_players", .integer), ("max_players", .integer), ("message", .text), ("state", .text),
                ("created_at", .integer), ("expires_at", .integer), ("answered_at", .integer), ("accepted_in_app_at", .integer),
            ], order: ["invitation_id"], game: byGame, player: "inviter = :scope OR invitee = :scope", playerColumns: ["inviter", "invitee"]),
        ArchiveKind(
            "turn_matches.jsonl",
            [
                ("match_id", .text), ("bundle_id", .text), ("environment", .text), ("version", .integer), ("status", .integer), ("seats", .integer),
                ("player_group", .integer), ("open_seats", .integer), ("deadline", .integer), ("created_at", .integer), ("state", .text),
            ], order: ["match_id"], game: byGame,
            player: "match_id IN (SELECT match_id FROM turn_match_members WHERE player_id = :scope)", playerColumns: []),
        ArchiveKind(
            "turn_match_members.jsonl", [("player_id", .text), ("match_id", .text), ("bundle_id", .text), ("playing", .integer)],
            order: ["player_id", "match_id"], game: byGame, player: byPlayer),
        ArchiveKind(
            "turn_match_data.jsonl", [("match_id", .text), ("data", .bytes)], order: ["match_id"],
            game: "match_id IN (SELECT match_id FROM turn_matches WHERE bundle_id = :scope)",
            player: "match_id IN (SELECT match_id FROM turn_match_members WHERE player_id = :scope)", playerColumns: []),
        ArchiveKind(
            "saved_games.jsonl", [("player_id", .text), ("bundle_id", .text), ("environment", .text), ("name", .text), ("revision", .integer)],
            order: ["player_id", "bundle_id", "environment", "name"], game: byGame, player: byPlayer),
        ArchiveKind(
            "saved_game_versions.jsonl",
            [
                ("version_id", .text), ("player_id", .text), ("bundle_id", .text), ("environment", .text), ("name", .text), ("device_name", .text),
                ("size", .integer), ("sha256", .text), ("played_seconds", .real), ("progress", .real), ("created_at", .integer),
                ("current", .integer),
            ], order: ["version_id"], game: byGame, player: byPlayer),
        ArchiveKind(
            "saved_game_chunks.jsonl", [("owner_id", .text), ("idx", .integer), ("data", .bytes)], order: ["owner_id", "idx"],
            game: "owner_id IN (SELECT version_id FROM saved_game_versions WHERE bundle_id = :scope)",
            player: "owner_id IN (SELECT version_id FROM saved_game_versions WHERE player_id = :scope)", playerColumns: [],
            // Only finished versions' bytes: an unfinished upload is not archived.
            server: "owner_id IN (SELECT version_id FROM saved_game_versions)"),
        ArchiveKind(
            "parties.jsonl",
            [
                ("party_id", .text), ("bundle_id", .text), ("environment", .text), ("code", .text), ("live_code", .text), ("definition", .text),
                ("host_id", .text), ("created_at", .integer), ("expires_at", .integer),
            ], order: ["party_id"], game: byGame,
            player: "host_id = :scope OR party_id IN (SELECT party_id FROM activities WHERE player_id = :scope)", playerColumns: ["host_id"]),
        ArchiveKind(
            "activities.jsonl",
            [
                ("activity_id", .text), ("bundle_id", .text), ("environment", .text), ("player_id", .text), ("definition", .text),
                ("party_id", .text), ("state", .text), ("properties", .text), ("created_at", .integer), ("started_at", .integer),
                ("resumed_at", .integer), ("active_millis", .integer), ("ended_at", .integer),
            ], order: ["activity_id"], game: byGame, player: byPlayer),
        ArchiveKind(
            "server_keys.jsonl",
            [
                ("key_id", .text), ("issuer_id", .text), ("bundle_id", .text), ("environment", .text), ("permissions", .text), ("name", .text),
                ("public_key", .text), ("created_at", .integer), ("expires_at", .integer), ("revoked_at", .integer), ("replaced_by", .text),
            ], order: ["key_id"], game: byGame, player: nil, playerColumns: []),
        ArchiveKind(
            "audit_log.jsonl",
            [
                ("entry_id", .integer), ("bundle_id", .text), ("actor", .text), ("action", .text), ("subject", .text), ("detail", .text),
                ("created_at", .integer),
            ], order: ["entry_id"], game: byGame, player: nil, playerColumns: [], sequence: "entry_id"),
    ]
}
