import SQLKit

/// A user of the studio console (not a player): a name, a role, and a bcrypt hash.
public struct ConsoleUserRecord: Sendable, Equatable {
    /// The unique sign-in name.
    public var name: String
    /// `owner`, `developer`, `support` or `read-only`.
    public var role: String
    /// The bcrypt hash of the password (``Credentials``'s form).
    public var passwordHash: String
    /// When the user was added (or added again).
    public var createdAt: Int64
    /// When the user was removed; a removed user cannot sign in.
    public var disabledAt: Int64?

    /// A user record.
    public init(name: String, role: String, passwordHash: String, createdAt: Int64, disabledAt: Int64? = nil) {
        self.name = name
        self.role = role
        self.passwordHash = passwordHash
        self.createdAt = createdAt
        self.disabledAt = disabledAt
    }
}

/// A signed-in console browser.
public struct ConsoleSessionRecord: Sendable, Equatable {
    /// The session's id (not a secret).
    public var sessionID: String
    /// SHA-256 of the bearer token held in the console's cookie.
    public var tokenHash: String
    /// The console user signed in.
    public var userName: String
    /// When it was opened.
    public var createdAt: Int64
    /// When it ends by itself.
    public var expiresAt: Int64
    /// When it was signed out, if it was.
    public var revokedAt: Int64?

    /// A session record.
    public init(sessionID: String, tokenHash: String, userName: String, createdAt: Int64, expiresAt: Int64, revokedAt: Int64? = nil) {
        self.sessionID = sessionID
        self.tokenHash = tokenHash
        self.userName = userName
        self.createdAt = createdAt
        self.expiresAt = expiresAt
        self.revokedAt = revokedAt
    }
}

/// A player the studio banned.
public struct PlayerBanRecord: Sendable, Equatable {
    /// The banned player.
    public var playerID: String
    /// Why, as the studio wrote it.
    public var reason: String
    /// Who banned them (`console:NAME`).
    public var bannedBy: String
    /// When.
    public var bannedAt: Int64

    /// A ban record.
    public init(playerID: String, reason: String, bannedBy: String, bannedAt: Int64) {
        self.playerID = playerID
        self.reason = reason
        self.bannedBy = bannedBy
        self.bannedAt = bannedAt
    }
}

/// A real-time match a player was a member of.
public struct PlayerMatchRecord: Sendable, Equatable {
    /// The match.
    public var matchID: String
    /// Its game.
    public var bundleID: String
    /// `forming`, `started`, `failed` or `ended`.
    public var state: String
    /// When the player joined it.
    public var joinedAt: Int64
    /// When the player left, if they did.
    public var leftAt: Int64?
}

/// A match invitation a player sent or received.
public struct PlayerInvitationRecord: Sendable, Equatable {
    /// The invitation.
    public var invitationID: String
    /// Its game.
    public var bundleID: String
    /// Who sent it and who received it (player ids).
    public var inviter: String, invitee: String
    /// `pending`, `accepted`, `declined` or `cancelled`.
    public var state: String
    /// When it was sent.
    public var createdAt: Int64
}

extension StorageSession {
    // MARK: Console users

    /// Adds a console user; a removed user of the same name is brought back with the new role and password. False
    /// when an active user has the name.
    public func insertConsoleUser(_ user: ConsoleUserRecord) async throws -> Bool {
        try await sql.raw(
            """
            INSERT INTO console_users (name, role, password_hash, created_at, disabled_at)
            VALUES (\(bind: user.name), \(bind: user.role), \(bind: user.passwordHash), \(bind: user.createdAt), NULL)
            ON CONFLICT (name) DO UPDATE SET role = excluded.role, password_hash = excluded.password_hash,
                created_at = excluded.created_at, disabled_at = NULL
            WHERE console_users.disabled_at IS NOT NULL
            RETURNING name
            """
        ).first() != nil
    }

    /// The console user with this name, removed or not.
    public func consoleUser(name: String) async throws -> ConsoleUserRecord? {
        try await sql.raw("SELECT * FROM console_users WHERE name = \(bind: name)").first().map(Self.consoleUser(from:))
    }

    /// The console users not removed, by name.
    public func consoleUsers() async throws -> [ConsoleUserRecord] {
        try await sql.raw("SELECT * FROM console_users WHERE disabled_at IS NULL ORDER BY name").all().map(Self.consoleUser(from:))
    }

    /// Removes a console user and ends their sessions; false when no active user has the name.
    public func disableConsoleUser(name: String, now: Int64) async throws -> Bool {
        let removed =
            try await sql.raw(
                "UPDATE console_users SET disabled_at = \(bind: now) WHERE name = \(bind: name) AND disabled_at IS NULL RETURNING name"
            ).first() != nil
        if removed {
            try await sql.raw(
                "UPDATE console_sessions SET revoked_at = \(bind: now) WHERE user_name = \(bind: name) AND revoked_at IS NULL"
            ).run()
        }
        return removed
    }

    // MARK: Console sessions

    /// Stores a new console session.
    public func insertConsoleSession(_ session: ConsoleSessionRecord) async throws {
        try await sql.raw(
            """
            INSERT INTO console_sessions (session_id, token_hash, user_name, created_at, expires_at, revoked_at)
            VALUES (\(bind: session.sessionID), \(bind: session.tokenHash), \(bind: session.userName), \(bind: session.createdAt),
                \(bind: session.expiresAt), NULL)
            """
        ).run()
    }

    /// The console session whose token hashes to `tokenHash`, and its user, revoked or not.
    public func consoleSession(tokenHash: String) async throws -> (session: ConsoleSessionRecord, user: ConsoleUserRecord)? {
        guard
            let row = try await sql.raw(
                """
                SELECT s.session_id, s.token_hash, s.user_name, s.created_at AS session_created_at, s.expires_at, s.revoked_at,
                    u.name, u.role, u.password_hash, u.created_at, u.disabled_at
                FROM console_sessions s JOIN console_users u ON u.name = s.user_name
                WHERE s.token_hash = \(bind: tokenHash)
                """
            ).first()
        else { return nil }
        let session = ConsoleSessionRecord(
            sessionID: try row.string("session_id"), tokenHash: try row.string("token_hash"), userName: try row.string("user_name"),
            createdAt: try row.int("session_created_at"), expiresAt: try row.int("expires_at"), revokedAt: try row.optionalInt("revoked_at"))
        return (session, try Self.consoleUser(from: row))
    }

    /// Ends a console session; false when it had ended already.
    public func revokeConsoleSession(sessionID: String, now: Int64) async throws -> Bool {
        try await sql.raw(
            """
            UPDATE console_sessions SET revoked_at = \(bind: now) WHERE session_id = \(bind: sessionID) AND revoked_at IS NULL
            RETURNING session_id
            """
        ).first() != nil
    }

    // MARK: Player bans

    /// Why a write holds a player's row (``lockPlayer(id:for:)``).
    public enum PlayerLock: Sendable {
        /// Opening a session after checking the player is not banned and their password is the one checked: any
        /// number at once.
        case openingSession
        /// Banning the player or changing their password: waits for the sessions being opened, which then wait for it.
        case closingAccess
    }

    /// Holds the player's row until the write ends, so that a ban (or a new password) and a session opened at the same
    /// moment are ordered: a session whose write checked first is stored before the ban's write goes on (and the ban
    /// then ends it), and a session whose write comes second sees the ban. On PostgreSQL, a key-share lock for a
    /// session (it does not hold up other writes of the player) and an update lock for a ban; SQLite runs one write at
    /// a time already. False when there is no such player.
    public func lockPlayer(id: String, for purpose: PlayerLock) async throws -> Bool {
        let lock: SQLQueryString = engine == .postgres ? (purpose == .closingAccess ? " FOR UPDATE" : " FOR KEY SHARE") : ""
        return try await sql.raw("SELECT player_id FROM players WHERE player_id = \(bind: id)\(lock)").first() != nil
    }

    /// Bans a player; false when they were banned already.
    public func insertPlayerBan(_ ban: PlayerBanRecord) async throws -> Bool {
        try await sql.raw(
            """
            INSERT INTO player_bans (player_id, reason, banned_by, banned_at)
            VALUES (\(bind: ban.playerID), \(bind: ban.reason), \(bind: ban.bannedBy), \(bind: ban.bannedAt))
            ON CONFLICT DO NOTHING RETURNING player_id
            """
        ).first() != nil
    }

    /// Lifts a player's ban; false when they were not banned.
    public func deletePlayerBan(playerID: String) async throws -> Bool {
        try await sql.raw("DELETE FROM player_bans WHERE player_id = \(bind: playerID) RETURNING player_id").first() != nil
    }

    /// The player's ban, if they are banned.
    public func playerBan(playerID: String) async throws -> PlayerBanRecord? {
        try await sql.raw("SELECT * FROM player_bans WHERE player_id = \(bind: playerID)").first().map { row in
            PlayerBanRecord(
                playerID: try row.string("player_id"), reason: try row.string("reason"), bannedBy: try row.string("banned_by"),
                bannedAt: try row.int("banned_at"))
        }
    }

    // MARK: Looking players up

    /// Players of either environment whose id is `text`, whose account name starts with it, or whose alias contains
    /// it (letter case ignored); oldest first, at most `limit`.
    public func searchPlayers(_ text: String, limit: Int) async throws -> [PlayerRecord] {
        let escaped = text.lowercased().replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "%", with: "\\%")
            .replacingOccurrences(of: "_", with: "\\_")
        return try await sql.raw(
            """
            SELECT * FROM players
            WHERE player_id = \(bind: text) OR account_name LIKE \(bind: escaped + "%") ESCAPE '\\'
                OR lower(alias) LIKE \(bind: "%" + escaped + "%") ESCAPE '\\'
            ORDER BY created_at, player_id LIMIT \(bind: Int64(limit))
            """
        ).all().map(Self.player(from:))
    }

    /// The games a player played, most recent first.
    public func playedGames(playerID: String) async throws -> [(bundleID: String, lastPlayedAt: Int64)] {
        try await sql.raw(
            "SELECT bundle_id, last_played_at FROM played_games WHERE player_id = \(bind: playerID) ORDER BY last_played_at DESC"
        ).all().map { (try $0.string("bundle_id"), try $0.int("last_played_at")) }
    }

    /// The real-time matches a player joined, newest first, at most `limit`.
    public func playerMatches(playerID: String, limit: Int) async throws -> [PlayerMatchRecord] {
        try await sql.raw(
            """
            SELECT m.match_id, m.bundle_id, m.state, mm.joined_at, mm.left_at
            FROM match_members mm JOIN matches m ON m.match_id = mm.match_id
            WHERE mm.player_id = \(bind: playerID) ORDER BY mm.joined_at DESC LIMIT \(bind: Int64(limit))
            """
        ).all().map { row in
            PlayerMatchRecord(
                matchID: try row.string("match_id"), bundleID: try row.string("bundle_id"), state: try row.string("state"),
                joinedAt: try row.int("joined_at"), leftAt: try row.optionalInt("left_at"))
        }
    }

    /// The match invitations a player sent or received, newest first, at most `limit`.
    public func playerInvitations(playerID: String, limit: Int) async throws -> [PlayerInvitationRecord] {
        try await sql.raw(
            """
            SELECT invitation_id, bundle_id, inviter, invitee, state, created_at FROM invitations
            WHERE inviter = \(bind: playerID) OR invitee = \(bind: playerID) ORDER BY created_at DESC LIMIT \(bind: Int64(limit))
            """
        ).all().map { row in
            PlayerInvitationRecord(
                invitationID: try row.string("invitation_id"), bundleID: try row.string("bundle_id"), inviter: try row.string("inviter"),
                invitee: try row.string("invitee"), state: try row.string("state"), createdAt: try row.int("created_at"))
        }
    }

    // MARK: Audit log

    /// The audit log newest first, of one game (`bundleID`, `""` for the studio-wide entries) or of all when nil, and
    /// of one actor when `actor` is given: the entries before `before` (all when nil), at most `limit`.
    public func auditEntries(bundleID: String?, actor: String? = nil, before: Int64?, limit: Int) async throws -> [AuditEntry] {
        if let actor {
            // One actor's entries (of one game when `bundleID` is given): a console user's, the command line's.
            return try await sql.raw(
                """
                SELECT entry_id, bundle_id, actor, action, subject, detail, created_at FROM audit_log
                WHERE actor = \(bind: actor) AND (\(bind: bundleID == nil ? 1 : 0) = 1 OR bundle_id = \(bind: bundleID ?? ""))
                AND entry_id < \(bind: before ?? Int64.max) ORDER BY entry_id DESC LIMIT \(bind: Int64(limit))
                """
            ).all().map(Self.auditEntry(from:))
        }
        guard let bundleID else {
            return try await sql.raw(
                """
                SELECT entry_id, bundle_id, actor, action, subject, detail, created_at FROM audit_log
                WHERE entry_id < \(bind: before ?? Int64.max) ORDER BY entry_id DESC LIMIT \(bind: Int64(limit))
                """
            ).all().map(Self.auditEntry(from:))
        }
        return try await auditLog(bundleID: bundleID, before: before, limit: limit)
    }

    static func auditEntry(from row: any SQLRow) throws -> AuditEntry {
        AuditEntry(
            entryID: try row.int("entry_id"), bundleID: try row.string("bundle_id"), actor: try row.string("actor"),
            action: try row.string("action"), subject: try row.string("subject"), detail: try row.string("detail"),
            createdAt: try row.int("created_at"))
    }

    static func consoleUser(from row: any SQLRow) throws -> ConsoleUserRecord {
        ConsoleUserRecord(
            name: try row.string("name"), role: try row.string("role"), passwordHash: try row.string("password_hash"),
            createdAt: try row.int("created_at"), disabledAt: try row.optionalInt("disabled_at"))
    }
}
