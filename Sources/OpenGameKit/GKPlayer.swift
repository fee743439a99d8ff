import Foundation
import GameCenterProtocol

/// A Game Center player as the local player may see them.
public class GKPlayer: @unchecked Sendable, CustomStringConvertible {
    // `@unchecked Sendable`: immutable (one `let` of a Sendable struct); only non-final (GKLocalPlayer subclasses it).
    private let profile: PlayerProfile

    init(profile: PlayerProfile) {
        self.profile = profile
    }

    /// Opaque and permanent; never derived from the account name and not meant to be shown to people.
    public var playerID: String { profile.playerID }
    /// The name the player chose to be shown as; it can change.
    public var alias: String { profile.alias }
    /// Whether this player is a friend of the local player.
    public var isFriend: Bool { profile.isFriend }
    /// The player's status message: only for friends (and the local player), otherwise nil.
    public var status: String? { profile.status }
    /// Games the player signed in to in the last 30 days, most recent first: only for friends, otherwise nil.
    /// The sandbox does not share which games friends play, as the seed says: there a friend's list is empty.
    public var recentGames: [GKRecentGame]? {
        profile.recentGames?.map { GKRecentGame(bundleID: $0.bundleID, name: $0.name, lastPlayedAt: $0.lastPlayedAt) }
    }

    public var description: String { "\(alias) (\(playerID))" }

    /// Loads players by id, in the order asked.
    ///
    /// When some ids name no player, this throws ``GKError`` with code `invalidPlayer`, and the players that were
    /// found are in the error: `error.partialResult(as: [GKPlayer].self)`. The completion-handler form passes both.
    public static func loadPlayers(forIdentifiers ids: [String], in gameCenter: GKGameCenter = .default) async throws -> [GKPlayer] {
        let response = try await gameCenter.authenticated(
            .post, "/v1/players/lookup", body: PlayerLookupRequest(playerIDs: ids),
            as: PlayerLookupResponse.self)
        let players = response.players.map(GKPlayer.init(profile:))
        guard response.unknownPlayerIDs.isEmpty else {
            throw GKError(
                .invalidPlayer, "no player with id \(response.unknownPlayerIDs.joined(separator: ", "))",
                partialResult: players)
        }
        return players
    }

    /// Loads players by id and calls `completionHandler` with the players found (possibly some) and any error,
    /// as the seed's `loadPlayersForIdentifiers:withCompletionHandler:` does.
    public static func loadPlayers(
        forIdentifiers ids: [String], in gameCenter: GKGameCenter = .default,
        completionHandler: @escaping @Sendable ([GKPlayer]?, (any Error)?) -> Void
    ) {
        CompletionHandler.run(completionHandler) { try await loadPlayers(forIdentifiers: ids, in: gameCenter) }
    }
}

/// A game a player signed in to recently.
public struct GKRecentGame: Sendable, Equatable {
    public var bundleID: String
    public var name: String
    public var lastPlayedAt: Date
}
