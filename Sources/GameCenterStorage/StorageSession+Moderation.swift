import SQLKit

/// One entry of the studio's audit log.
public struct AuditEntry: Sendable, Equatable {
    public var entryID: Int64
    public var bundleID: String
    /// `admin`, or the id of the server key that acted.
    public var actor: String
    /// What was done, such as `player.hidden`.
    public var action: String
    /// To what (a player id, a key id, an endpoint id).
    public var subject: String
    /// Details as JSON (`{}` for none).
    public var detail: String
    public var createdAt: Int64

    public init(entryID: Int64 = 0, bundleID: String, actor: String, action: String, subject: String, detail: String, createdAt: Int64) {
        self.entryID = entryID
        self.bundleID = bundleID
        self.actor = actor
        self.action = action
        self.subject = subject
        self.detail = detail
        self.createdAt = createdAt
    }
}

extension StorageSession {
    /// Hides a player from a game's boards; false when they were hidden already.
    public func hidePlayer(bundleID: String, playerID: String, now: Int64) async throws -> Bool {
        try await sql.raw(
            """
            INSERT INTO hidden_players (bundle_id, player_id, hidden_at) VALUES (\(bind: bundleID), \(bind: playerID), \(bind: now))
            ON CONFLICT DO NOTHING RETURNING player_id
            """
        ).all().count == 1
    }

    /// Shows a hidden player again; false when they were not hidden.
    public func unhidePlayer(bundleID: String, playerID: String) async throws -> Bool {
        try await sql.raw(
            "DELETE FROM hidden_players WHERE bundle_id = \(bind: bundleID) AND player_id = \(bind: playerID) RETURNING player_id"
        ).all().count == 1
    }

    /// Every hidden player, by game.
    public func hiddenPlayers() async throws -> [String: Set<String>] {
        var hidden: [String: Set<String>] = [:]
        for row in try await sql.raw("SELECT bundle_id, player_id FROM hidden_players").all() {
            hidden[try row.string("bundle_id"), default: []].insert(try row.string("player_id"))
        }
        return hidden
    }

    /// Appends an entry to the audit log.
    public func appendAudit(_ entry: AuditEntry) async throws {
        try await sql.raw(
            """
            INSERT INTO audit_log (bundle_id, actor, action, subject, detail, created_at)
            VALUES (\(bind: entry.bundleID), \(bind: entry.actor), \(bind: entry.action), \(bind: entry.subject), \(bind: entry.detail),
                \(bind: entry.createdAt))
            """
        ).run()
    }

    /// A game's audit log, newest first: the entries before `before` (all when nil), at most `limit`.
    public func auditLog(bundleID: String, before: Int64?, limit: Int) async throws -> [AuditEntry] {
        try await sql.raw(
            """
            SELECT entry_id, bundle_id, actor, action, subject, detail, created_at FROM audit_log
            WHERE bundle_id = \(bind: bundleID) AND entry_id < \(bind: before ?? Int64.max) ORDER BY entry_id DESC LIMIT \(bind: Int64(limit))
            """
        ).all().map { row in
            AuditEntry(
                entryID: try row.int("entry_id"), bundleID: try row.string("bundle_id"), actor: try row.string("actor"),
                action: try row.string("action"), subject: try row.string("subject"), detail: try row.string("detail"),
                createdAt: try row.int("created_at"))
        }
    }
}
