import Foundation
import GameCenterProtocol
import GameCenterStorage

/// Loads players as the caller may see them: alias for anyone, status and recent games for friends only.
struct PlayerService: Sendable {
    /// Games played within this many seconds count as recent.
    static let recentWindow: TimeInterval = 30 * 24 * 3600
    /// Recent games shown per player.
    static let recentLimit = 10

    let database: Database
    let registry: GameRegistry
    let clock: @Sendable () -> Date

    func loadPlayers(_ ids: [String], caller: AuthenticatedSession, device: DeviceIdentity) async throws -> PlayerLookupResponse {
        let wanted = try PlayerIDRules.list(ids)
        let since = Clock.millis(clock()) - Int64(Self.recentWindow * 1000)
        return try await database.read { storage in
            let found = try await storage.players(ids: wanted, environment: device.environment.rawValue, asSeenBy: caller.playerID)
            let byID = Dictionary(uniqueKeysWithValues: found.map { ($0.player.playerID, $0) })
            // Status and recent games are for friends (and oneself) only.
            let insiders = found.filter { $0.isFriend || $0.player.playerID == caller.playerID }.map(\.player.playerID)
            let recent = try await storage.playedGames(playerIDs: insiders, since: since, limit: Self.recentLimit)
            let players = wanted.compactMap { id -> PlayerProfile? in
                guard let (player, isFriend) = byID[id] else { return nil }
                var profile = PlayerProfile(playerID: id, alias: player.alias, isFriend: isFriend)
                if isFriend || id == caller.playerID {
                    profile.status = player.status
                    profile.recentGames = (recent[id] ?? []).map {
                        RecentGame(bundleID: $0.bundleID, name: registry.game(bundleID: $0.bundleID)?.name ?? $0.bundleID,
                                   lastPlayedAt: Clock.date($0.lastPlayedAt))
                    }
                }
                return profile
            }
            return PlayerLookupResponse(players: players, unknownPlayerIDs: wanted.filter { byID[$0] == nil })
        }
    }
}

/// Checks on lists of player ids from the network.
enum PlayerIDRules {
    /// The ids without duplicates, in first-seen order; 1…100 ids of 1…64 characters.
    static func list(_ ids: [String]) throws -> [String] {
        guard (1...Limits.maximumPlayerIDsPerRequest).contains(ids.count) else {
            throw APIError.invalidParameter("playerIDs must hold 1 to \(Limits.maximumPlayerIDsPerRequest) player ids; it holds \(ids.count)")
        }
        var seen = Set<String>()
        var result: [String] = []
        for id in ids {
            guard (1...64).contains(id.count) else { throw APIError.invalidParameter("player ids are 1 to 64 characters") }
            if seen.insert(id).inserted { result.append(id) }
        }
        return result
    }
}
