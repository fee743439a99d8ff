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
    /// found are in the error: `error.partialResult(as: [GKPlayer].self)`. When the server cannot be reached (or is
    /// failing), the error carries the players of `ids` this device loaded before for the signed-in player, as they
    /// were then — possibly some, in the order asked, or nil when it knows none — as the seed's partial array. The
    /// completion-handler form passes both.
    public static func loadPlayers(forIdentifiers ids: [String], in gameCenter: GKGameCenter = .default) async throws -> [GKPlayer] {
        let viewer = gameCenter.state.withLock { $0.session?.player.playerID }
        let response: PlayerLookupResponse
        do {
            response = try await gameCenter.authenticated(
                .post, "/v1/players/lookup", body: PlayerLookupRequest(playerIDs: ids), as: PlayerLookupResponse.self)
        } catch var error as GKError {
            if error.isTransient, let viewer {
                let known = gameCenter.state.withLock { $0.knownPlayers.profiles(ids, seenBy: viewer) }
                if !known.isEmpty { error.partialResult = known.map(GKPlayer.init(profile:)) }
            }
            throw error
        }
        if let viewer { gameCenter.state.withLock { $0.knownPlayers.keep(response.players, seenBy: viewer) } }
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

/// The players this device loaded, as each signed-in player saw them: what ``GKPlayer/loadPlayers(forIdentifiers:in:)``
/// returns with its error when the server cannot be reached. Bounded: past ``limit`` profiles, arbitrary ones are
/// forgotten.
struct KnownPlayers: Sendable {
    /// The most profiles kept.
    static let limit = 10_000

    private struct Key: Hashable, Sendable {
        var viewer: String
        var playerID: String
    }

    private var profiles: [Key: PlayerProfile] = [:]

    /// Keeps `loaded`, as `viewer` saw them.
    mutating func keep(_ loaded: [PlayerProfile], seenBy viewer: String) {
        for profile in loaded {
            let key = Key(viewer: viewer, playerID: profile.playerID)
            if profiles[key] == nil, profiles.count >= Self.limit, let any = profiles.keys.first { profiles[any] = nil }
            profiles[key] = profile
        }
    }

    /// The kept profiles of `ids` as `viewer` saw them, in the order of `ids`; ids not kept are left out.
    func profiles(_ ids: [String], seenBy viewer: String) -> [PlayerProfile] {
        ids.compactMap { profiles[Key(viewer: viewer, playerID: $0)] }
    }
}
