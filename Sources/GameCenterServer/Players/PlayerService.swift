import Foundation
import GameCenterProtocol
import GameCenterStorage

/// Loads players as the caller may see them: alias for anyone, status and recent games for friends only.
///
/// The sandbox does not share which games friends play (the seed): there a friend's recent games are empty, and
/// only the caller's own are shown.
struct PlayerService: Sendable {
    /// Games played within this many seconds count as recent.
    static let recentWindow: TimeInterval = 30 * 24 * 3600
    /// Recent games shown per player.
    static let recentLimit = 10

    let database: Database
    let registry: GameRegistry
    let cache: PlayerCache
    let clock: ServerClock

    func loadPlayers(_ ids: [String], caller: AuthenticatedSession, device: DeviceIdentity) async throws -> PlayerLookupResponse {
        // No ids is a fair question (a new player with no friends asks it): no players.
        let wanted = try PlayerIDRules.list(ids, allowingNone: true)
        guard !wanted.isEmpty else { return PlayerLookupResponse(players: [], unknownPlayerIDs: []) }
        let now = clock.nowMillis()
        var lookup = cache.lookup(wanted, viewer: caller.playerID, now: now)
        var read = PlayerCache.Read()
        if !lookup.missingPlayers.isEmpty || lookup.friends == nil {
            let (missing, needFriends) = (lookup.missingPlayers, lookup.friends == nil)
            (read.players, read.friends) = try await database.read { storage in
                let players = missing.isEmpty ? [] : try await storage.players(ids: missing, environment: nil)
                let friends = needFriends ? (caller.playerID, Set(try await storage.friendIDs(of: caller.playerID))) : nil
                return (players, friends)
            }
            for player in read.players { lookup.players[player.playerID] = player }
            if let (_, friendIDs) = read.friends { lookup.friends = friendIDs }
        }
        let friends = lookup.friends ?? []
        let environment = device.environment.rawValue
        let found = wanted.filter { lookup.players[$0]?.environment == environment }
        // Status and recent games are for friends (and oneself) only.
        let insiders = found.filter { friends.contains($0) || $0 == caller.playerID }
        let sharesGames = device.environment != .sandbox
        let (cachedGames, missingGames) = cache.playedGames(insiders.filter { sharesGames || $0 == caller.playerID }, now: now)
        var recent = cachedGames
        if !missingGames.isEmpty {
            let since = now - Int64(Self.recentWindow * 1000)
            let stored = try await database.read { try await $0.playedGames(playerIDs: missingGames, since: since, limit: Self.recentLimit) }
            for id in missingGames { read.playedGames[id] = stored[id] ?? [] }
            recent.merge(read.playedGames) { a, _ in a }
        }
        cache.store(read, readSince: lookup.generation, now: now)
        let players = found.compactMap { id -> PlayerProfile? in
            guard let player = lookup.players[id] else { return nil }
            let isFriend = friends.contains(id)
            var profile = PlayerProfile(playerID: id, alias: player.alias, isFriend: isFriend)
            if isFriend || id == caller.playerID {
                profile.status = player.status
                // In the sandbox a friend's games are not read at all, so `recent` has none.
                profile.recentGames = (recent[id] ?? []).map {
                    RecentGame(
                        bundleID: $0.bundleID, name: registry.game(bundleID: $0.bundleID)?.name ?? $0.bundleID,
                        lastPlayedAt: StoredTime.date($0.lastPlayedAt))
                }
            }
            return profile
        }
        return PlayerLookupResponse(players: players, unknownPlayerIDs: wanted.filter { lookup.players[$0]?.environment != environment })
    }
}

/// Checks on lists of player ids from the network.
enum PlayerIDRules {
    /// The ids without duplicates, in first-seen order; 1…100 ids (0…100 when `allowingNone`) of 1…64 characters.
    static func list(_ ids: [String], allowingNone: Bool = false) throws -> [String] {
        let least = allowingNone ? 0 : 1
        guard (least...Limits.maximumPlayerIDsPerRequest).contains(ids.count) else {
            throw APIError.invalidParameter("playerIDs must hold \(least) to \(Limits.maximumPlayerIDsPerRequest) player ids; it holds \(ids.count)")
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
