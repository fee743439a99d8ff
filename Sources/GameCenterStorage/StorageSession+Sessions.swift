import SQLKit

extension StorageSession {
    /// Stores a new session.
    public func insertSession(_ session: SessionRecord) async throws {
        try await sql.raw(
            """
            INSERT INTO sessions (session_id, token_hash, player_id, bundle_id, environment, created_at, expires_at, revoked_at)
            VALUES (\(bind: session.sessionID), \(bind: session.tokenHash), \(bind: session.playerID), \(bind: session.bundleID),
                    \(bind: session.environment), \(bind: session.createdAt), \(bind: session.expiresAt), \(bind: session.revokedAt))
            """
        ).run()
    }

    /// The session whose token hashes to `tokenHash`, revoked or not.
    public func session(tokenHash: String) async throws -> SessionRecord? {
        try await sql.raw("SELECT * FROM sessions WHERE token_hash = \(bind: tokenHash)").first().map(Self.session(from:))
    }

    /// The session with this id, revoked or not.
    public func session(id: String) async throws -> SessionRecord? {
        try await sql.raw("SELECT * FROM sessions WHERE session_id = \(bind: id)").first().map(Self.session(from:))
    }

    /// A player's sessions that are neither revoked nor expired at `now`.
    public func activeSessions(playerID: String, now: Int64) async throws -> [SessionRecord] {
        try await sql.raw(
            """
            SELECT * FROM sessions WHERE player_id = \(bind: playerID) AND revoked_at IS NULL AND expires_at > \(bind: now)
            ORDER BY created_at
            """
        ).all().map(Self.session(from:))
    }

    /// Revokes one of a player's sessions; returns false when there was no such active session.
    public func revokeSession(sessionID: String, playerID: String, now: Int64) async throws -> Bool {
        try await sql.raw(
            """
            UPDATE sessions SET revoked_at = \(bind: now)
            WHERE session_id = \(bind: sessionID) AND player_id = \(bind: playerID) AND revoked_at IS NULL
            RETURNING session_id
            """
        ).first() != nil
    }

    /// Revokes all of a player's active sessions but `keeping`; returns the revoked session ids.
    public func revokeSessions(playerID: String, keeping: String?, now: Int64) async throws -> [String] {
        try await sql.raw(
            """
            UPDATE sessions SET revoked_at = \(bind: now)
            WHERE player_id = \(bind: playerID) AND revoked_at IS NULL AND session_id <> \(bind: keeping ?? "")
            RETURNING session_id
            """
        ).all().map { try $0.string("session_id") }
    }

    static func session(from row: any SQLRow) throws -> SessionRecord {
        SessionRecord(
            sessionID: try row.string("session_id"), tokenHash: try row.string("token_hash"),
            playerID: try row.string("player_id"), bundleID: try row.string("bundle_id"),
            environment: try row.string("environment"), createdAt: try row.int("created_at"),
            expiresAt: try row.int("expires_at"), revokedAt: try row.optionalInt("revoked_at")
        )
    }
}
