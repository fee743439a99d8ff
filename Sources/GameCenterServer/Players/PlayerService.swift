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
            let found = try await storage.players(ids: wanted, environment: device.environment.rawValue)
            let friends = try await storage.friends(of: caller.playerID, among: found.map(\.playerID))
            let byID = Dictionary(uniqueKeysWithValues: found.map { ($0.playerID, $0) })
            var players: [PlayerProfile] = []
            for id in wanted {
                guard let player = byID[id] else { continue }
                let isFriend = friends.contains(id)
                var profile = PlayerProfile(playerID: id, alias: player.alias, isFriend: isFriend)
                if isFriend || id == caller.playerID {
                    profile.status = player.status
                    profile.recentGames = try await storage.playedGames(playerID: id, since: since, limit: Self.recentLimit).map {
                        RecentGame(bundleID: $0.bundleID, name: registry.game(bundleID: $0.bundleID)?.name ?? $0.bundleID,
                                   lastPlayedAt: Clock.date($0.lastPlayedAt))
                    }
                }
                players.append(profile)
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
