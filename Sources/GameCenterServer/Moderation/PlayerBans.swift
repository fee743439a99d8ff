import Foundation
import GameCenterProtocol
import GameCenterStorage

/// Banning players from the whole server, and lifting bans: stored with the audit entry in one write. A ban ends
/// every session of the player at once (their realtime channels and live pages close on every node), and
/// ``AccountService`` refuses their sign-ins — by password or through a game's device sign-in — with `account.banned`.
struct PlayerBans: Sendable {
    let database: Database
    let accounts: AccountService
    let clock: ServerClock

    /// Bans `playerID` for `reason`; `actor` is who asked (for the audit log). Returns whether they were not banned
    /// already, and how many sessions ended.
    func ban(playerID: String, reason: String, actor: String) async throws -> (changed: Bool, sessionsEnded: Int) {
        let now = clock.nowMillis()
        let reason = String(reason.trimmingCharacters(in: .whitespacesAndNewlines).prefix(500))
        let changed = try await database.write { storage -> Bool in
            // Sessions being opened for the player are stored before this goes on, and are listed below.
            guard try await storage.lockPlayer(id: playerID, for: .closingAccess) else { throw APIError.unknownPlayers([String(playerID.prefix(100))]) }
            let changed = try await storage.insertPlayerBan(PlayerBanRecord(playerID: playerID, reason: reason, bannedBy: actor, bannedAt: now))
            if changed {
                try await storage.appendAudit(
                    AuditLog.entry(bundleID: "", actor: actor, action: "player.banned", subject: playerID, detail: ["reason": reason], now: now))
            }
            return changed
        }
        // Every session opened before the ban was stored ends: a session's write checks the ban holding the player's row
        // (``AccountService``), so it either finished before the ban's write went on, or saw the ban.
        let ended = try await accounts.endSessions(playerID: playerID, reason: "banned")
        return (changed, ended)
    }

    /// Lifts the player's ban; returns false when they were not banned.
    func unban(playerID: String, actor: String) async throws -> Bool {
        let now = clock.nowMillis()
        return try await database.write { storage in
            guard try await storage.player(id: playerID) != nil else { throw APIError.unknownPlayers([String(playerID.prefix(100))]) }
            let changed = try await storage.deletePlayerBan(playerID: playerID)
            if changed {
                try await storage.appendAudit(AuditLog.entry(bundleID: "", actor: actor, action: "player.unbanned", subject: playerID, detail: [:], now: now))
            }
            return changed
        }
    }

    /// The player's ban, if any.
    func ban(of playerID: String) async throws -> PlayerBanRecord? {
        try await database.read { try await $0.playerBan(playerID: playerID) }
    }
}
