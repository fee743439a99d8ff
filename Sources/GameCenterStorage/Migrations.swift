/// A numbered schema change. Versions only grow; an applied migration is never edited.
struct Migration: Sendable {
    let version: Int
    let name: String
    /// Statements for both engines; every column type used here means the same on SQLite and PostgreSQL.
    let common: [String]
    /// Statements that differ by engine, run after `common`.
    var sqliteOnly: [String] = []
    var postgresOnly: [String] = []

    func statements(for engine: StorageEngine) -> [String] {
        common + (engine == .sqlite ? sqliteOnly : postgresOnly)
    }
}

/// Every migration, in order. Times are BIGINT milliseconds, flags BIGINT 0/1, identifiers TEXT.
enum Migrations {
    static let all: [Migration] = [
        Migration(
            version: 1, name: "accounts, sessions, friends, events",
            common: [
                """
                CREATE TABLE players (
                    player_id TEXT PRIMARY KEY,
                    environment TEXT NOT NULL,
                    account_name TEXT NOT NULL,
                    password_hash TEXT NOT NULL,
                    alias TEXT NOT NULL,
                    underage BIGINT NOT NULL,
                    status TEXT,
                    event_seq BIGINT NOT NULL DEFAULT 0,
                    created_at BIGINT NOT NULL,
                    updated_at BIGINT NOT NULL,
                    UNIQUE (environment, account_name)
                )
                """,
                """
                CREATE TABLE sessions (
                    session_id TEXT PRIMARY KEY,
                    token_hash TEXT NOT NULL UNIQUE,
                    player_id TEXT NOT NULL REFERENCES players (player_id),
                    bundle_id TEXT NOT NULL,
                    environment TEXT NOT NULL,
                    created_at BIGINT NOT NULL,
                    expires_at BIGINT NOT NULL,
                    revoked_at BIGINT
                )
                """,
                "CREATE INDEX sessions_by_player ON sessions (player_id)",
                """
                CREATE TABLE sign_in_failures (
                    environment TEXT NOT NULL,
                    account_name TEXT NOT NULL,
                    failures BIGINT NOT NULL,
                    window_start BIGINT NOT NULL,
                    locked_until BIGINT NOT NULL,
                    PRIMARY KEY (environment, account_name)
                )
                """,
                """
                CREATE TABLE friendships (
                    player_id TEXT NOT NULL REFERENCES players (player_id),
                    friend_id TEXT NOT NULL REFERENCES players (player_id),
                    created_at BIGINT NOT NULL,
                    PRIMARY KEY (player_id, friend_id)
                )
                """,
                """
                CREATE TABLE friend_requests (
                    request_id TEXT PRIMARY KEY,
                    from_player TEXT NOT NULL REFERENCES players (player_id),
                    to_player TEXT NOT NULL REFERENCES players (player_id),
                    message TEXT,
                    status TEXT NOT NULL,
                    created_at BIGINT NOT NULL,
                    answered_at BIGINT
                )
                """,
                "CREATE UNIQUE INDEX friend_requests_one_pending ON friend_requests (from_player, to_player) WHERE status = 'pending'",
                "CREATE INDEX friend_requests_by_recipient ON friend_requests (to_player, status)",
                """
                CREATE TABLE events (
                    player_id TEXT NOT NULL REFERENCES players (player_id),
                    seq BIGINT NOT NULL,
                    kind TEXT NOT NULL,
                    payload TEXT NOT NULL,
                    created_at BIGINT NOT NULL,
                    PRIMARY KEY (player_id, seq)
                )
                """,
                """
                CREATE TABLE played_games (
                    player_id TEXT NOT NULL REFERENCES players (player_id),
                    bundle_id TEXT NOT NULL,
                    last_played_at BIGINT NOT NULL,
                    PRIMARY KEY (player_id, bundle_id)
                )
                """,
            ]),
        Migration(
            version: 2, name: "achievements",
            common: [
                """
                CREATE TABLE achievement_progress (
                    bundle_id TEXT NOT NULL,
                    player_id TEXT NOT NULL REFERENCES players (player_id),
                    identifier TEXT NOT NULL,
                    percent DOUBLE PRECISION NOT NULL,
                    completed_at BIGINT,
                    last_reported_at BIGINT NOT NULL,
                    PRIMARY KEY (bundle_id, player_id, identifier)
                )
                """,
                """
                CREATE TABLE applied_reports (
                    report_id TEXT NOT NULL,
                    player_id TEXT NOT NULL REFERENCES players (player_id),
                    kind TEXT NOT NULL,
                    applied_at BIGINT NOT NULL,
                    PRIMARY KEY (player_id, report_id)
                )
                """,
            ]),
        Migration(
            version: 3, name: "leaderboards", common: [],
            sqliteOnly: leaderboardTables(scoreID: "score_id INTEGER PRIMARY KEY AUTOINCREMENT"),
            postgresOnly: leaderboardTables(scoreID: "score_id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY")),
        Migration(
            version: 4, name: "matches and invitations",
            common: [
                """
                CREATE TABLE matches (
                    match_id TEXT PRIMARY KEY,
                    bundle_id TEXT NOT NULL,
                    environment TEXT NOT NULL,
                    hosted BIGINT NOT NULL,
                    state TEXT NOT NULL,
                    created_at BIGINT NOT NULL,
                    started_at BIGINT
                )
                """,
                """
                CREATE TABLE match_members (
                    match_id TEXT NOT NULL REFERENCES matches (match_id),
                    player_id TEXT NOT NULL REFERENCES players (player_id),
                    request_id TEXT,
                    joined_at BIGINT NOT NULL,
                    left_at BIGINT,
                    PRIMARY KEY (match_id, player_id)
                )
                """,
                "CREATE INDEX match_members_by_request ON match_members (player_id, request_id)",
                """
                CREATE TABLE invitations (
                    invitation_id TEXT PRIMARY KEY,
                    match_id TEXT NOT NULL REFERENCES matches (match_id),
                    bundle_id TEXT NOT NULL,
                    environment TEXT NOT NULL,
                    inviter TEXT NOT NULL REFERENCES players (player_id),
                    invitee TEXT NOT NULL REFERENCES players (player_id),
                    hosted BIGINT NOT NULL,
                    min_players BIGINT NOT NULL,
                    max_players BIGINT NOT NULL,
                    message TEXT,
                    state TEXT NOT NULL,
                    created_at BIGINT NOT NULL,
                    expires_at BIGINT NOT NULL,
                    answered_at BIGINT
                )
                """,
                "CREATE INDEX invitations_by_invitee ON invitations (invitee, state)",
                "CREATE INDEX invitations_by_match ON invitations (match_id)",
            ]),
        leaderboardScans,
        reportIDsPerKind,
        Migration(
            version: 7, name: "sign-in failures per client address",
            common: [
                """
                CREATE TABLE sign_in_address_failures (
                    address TEXT PRIMARY KEY,
                    failures BIGINT NOT NULL,
                    window_start BIGINT NOT NULL,
                    locked_until BIGINT NOT NULL
                )
                """
            ]),
        Migration(
            version: 8, name: "alias skeletons",
            common: [
                // The UTS #39 skeleton of each alias, so a new alias is checked against look-alikes with an index.
                // The server computes it; rows from before this migration get theirs when a server starts.
                "ALTER TABLE players ADD COLUMN alias_skeleton TEXT",
                "CREATE INDEX players_by_alias_skeleton ON players (environment, alias_skeleton)",
            ]),
        Migration(
            version: 9, name: "invitations accepted in the Game Center app, play with friends",
            common: [
                // An invitation accepted in the Game Center app stays pending (the inviter's match waits for the
                // invitee's game to join); this says it was accepted, so the game joins without asking again.
                "ALTER TABLE invitations ADD COLUMN accepted_in_app_at BIGINT",
                """
                CREATE TABLE play_with_friends (
                    player_id TEXT NOT NULL REFERENCES players (player_id),
                    bundle_id TEXT NOT NULL,
                    friends TEXT NOT NULL,
                    created_at BIGINT NOT NULL,
                    expires_at BIGINT NOT NULL,
                    PRIMARY KEY (player_id, bundle_id)
                )
                """,
            ]),
        Migration(
            version: 10, name: "players by alias",
            common: [
                // Friend requests and the Game Center app find players by account name or exact alias; without this
                // the alias side read every player of the environment.
                "CREATE INDEX players_by_alias ON players (environment, alias)"
            ]),
        Migration(
            version: 11, name: "achievement completed by",
            common: [
                // The id of the report that completed the achievement: an upsert tells from the row it wrote whether
                // its own report completed it, so a report needs no read (or lock) before it. Earlier completions
                // have none.
                "ALTER TABLE achievement_progress ADD COLUMN completed_by TEXT"
            ]),
        Migration(
            version: 12, name: "app tickets",
            common: [
                // Single-use links from a game to a page of the Game Center app: the ticket's hash, the game session that
                // asked (the web session it opens ends no later), the page, and when the link stops working.
                """
                CREATE TABLE app_tickets (
                    ticket_hash TEXT PRIMARY KEY,
                    session_id TEXT NOT NULL,
                    player_id TEXT NOT NULL REFERENCES players (player_id),
                    target TEXT NOT NULL,
                    expires_at BIGINT NOT NULL
                )
                """,
                "CREATE INDEX app_tickets_by_expiry ON app_tickets (expires_at)",
                "CREATE INDEX app_tickets_by_player ON app_tickets (player_id)",
            ]),
        Migration(
            version: 13, name: "device sign-ins",
            common: [
                // A game's sign-in through the Game Center app: the device holds the secret (only its hash is kept) and
                // waits; the player opens the request's page, signs in there and confirms (player_id is set); the device
                // then takes a session for its game, once.
                """
                CREATE TABLE device_sign_ins (
                    request_id TEXT PRIMARY KEY,
                    secret_hash TEXT NOT NULL,
                    bundle_id TEXT NOT NULL,
                    environment TEXT NOT NULL,
                    player_id TEXT REFERENCES players (player_id),
                    expires_at BIGINT NOT NULL
                )
                """,
                "CREATE INDEX device_sign_ins_by_expiry ON device_sign_ins (expires_at)",
            ]),
        Migration(
            version: 14, name: "nodes",
            common: [
                // The `gamecenter serve` processes on this database: each keeps its row alive while it runs
                // (last_seen) and removes it when it stops; started_at tells one run of a node id from the next.
                """
                CREATE TABLE nodes (
                    node_id TEXT PRIMARY KEY,
                    http_address TEXT NOT NULL,
                    udp_address TEXT NOT NULL,
                    started_at BIGINT NOT NULL,
                    last_seen BIGINT NOT NULL
                )
                """
            ]),
        Migration(
            version: 15, name: "node notices", common: [],
            postgresOnly: [
                // Nodes that cannot use LISTEN/NOTIFY (`serve --node-poll-seconds`) post their notices here and read the
                // others' by id; rows are forgotten after a few minutes.
                """
                CREATE TABLE node_notices (
                    notice_id BIGSERIAL PRIMARY KEY,
                    node_id TEXT NOT NULL,
                    payload TEXT NOT NULL,
                    created_at BIGINT NOT NULL
                )
                """,
                "CREATE INDEX node_notices_by_time ON node_notices (created_at)",
            ]),
        Migration(
            version: 16, name: "score removals", common: [],
            postgresOnly: [
                // Erasures of a player's scores in a game, for the other nodes' boards to follow in order (as reports);
                // rows are forgotten after a day.
                """
                CREATE TABLE score_removals (
                    removal_id BIGSERIAL PRIMARY KEY,
                    bundle_id TEXT NOT NULL,
                    player_id TEXT NOT NULL,
                    removed_at BIGINT NOT NULL
                )
                """,
                "CREATE INDEX score_removals_by_time ON score_removals (removed_at)",
            ]),
        Migration(
            version: 17, name: "queue owners",
            common: [
                // Which node holds each game's matchmaking queue (the others forward to it); a node takes a queue
                // over when its owner is no longer seen alive.
                """
                CREATE TABLE queue_owners (
                    game TEXT PRIMARY KEY,
                    node_id TEXT NOT NULL,
                    claimed_at BIGINT NOT NULL
                )
                """,
                // Values the nodes share: the key a node shows when it forwards a device's request to another.
                "CREATE TABLE cluster_settings (name TEXT PRIMARY KEY, value TEXT NOT NULL)",
                // The base URL devices and the other nodes reach a node at (its `--public-url`); empty: not known.
                "ALTER TABLE nodes ADD COLUMN public_url TEXT NOT NULL DEFAULT ''",
                // The node that formed a match, and the base URL of the relay its members connect to (NULL: the
                // server each member uses).
                "ALTER TABLE matches ADD COLUMN node_id TEXT",
                "ALTER TABLE matches ADD COLUMN relay_url TEXT",
            ]),
        Migration(
            version: 18, name: "declined device sign-ins",
            common: [
                // When the player answered "Not now" to a game's sign-in through the Game Center app.
                "ALTER TABLE device_sign_ins ADD COLUMN declined_at BIGINT"
            ]),
        Migration(
            version: 19, name: "turn-based matches",
            common: [
                // A match's whole state is one JSON document (the server's state machine reads and writes it whole);
                // the columns beside it are what queries look for: open seats to auto-match into, deadlines the
                // server's clock acts on. `version` grows with every change; a write names the version it read.
                """
                CREATE TABLE turn_matches (
                    match_id TEXT PRIMARY KEY,
                    bundle_id TEXT NOT NULL,
                    environment TEXT NOT NULL,
                    version BIGINT NOT NULL,
                    status BIGINT NOT NULL,
                    seats BIGINT NOT NULL,
                    player_group BIGINT NOT NULL,
                    open_seats BIGINT NOT NULL,
                    deadline BIGINT,
                    created_at BIGINT NOT NULL,
                    state TEXT NOT NULL
                )
                """,
                """
                CREATE INDEX turn_matches_with_open_seats ON turn_matches (bundle_id, environment, player_group, seats, created_at)
                WHERE open_seats > 0
                """,
                "CREATE INDEX turn_matches_by_deadline ON turn_matches (deadline) WHERE deadline IS NOT NULL",
                // The players each match is kept for; `playing` counts towards the game's open matches per player.
                """
                CREATE TABLE turn_match_members (
                    player_id TEXT NOT NULL,
                    match_id TEXT NOT NULL REFERENCES turn_matches (match_id) ON DELETE CASCADE,
                    bundle_id TEXT NOT NULL,
                    playing BIGINT NOT NULL,
                    PRIMARY KEY (player_id, match_id)
                )
                """,
                "CREATE INDEX turn_match_members_by_match ON turn_match_members (match_id)",
            ],
            // The match data, apart from the state: a turn that only changes the state does not rewrite it.
            sqliteOnly: [
                "CREATE TABLE turn_match_data (match_id TEXT PRIMARY KEY REFERENCES turn_matches (match_id) ON DELETE CASCADE, data BLOB NOT NULL)"
            ],
            postgresOnly: [
                "CREATE TABLE turn_match_data (match_id TEXT PRIMARY KEY REFERENCES turn_matches (match_id) ON DELETE CASCADE, data BYTEA NOT NULL)"
            ]),
        Migration(
            version: 20, name: "saved games",
            common: [
                // One row per save name: a version is made current under its row lock, so two devices finishing
                // uploads of one save at once are told apart (one is based on the other, or they conflict).
                """
                CREATE TABLE saved_games (
                    player_id TEXT NOT NULL REFERENCES players (player_id) ON DELETE CASCADE,
                    bundle_id TEXT NOT NULL,
                    environment TEXT NOT NULL,
                    name TEXT NOT NULL,
                    revision BIGINT NOT NULL,
                    PRIMARY KEY (player_id, bundle_id, environment, name)
                )
                """,
                // Every stored version; `current` marks the save's current ones (more than one: a conflict).
                """
                CREATE TABLE saved_game_versions (
                    version_id TEXT PRIMARY KEY,
                    player_id TEXT NOT NULL REFERENCES players (player_id) ON DELETE CASCADE,
                    bundle_id TEXT NOT NULL,
                    environment TEXT NOT NULL,
                    name TEXT NOT NULL,
                    device_name TEXT NOT NULL,
                    size BIGINT NOT NULL,
                    sha256 TEXT NOT NULL,
                    played_seconds DOUBLE PRECISION,
                    progress DOUBLE PRECISION,
                    created_at BIGINT NOT NULL,
                    current BIGINT NOT NULL
                )
                """,
                "CREATE INDEX saved_game_versions_by_save ON saved_game_versions (player_id, bundle_id, environment, name, created_at)",
                // Uploads not yet finished; their chunks are stored under the upload's id, which becomes the
                // version's id when it is finished (the bytes are never copied).
                """
                CREATE TABLE saved_game_uploads (
                    upload_id TEXT PRIMARY KEY,
                    player_id TEXT NOT NULL REFERENCES players (player_id) ON DELETE CASCADE,
                    bundle_id TEXT NOT NULL,
                    environment TEXT NOT NULL,
                    name TEXT NOT NULL,
                    based_on TEXT NOT NULL,
                    device_name TEXT NOT NULL,
                    size BIGINT NOT NULL,
                    sha256 TEXT NOT NULL,
                    played_seconds DOUBLE PRECISION,
                    progress DOUBLE PRECISION,
                    created_at BIGINT NOT NULL
                )
                """,
                "CREATE INDEX saved_game_uploads_by_player ON saved_game_uploads (player_id, created_at)",
            ],
            // The bytes, a chunk (at most 1 MiB) per row: no whole save is ever held in memory.
            sqliteOnly: [
                "CREATE TABLE saved_game_chunks (owner_id TEXT NOT NULL, idx BIGINT NOT NULL, data BLOB NOT NULL, PRIMARY KEY (owner_id, idx))"
            ],
            postgresOnly: [
                "CREATE TABLE saved_game_chunks (owner_id TEXT NOT NULL, idx BIGINT NOT NULL, data BYTEA NOT NULL, PRIMARY KEY (owner_id, idx))"
            ]),
        Migration(
            version: 21, name: "recurring leaderboards",
            common: [
                // The occurrence a score on a recurring leaderboard belongs to (its start); NULL on classic boards.
                "ALTER TABLE scores ADD COLUMN occurrence BIGINT",
                // Old occurrences are forgotten by range.
                "CREATE INDEX scores_by_occurrence ON scores (bundle_id, category, occurrence) WHERE occurrence IS NOT NULL",
            ],
            // Each player's best per occurrence, as `best_scores` holds the all-time (lifetime) best: a new occurrence's
            // board is read from its own key range, which starts empty.
            sqliteOnly: [occurrenceBestScores(tableOptions: " WITHOUT ROWID")],
            postgresOnly: [occurrenceBestScores(tableOptions: "")]),
        Migration(
            version: 22, name: "occurrence events",
            common: [],
            // A recurring leaderboard's starts and ends, each once (the unique key) whichever node saw it first, in the
            // order they were recorded; an end holds the final standings (JSON).
            sqliteOnly: [occurrenceEvents(eventID: "event_id INTEGER PRIMARY KEY AUTOINCREMENT")],
            postgresOnly: [occurrenceEvents(eventID: "event_id BIGSERIAL PRIMARY KEY")]),
        Migration(
            version: 23, name: "tournaments",
            common: [
                // A player's entry in one occurrence of a tournament board: the attempts used and any granted beyond the
                // board's.
                """
                CREATE TABLE tournament_entries (
                    bundle_id TEXT NOT NULL,
                    environment TEXT NOT NULL,
                    category TEXT NOT NULL,
                    occurrence BIGINT NOT NULL,
                    player_id TEXT NOT NULL REFERENCES players (player_id) ON DELETE CASCADE,
                    attempts_used BIGINT NOT NULL,
                    extra_attempts BIGINT NOT NULL,
                    joined_at BIGINT NOT NULL,
                    PRIMARY KEY (bundle_id, environment, category, occurrence, player_id)
                )
                """,
                // Entrants per occurrence: the row a join locks, so two joins at once cannot pass maxSize.
                """
                CREATE TABLE tournament_sizes (
                    bundle_id TEXT NOT NULL,
                    environment TEXT NOT NULL,
                    category TEXT NOT NULL,
                    occurrence BIGINT NOT NULL,
                    entrants BIGINT NOT NULL,
                    PRIMARY KEY (bundle_id, environment, category, occurrence)
                )
                """,
            ]),
        Migration(
            version: 24, name: "challenges",
            common: [
                // A challenge on one board: until `ends_at` (on a recurring board, in one occurrence). The clock sets
                // `ending_soon_at` and `ended_at` once each (a conditional update), whichever node sees it first.
                """
                CREATE TABLE challenges (
                    challenge_id TEXT PRIMARY KEY,
                    bundle_id TEXT NOT NULL,
                    environment TEXT NOT NULL,
                    definition TEXT NOT NULL,
                    category TEXT NOT NULL,
                    occurrence BIGINT,
                    creator_id TEXT NOT NULL,
                    code TEXT NOT NULL UNIQUE,
                    created_at BIGINT NOT NULL,
                    ends_at BIGINT NOT NULL,
                    rematch_of TEXT,
                    ending_soon_at BIGINT,
                    ended_at BIGINT
                )
                """,
                "CREATE INDEX challenges_running ON challenges (ends_at) WHERE ended_at IS NULL",
                // Its players: invited, joined or left. `after_score` is the last score id stored when they joined
                // (later scores are theirs to count); `final_value` and `final_attempts` freeze their standing at the end.
                """
                CREATE TABLE challenge_participants (
                    challenge_id TEXT NOT NULL REFERENCES challenges (challenge_id) ON DELETE CASCADE,
                    player_id TEXT NOT NULL REFERENCES players (player_id) ON DELETE CASCADE,
                    status TEXT NOT NULL,
                    invited_at BIGINT NOT NULL,
                    joined_at BIGINT,
                    after_score BIGINT NOT NULL,
                    final_value BIGINT,
                    final_attempts BIGINT,
                    PRIMARY KEY (challenge_id, player_id)
                )
                """,
                "CREATE INDEX challenge_participants_by_player ON challenge_participants (player_id)",
                // Each node follows the joins of every node by time (which players' scores may count in a challenge).
                "CREATE INDEX challenge_participants_by_join ON challenge_participants (joined_at)",
            ]),
        Migration(
            version: 25, name: "tournaments ended early",
            common: [
                // When an admin ended the occurrence before its end (NULL: it runs to its end). Reports read it with a
                // shared lock on PostgreSQL, so none is stored after the end is.
                "ALTER TABLE tournament_sizes ADD COLUMN closed_at BIGINT"
            ]),
        Migration(
            version: 27, name: "tournaments started early",
            common: [
                // When an admin started the occurrence before its scheduled start (NULL: it starts on schedule). From
                // then on scores count in it; every node reads these once a second.
                "ALTER TABLE tournament_sizes ADD COLUMN opened_at BIGINT"
            ]),
        Migration(
            version: 28, name: "friends chosen for a turn-based match",
            common: [
                // 1: the player chose the friends for a turn-based match (the game's turn-based listener hears them).
                "ALTER TABLE play_with_friends ADD COLUMN turn_based BIGINT NOT NULL DEFAULT 0"
            ]),
        Migration(
            version: 29, name: "a player's scores by board",
            common: [
                // A challenge's standings read each participant's scores on one board, by id (those after they joined,
                // their best before): a range of this index, value included, instead of every score the player has in
                // the game. Its first columns serve what the index it replaces served (a player's scores in a game).
                "CREATE INDEX scores_by_player_board ON scores (player_id, bundle_id, environment, category, score_id, value)",
                "DROP INDEX scores_by_player",
            ]),
        Migration(
            version: 26, name: "activities and parties",
            common: [
                // A party: players of one game who share a code. `live_code` is the code while others may join (NULL
                // once its host ended their activity), so two live parties of a game never share a code while an
                // ended party's code may be used again; a party also stops taking players at `expires_at`.
                """
                CREATE TABLE parties (
                    party_id TEXT PRIMARY KEY,
                    bundle_id TEXT NOT NULL,
                    environment TEXT NOT NULL,
                    code TEXT NOT NULL,
                    live_code TEXT,
                    definition TEXT NOT NULL,
                    host_id TEXT NOT NULL REFERENCES players (player_id) ON DELETE CASCADE,
                    created_at BIGINT NOT NULL,
                    expires_at BIGINT NOT NULL
                )
                """,
                "CREATE UNIQUE INDEX parties_live_code ON parties (bundle_id, environment, live_code)",
                // One player's activity (Apple's GKGameActivity); in a party or not. Active time is `active_millis`
                // plus the time since `resumed_at` while it runs.
                """
                CREATE TABLE activities (
                    activity_id TEXT PRIMARY KEY,
                    bundle_id TEXT NOT NULL,
                    environment TEXT NOT NULL,
                    player_id TEXT NOT NULL REFERENCES players (player_id) ON DELETE CASCADE,
                    definition TEXT NOT NULL,
                    party_id TEXT REFERENCES parties (party_id) ON DELETE CASCADE,
                    state TEXT NOT NULL,
                    properties TEXT NOT NULL,
                    created_at BIGINT NOT NULL,
                    started_at BIGINT,
                    resumed_at BIGINT,
                    active_millis BIGINT NOT NULL,
                    ended_at BIGINT
                )
                """,
                "CREATE INDEX activities_by_party ON activities (party_id, created_at)",
                "CREATE INDEX activities_by_player ON activities (player_id, created_at)",
            ]),
        Migration(
            version: 30, name: "server keys and idempotent server writes",
            common: [
                // A studio's game-server key: an ES256 key pair whose private half only the studio holds (the server keeps
                // the public key, which is no secret), scoped to one game, one environment and a set of permissions.
                // `expires_at`: a rotated key keeps working until then; `revoked_at`: refused from then on.
                """
                CREATE TABLE server_keys (
                    key_id TEXT PRIMARY KEY,
                    issuer_id TEXT NOT NULL,
                    bundle_id TEXT NOT NULL,
                    environment TEXT NOT NULL,
                    permissions TEXT NOT NULL,
                    name TEXT NOT NULL,
                    public_key TEXT NOT NULL,
                    created_at BIGINT NOT NULL,
                    expires_at BIGINT,
                    revoked_at BIGINT,
                    replaced_by TEXT
                )
                """,
                "CREATE INDEX server_keys_by_game ON server_keys (bundle_id, created_at)",
                // The answer a server write gave under an `Idempotency-Key` (per game and environment, so a retry after a
                // key rotation still finds it), with a hash of the request it answered; kept a day.
                """
                CREATE TABLE server_idempotency (
                    bundle_id TEXT NOT NULL,
                    environment TEXT NOT NULL,
                    idempotency_key TEXT NOT NULL,
                    request_hash TEXT NOT NULL,
                    status BIGINT NOT NULL,
                    body TEXT NOT NULL,
                    created_at BIGINT NOT NULL,
                    PRIMARY KEY (bundle_id, environment, idempotency_key)
                )
                """,
                "CREATE INDEX server_idempotency_by_age ON server_idempotency (created_at)",
            ]),
        Migration(
            version: 31, name: "identity signing keys",
            common: [
                // The keys this server signs players' identity with, shared by every node: `kind` is `rsa` (the
                // GameKit-style signature, with `certificate`: its self-signed X.509 certificate, DER as base64) or
                // `es256` (identity tokens, published at /.well-known/jwks.json). Made when first needed.
                """
                CREATE TABLE identity_keys (
                    key_id TEXT PRIMARY KEY,
                    kind TEXT NOT NULL,
                    private_key TEXT NOT NULL,
                    certificate TEXT,
                    created_at BIGINT NOT NULL
                )
                """
            ]),
        Migration(
            version: 32, name: "webhooks",
            common: [
                // Where a game's events are posted. `secret` signs each delivery (HMAC-SHA256), so it is kept as is;
                // `after_score_id`, `after_event_id`: the endpoint hears of reports and players' events stored after it
                // was made.
                """
                CREATE TABLE webhook_endpoints (
                    endpoint_id TEXT PRIMARY KEY,
                    bundle_id TEXT NOT NULL,
                    environment TEXT NOT NULL,
                    url TEXT NOT NULL,
                    secret TEXT NOT NULL,
                    events TEXT NOT NULL,
                    after_score_id BIGINT NOT NULL,
                    after_event_id BIGINT NOT NULL,
                    created_at BIGINT NOT NULL
                )
                """,
                // How far the dispatcher has turned each event source into deliveries (every id up to `position`).
                "CREATE TABLE webhook_cursors (source TEXT PRIMARY KEY, position BIGINT NOT NULL)",
                // The node that dispatches, until `expires_at` (it renews while it runs).
                "CREATE TABLE webhook_lease (name TEXT PRIMARY KEY, node_id TEXT NOT NULL, expires_at BIGINT NOT NULL)",
            ],
            sqliteOnly: [Self.webhookDeliveries(id: "delivery_id INTEGER PRIMARY KEY")] + Self.webhookDeliveryIndexes,
            postgresOnly: [Self.webhookDeliveries(id: "delivery_id BIGSERIAL PRIMARY KEY")] + Self.webhookDeliveryIndexes
                // Players' events in the order they were stored, for webhooks (on SQLite, the rowid: events are never
                // deleted and the database never vacuumed, so it only grows).
                + ["ALTER TABLE events ADD COLUMN event_id BIGSERIAL", "CREATE INDEX events_by_id ON events (event_id)"]),
        Migration(
            version: 33, name: "moderation",
            common: [
                // Players a studio hid from every board of a game (their scores are kept, not ranked, until unhidden).
                """
                CREATE TABLE hidden_players (
                    bundle_id TEXT NOT NULL,
                    player_id TEXT NOT NULL,
                    hidden_at BIGINT NOT NULL,
                    PRIMARY KEY (bundle_id, player_id)
                )
                """
            ],
            sqliteOnly: [Self.auditLog(id: "entry_id INTEGER PRIMARY KEY"), Self.auditLogIndex],
            postgresOnly: [Self.auditLog(id: "entry_id BIGSERIAL PRIMARY KEY"), Self.auditLogIndex]),
        Migration(
            version: 34, name: "game events for webhooks",
            common: [
                // An endpoint hears of game events and occurrence starts and ends recorded after it was made (0 for
                // the endpoints made before: none of them hears those event types).
                "ALTER TABLE webhook_endpoints ADD COLUMN after_game_event_id BIGINT NOT NULL DEFAULT 0",
                "ALTER TABLE webhook_endpoints ADD COLUMN after_occurrence_id BIGINT NOT NULL DEFAULT 0",
            ],
            sqliteOnly: [Self.gameEvents(id: "event_id INTEGER PRIMARY KEY AUTOINCREMENT")],
            postgresOnly: [Self.gameEvents(id: "event_id BIGSERIAL PRIMARY KEY")]),
        Migration(
            version: 35, name: "verified and signed scores",
            common: [
                // The key each session signs score reports with (boards whose writePolicy is `signed`), and the last
                // counter it signed: a report's counter must be above it.
                """
                CREATE TABLE report_keys (
                    session_id TEXT PRIMARY KEY REFERENCES sessions (session_id) ON DELETE CASCADE,
                    secret TEXT NOT NULL,
                    counter BIGINT NOT NULL,
                    created_at BIGINT NOT NULL
                )
                """
            ],
            sqliteOnly: [Self.scoreSubmissions(attachment: "BLOB")] + Self.scoreSubmissionIndexes,
            postgresOnly: [Self.scoreSubmissions(attachment: "BYTEA")] + Self.scoreSubmissionIndexes),
        Migration(
            version: 36, name: "deleted accounts",
            common: [
                // A deleted account's tombstone: no personal data, only that this id must never be written again (an
                // import of an older archive or backup skips its records).
                """
                CREATE TABLE deleted_accounts (
                    player_id TEXT PRIMARY KEY,
                    environment TEXT NOT NULL,
                    deleted_at BIGINT NOT NULL
                )
                """
            ]),
        Migration(
            version: 37, name: "studio console and player bans",
            common: [
                // The studio's console users (`gamecenter console add-user`), apart from players. A removed user keeps
                // its row (`disabled_at`), so the audit log's `console:NAME` still names someone.
                """
                CREATE TABLE console_users (
                    name TEXT PRIMARY KEY,
                    role TEXT NOT NULL,
                    password_hash TEXT NOT NULL,
                    created_at BIGINT NOT NULL,
                    disabled_at BIGINT
                )
                """,
                // A signed-in console browser; only the token's SHA-256 is kept.
                """
                CREATE TABLE console_sessions (
                    session_id TEXT PRIMARY KEY,
                    token_hash TEXT NOT NULL UNIQUE,
                    user_name TEXT NOT NULL REFERENCES console_users (name),
                    created_at BIGINT NOT NULL,
                    expires_at BIGINT NOT NULL,
                    revoked_at BIGINT
                )
                """,
                "CREATE INDEX console_sessions_by_user ON console_sessions (user_name)",
                // Players the studio banned: their sessions were ended and they cannot sign in until unbanned.
                """
                CREATE TABLE player_bans (
                    player_id TEXT PRIMARY KEY REFERENCES players (player_id),
                    reason TEXT NOT NULL,
                    banned_by TEXT NOT NULL,
                    banned_at BIGINT NOT NULL
                )
                """,
            ]),
        Migration(
            version: 38, name: "matchmaking queue metrics",
            common: [
                // What each rule-based queue did in each fifteen-minute bucket (`bucket_start`, ms since 1970): the
                // figures as JSON (mergeable sketches), kept 30 days.
                """
                CREATE TABLE matchmaking_queue_metrics (
                    bundle_id TEXT NOT NULL,
                    environment TEXT NOT NULL,
                    queue TEXT NOT NULL,
                    bucket_start BIGINT NOT NULL,
                    figures TEXT NOT NULL,
                    PRIMARY KEY (bundle_id, environment, queue, bucket_start)
                )
                """,
                "CREATE INDEX matchmaking_queue_metrics_by_start ON matchmaking_queue_metrics (bucket_start)",
            ]),
        Migration(
            version: 39, name: "node figures",
            common: [
                // What each node serves now (realtime channels, waiting requests, relayed matches), as JSON, written
                // with its heartbeat: the console's live page shows every node's.
                "ALTER TABLE nodes ADD COLUMN figures TEXT NOT NULL DEFAULT '{}'"
            ]),
    ]

    /// The outbox of a game's events that no player's event log carries (a real-time match that ended), written in
    /// the transaction of the change and read by the webhook dispatcher in id order: `kind` is the webhook event type,
    /// `order_key` what its deliveries are ordered by (a match id), `payload` the event's data as JSON.
    private static func gameEvents(id: String) -> String {
        """
        CREATE TABLE game_events (
            \(id),
            bundle_id TEXT NOT NULL,
            environment TEXT NOT NULL,
            kind TEXT NOT NULL,
            order_key TEXT NOT NULL,
            payload TEXT NOT NULL,
            created_at BIGINT NOT NULL
        )
        """
    }

    /// Devices' scores on boards that require verification: `verifying` (the studio's verifier is being asked),
    /// `accepted` (stored as `score_id`), `quarantined` (no answer in time: the studio releases or rejects it) or
    /// `rejected` (with `reason`). One row per score of a report (`report_id`, `position`), so a re-sent report finds
    /// its rows. `details` is a JSON array of integers; `attachment` the input log or replay, if any.
    private static let scoreSubmissionIndexes = [
        "CREATE INDEX score_submissions_by_state ON score_submissions (bundle_id, environment, state, created_at)",
        "CREATE INDEX score_submissions_by_player ON score_submissions (player_id, bundle_id, environment, created_at)",
        // The sweeper's question every ten seconds on every node: which are still being verified.
        "CREATE INDEX score_submissions_verifying ON score_submissions (created_at) WHERE state = 'verifying'",
    ]

    private static func scoreSubmissions(attachment: String) -> String {
        """
        CREATE TABLE score_submissions (
            submission_id TEXT PRIMARY KEY,
            bundle_id TEXT NOT NULL,
            environment TEXT NOT NULL,
            category TEXT NOT NULL,
            player_id TEXT NOT NULL REFERENCES players (player_id),
            report_id TEXT NOT NULL,
            position BIGINT NOT NULL,
            value BIGINT NOT NULL,
            context BIGINT NOT NULL,
            earned_at BIGINT NOT NULL,
            occurrence BIGINT,
            higher_is_better BIGINT NOT NULL,
            details TEXT NOT NULL,
            attachment \(attachment),
            state TEXT NOT NULL,
            reason TEXT,
            score_id BIGINT,
            created_at BIGINT NOT NULL,
            decided_at BIGINT,
            decided_by TEXT,
            UNIQUE (player_id, report_id, position)
        )
        """
    }

    /// What the studio did, append-only (nothing updates or deletes a row): who (`admin` or a server key's id), what
    /// (`player.hidden`, `scores.erased`, `key.created`, …), to what, and details as JSON.
    private static func auditLog(id: String) -> String {
        """
        CREATE TABLE audit_log (
            \(id),
            bundle_id TEXT NOT NULL,
            actor TEXT NOT NULL,
            action TEXT NOT NULL,
            subject TEXT NOT NULL,
            detail TEXT NOT NULL,
            created_at BIGINT NOT NULL
        )
        """
    }

    private static let auditLogIndex = "CREATE INDEX audit_log_by_game ON audit_log (bundle_id, entry_id)"

    /// One event for one endpoint: `pending` (due at `next_attempt_at`), `delivered` or `dead` (not delivered by
    /// `expires_at`, a day after it was made or replayed). Delivered in id order per endpoint and `order_key` (the
    /// player the event is about).
    private static func webhookDeliveries(id: String) -> String {
        """
        CREATE TABLE webhook_deliveries (
            \(id),
            endpoint_id TEXT NOT NULL REFERENCES webhook_endpoints (endpoint_id) ON DELETE CASCADE,
            event_id TEXT NOT NULL,
            event_type TEXT NOT NULL,
            order_key TEXT NOT NULL,
            payload TEXT NOT NULL,
            state TEXT NOT NULL,
            attempts BIGINT NOT NULL,
            next_attempt_at BIGINT NOT NULL,
            expires_at BIGINT NOT NULL,
            last_error TEXT,
            created_at BIGINT NOT NULL,
            delivered_at BIGINT
        )
        """
    }

    private static let webhookDeliveryIndexes = [
        "CREATE UNIQUE INDEX webhook_deliveries_once ON webhook_deliveries (endpoint_id, event_id)",
        "CREATE INDEX webhook_deliveries_by_state ON webhook_deliveries (endpoint_id, state, delivery_id)",
    ]

    /// Starting a server rebuilds every leaderboard from storage, reading a million rows per board: both reads become
    /// range scans that never visit the table row by row. `best_scores` is stored in its key's order (SQLite:
    /// WITHOUT ROWID), and the time index carries what the rolling windows need (category, player, value; the
    /// score id is the row id on SQLite, the key on PostgreSQL).
    private static let leaderboardScans = Migration(
        version: 5, name: "leaderboard rebuild scans", common: [],
        sqliteOnly: [
            """
            CREATE TABLE best_scores_by_key (
                bundle_id TEXT NOT NULL,
                environment TEXT NOT NULL,
                category TEXT NOT NULL,
                player_id TEXT NOT NULL REFERENCES players (player_id),
                score_id BIGINT NOT NULL,
                value BIGINT NOT NULL,
                PRIMARY KEY (bundle_id, environment, category, player_id)
            ) WITHOUT ROWID
            """,
            """
            INSERT INTO best_scores_by_key (bundle_id, environment, category, player_id, score_id, value)
            SELECT bundle_id, environment, category, player_id, score_id, value FROM best_scores
            """,
            "DROP TABLE best_scores",
            "ALTER TABLE best_scores_by_key RENAME TO best_scores",
            "DROP INDEX scores_by_time",
            "CREATE INDEX scores_by_time ON scores (bundle_id, environment, reported_at, category, player_id, value)",
        ],
        postgresOnly: [
            "DROP INDEX scores_by_time",
            "CREATE INDEX scores_by_time ON scores (bundle_id, environment, reported_at) INCLUDE (category, player_id, value, score_id)",
        ])

    /// A report id is applied once per player and kind: before, an achievement report reusing a score report's id
    /// was taken for a repeat and stored nowhere. The key gains the kind (SQLite cannot change a key in place: the
    /// table is rebuilt).
    private static let reportIDsPerKind = Migration(
        version: 6, name: "report ids per kind", common: [],
        sqliteOnly: [
            """
            CREATE TABLE applied_reports_by_kind (
                report_id TEXT NOT NULL,
                player_id TEXT NOT NULL REFERENCES players (player_id),
                kind TEXT NOT NULL,
                applied_at BIGINT NOT NULL,
                PRIMARY KEY (player_id, kind, report_id)
            )
            """,
            """
            INSERT INTO applied_reports_by_kind (report_id, player_id, kind, applied_at)
            SELECT report_id, player_id, kind, applied_at FROM applied_reports
            """,
            "DROP TABLE applied_reports",
            "ALTER TABLE applied_reports_by_kind RENAME TO applied_reports",
        ],
        postgresOnly: [
            "ALTER TABLE applied_reports DROP CONSTRAINT applied_reports_pkey, ADD PRIMARY KEY (player_id, kind, report_id)"
        ])

    /// `occurrence_best_scores` (migration 21); SQLite stores it in its key's order (`WITHOUT ROWID`), as `best_scores`.
    private static func occurrenceBestScores(tableOptions: String) -> String {
        """
        CREATE TABLE occurrence_best_scores (
            bundle_id TEXT NOT NULL,
            environment TEXT NOT NULL,
            category TEXT NOT NULL,
            occurrence BIGINT NOT NULL,
            player_id TEXT NOT NULL REFERENCES players (player_id),
            score_id BIGINT NOT NULL,
            value BIGINT NOT NULL,
            PRIMARY KEY (bundle_id, environment, category, occurrence, player_id)
        )\(tableOptions)
        """
    }

    /// `occurrence_events` (migration 22), its id counted by each engine's own column type.
    private static func occurrenceEvents(eventID: String) -> String {
        """
        CREATE TABLE occurrence_events (
            \(eventID),
            bundle_id TEXT NOT NULL,
            environment TEXT NOT NULL,
            category TEXT NOT NULL,
            occurrence BIGINT NOT NULL,
            occurrence_end BIGINT NOT NULL,
            kind TEXT NOT NULL,
            recorded_at BIGINT NOT NULL,
            standings TEXT NOT NULL,
            UNIQUE (bundle_id, environment, category, occurrence, kind)
        )
        """
    }

    /// Every report is kept (`scores`, whose id orders reports: earlier report, smaller id); `best_scores` holds
    /// each player's all-time best per leaderboard so that a rank index rebuilds from one row per player.
    private static func leaderboardTables(scoreID: String) -> [String] {
        [
            """
            CREATE TABLE scores (
                \(scoreID),
                bundle_id TEXT NOT NULL,
                environment TEXT NOT NULL,
                category TEXT NOT NULL,
                player_id TEXT NOT NULL REFERENCES players (player_id),
                value BIGINT NOT NULL,
                context BIGINT NOT NULL,
                reported_at BIGINT NOT NULL
            )
            """,
            "CREATE INDEX scores_by_time ON scores (bundle_id, environment, reported_at)",
            "CREATE INDEX scores_by_player ON scores (player_id, bundle_id)",
            """
            CREATE TABLE best_scores (
                bundle_id TEXT NOT NULL,
                environment TEXT NOT NULL,
                category TEXT NOT NULL,
                player_id TEXT NOT NULL REFERENCES players (player_id),
                score_id BIGINT NOT NULL,
                value BIGINT NOT NULL,
                PRIMARY KEY (bundle_id, environment, category, player_id)
            )
            """,
        ]
    }
}
