import Foundation
import GameCenterProtocol

/// A named group of a game's leaderboards, as the game's manifest declares it (`leaderboardSets`): classic and
/// recurring boards mixed, a board in several sets at will.
public final class GKLeaderboardSet: Sendable {
    /// The set's identifier in the manifest.
    public let identifier: String
    /// Its title in the device's locale.
    public let title: String
    /// Sets of several games that share boards name one group.
    public let groupIdentifier: String?
    /// The categories of its leaderboards, in manifest order (hidden ones left out).
    public let leaderboardIDs: [String]
    private let gameCenter: GKGameCenter

    init(_ info: LeaderboardSetInfo, in gameCenter: GKGameCenter) {
        identifier = info.identifier
        title = info.title
        groupIdentifier = info.groupIdentifier
        leaderboardIDs = info.leaderboards
        self.gameCenter = gameCenter
    }

    /// The game's leaderboard sets, in manifest order.
    public static func loadLeaderboardSets(in gameCenter: GKGameCenter = .default) async throws -> [GKLeaderboardSet] {
        let list = try await gameCenter.authenticated(.get, "/v1/leaderboard-sets", as: LeaderboardSetList.self)
        return list.sets.map { GKLeaderboardSet($0, in: gameCenter) }
    }

    /// Loads ``loadLeaderboardSets(in:)`` and calls `completionHandler` with the sets or the error.
    public static func loadLeaderboardSets(
        in gameCenter: GKGameCenter = .default, completionHandler: @escaping @Sendable ([GKLeaderboardSet]?, (any Error)?) -> Void
    ) {
        CompletionHandler.run(completionHandler) { try await loadLeaderboardSets(in: gameCenter) }
    }

    /// The set's leaderboards, in the set's order, with their type, description and current occurrence.
    public func loadLeaderboards() async throws -> [GKLeaderboard] {
        let boards = try await GKLeaderboard.loadLeaderboards(IDs: leaderboardIDs, in: gameCenter)
        let position = Dictionary(uniqueKeysWithValues: leaderboardIDs.enumerated().map { ($1, $0) })
        return boards.sorted { (position[$0.category ?? ""] ?? 0) < (position[$1.category ?? ""] ?? 0) }
    }

    /// Loads ``loadLeaderboards()`` and calls `completionHandler` with the leaderboards or the error.
    public func loadLeaderboards(completionHandler: @escaping @Sendable ([GKLeaderboard]?, (any Error)?) -> Void) {
        CompletionHandler.run(completionHandler) { try await self.loadLeaderboards() }
    }
}
