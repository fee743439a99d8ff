import GameCenterProtocol
import GameCenterStorage
import Logging
import ServiceLifecycle

/// Keeps this node's boards in step with the players hidden on any node: reads the hidden players from storage every
/// half second, takes newly hidden ones off the boards and puts those shown again back.
struct HiddenPlayerFollower: Service {
    let database: Database
    let index: LeaderboardIndex
    let logger: Logger

    static let interval: Duration = .milliseconds(500)

    func run() async throws {
        await cancelWhenGracefulShutdown {
            while (try? await Task.sleep(for: Self.interval)) != nil {
                do {
                    try await follow()
                } catch {
                    logger.warning("reading the hidden players failed; trying again", metadata: [LogKey.error: "\(error)"])
                }
            }
        }
    }

    func follow() async throws {
        let changes = index.hidden.changes
        let stored = try await database.read { try await $0.hiddenPlayers() }
        // A hide or show made on this node while storage was read is newer than what was read: wait for the next read.
        guard let (hidden, shown) = index.hidden.replace(with: stored, readAfter: changes) else { return }
        for player in hidden { index.hide(playerID: player.playerID, bundleID: player.bundleID) }
        for player in shown {
            try await index.show(playerID: player.playerID, bundleID: player.bundleID) {
                try await database.read { try await $0.boardScores(playerID: player.playerID, bundleID: player.bundleID) }
            }
        }
    }
}
