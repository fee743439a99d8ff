import Foundation
import GameCenterProtocol
import GameCenterStorage

/// Hiding players from every board of a game, and showing them again: stored with its audit entry in one write,
/// applied on this node at once and on every other within a second (``HiddenPlayerFollower``). A hidden player's
/// reports are kept and accepted, never ranked; shown again, their best scores are ranked again.
struct ModerationService: Sendable {
    let database: Database
    let index: LeaderboardIndex
    let clock: ServerClock

    /// Hides `playerID` from `game`'s boards (or shows them again); `actor` is who asked (for the audit log).
    func setHidden(_ hidden: Bool, playerID: String, game: Game, actor: String) async throws -> HiddenPlayerState {
        let now = clock.nowMillis()
        let bundleID = game.bundleID
        let changed = try await database.write { storage -> Bool? in
            guard !(try await storage.players(ids: [playerID], environment: nil)).isEmpty else { return nil }
            let changed =
                hidden
                ? try await storage.hidePlayer(bundleID: bundleID, playerID: playerID, now: now)
                : try await storage.unhidePlayer(bundleID: bundleID, playerID: playerID)
            if changed {
                try await storage.appendAudit(
                    AuditLog.entry(
                        bundleID: bundleID, actor: actor, action: hidden ? "player.hidden" : "player.shown", subject: playerID, detail: [:], now: now))
            }
            return changed
        }
        guard let changed else { throw APIError.unknownPlayers([String(playerID.prefix(100))]) }
        if index.hidden.set(playerID, in: bundleID, hidden: hidden) {
            if hidden {
                index.hide(playerID: playerID, bundleID: bundleID)
            } else {
                try await index.show(playerID: playerID, bundleID: bundleID) {
                    try await database.read { try await $0.boardScores(playerID: playerID, bundleID: bundleID) }
                }
            }
        }
        return HiddenPlayerState(playerID: playerID, hidden: hidden, changed: changed)
    }
}

/// The answer to hiding or showing a player.
public struct HiddenPlayerState: Codable, Sendable, Equatable {
    public var playerID: String
    /// Whether the player is now hidden.
    public var hidden: Bool
    /// False when they were so already.
    public var changed: Bool
}
