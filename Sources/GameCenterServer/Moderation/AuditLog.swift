import Foundation
import GameCenterProtocol
import GameCenterStorage

/// The studio's append-only audit log: every moderation action, score erasure, and change to keys and webhooks, with
/// who did it (`admin` for the admin key, a server key's id, `console:NAME` for a studio console user, `cli` for
/// `gamecenter console`). Entries that concern no one game (bans, console users) have the empty bundle id.
struct AuditLog: Sendable {
    let database: Database
    let clock: ServerClock

    /// The actor name of the admin key.
    static let admin = "admin"

    /// Appends an entry (in its own write, after the action it records).
    func record(bundleID: String, actor: String, action: String, subject: String, detail: [String: String] = [:]) async throws {
        let entry = Self.entry(bundleID: bundleID, actor: actor, action: action, subject: subject, detail: detail, now: clock.nowMillis())
        try await database.write { try await $0.appendAudit(entry) }
    }

    /// A game's entries, newest first, before `before` (an entry id), at most `limit` (1 to 1000).
    func entries(bundleID: String, before: Int64?, limit: Int) async throws -> AuditLogPage {
        guard (1...1000).contains(limit) else { throw APIError.invalidParameter("limit is 1 to 1000; got \(limit)") }
        let entries = try await database.read { try await $0.auditLog(bundleID: bundleID, before: before, limit: limit) }
        return AuditLogPage(
            entries: entries.map { entry in
                AuditLogEntry(
                    entryID: entry.entryID, actor: entry.actor, action: entry.action, subject: entry.subject,
                    detail: (try? JSONDecoder().decode([String: String].self, from: Data(entry.detail.utf8))) ?? [:],
                    createdAt: StoredTime.date(entry.createdAt))
            })
    }

    /// An entry to append, its detail encoded.
    static func entry(bundleID: String, actor: String, action: String, subject: String, detail: [String: String], now: Int64) -> AuditEntry {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let json = (try? encoder.encode(detail)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
        return AuditEntry(bundleID: bundleID, actor: actor, action: action, subject: subject, detail: json, createdAt: now)
    }
}

/// One entry of the audit log.
public struct AuditLogEntry: Codable, Sendable, Equatable {
    public var entryID: Int64
    /// `admin`, a server key's id, `console:NAME` or `cli`.
    public var actor: String
    /// `player.hidden`, `player.shown`, `scores.erased`, `key.created`, `key.rotated`, `key.revoked`, `webhook.added`,
    /// `webhook.removed`, `webhook.replayed`; from the studio console also `player.banned`, `player.unbanned`,
    /// `player.sessions_ended`, `achievements.reset`, `manifest.replaced`, `manifests.reloaded`, `console.signed_in`,
    /// `console.user_added`, `console.user_removed`.
    public var action: String
    /// The player, key or endpoint acted on.
    public var subject: String
    public var detail: [String: String]
    public var createdAt: Date
}

/// `GET …/audit-log`: newest first; page on with `before` = the last entry's id.
public struct AuditLogPage: Codable, Sendable {
    public var entries: [AuditLogEntry]
}
