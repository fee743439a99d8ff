import GameCenterProtocol
import GameCenterStorage

/// Deleting a player's account for good: their scores leave every board at once (on every node, as an erasure does),
/// every record of theirs is deleted in one write with a tombstone in its place (so no import or restored archive
/// brings them back), their sessions end, and the studio-wide audit log and each game they played have an
/// `account.deleted` entry.
struct AccountDeletionService: Sendable {
    let database: Database
    let accounts: AccountService
    let leaderboards: LeaderboardService
    let registry: GameRegistry
    let clock: ServerClock

    /// Deletes `playerID`'s account; `actor` is who asked (`admin`, a console user). Unknown players are refused.
    func delete(playerID: String, actor: String) async throws {
        let now = clock.nowMillis()
        let (sessions, played) = try await database.read { storage in
            guard !(try await storage.players(ids: [playerID], environment: nil)).isEmpty else { throw APIError.unknownPlayers([String(playerID.prefix(100))]) }
            return (
                try await storage.activeSessions(playerID: playerID, now: now).map(\.sessionID),
                try await storage.gamesWithRecords(playerID: playerID)
            )
        }
        for game in registry.all where played.contains(game.bundleID) {
            _ = try await leaderboards.removeScores(game: game, playerID: playerID)
        }
        let deleted = try await database.write { storage in
            guard try await storage.deleteAccount(playerID: playerID, now: now) else { return false }
            // The studio-wide log (no game), and each game's.
            for bundleID in [""] + played.sorted() {
                try await storage.appendAudit(
                    AuditLog.entry(bundleID: bundleID, actor: actor, action: "account.deleted", subject: playerID, detail: [:], now: now))
            }
            return true
        }
        guard deleted else { throw APIError.unknownPlayers([String(playerID.prefix(100))]) }
        accounts.endSessions(sessions, reason: "account deleted")
    }
}
