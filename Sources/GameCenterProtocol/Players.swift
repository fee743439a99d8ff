import Foundation

/// `POST /v1/players/lookup`: load players by id.
public struct PlayerLookupRequest: Codable, Sendable {
    public var playerIDs: [String]

    public init(playerIDs: [String]) {
        self.playerIDs = playerIDs
    }
}

/// The players found, in the order asked, and the ids that name no player.
public struct PlayerLookupResponse: Codable, Sendable {
    public var players: [PlayerProfile]
    public var unknownPlayerIDs: [String]

    public init(players: [PlayerProfile], unknownPlayerIDs: [String]) {
        self.players = players
        self.unknownPlayerIDs = unknownPlayerIDs
    }
}

/// A player as the caller may see them: `status` and `recentGames` only for friends (and oneself).
public struct PlayerProfile: Codable, Sendable, Equatable {
    public var playerID: String
    public var alias: String
    public var isFriend: Bool
    public var status: String?
    public var recentGames: [RecentGame]?

    public init(playerID: String, alias: String, isFriend: Bool, status: String? = nil, recentGames: [RecentGame]? = nil) {
        self.playerID = playerID
        self.alias = alias
        self.isFriend = isFriend
        self.status = status
        self.recentGames = recentGames
    }
}

/// A game a player signed in to recently.
public struct RecentGame: Codable, Sendable, Equatable {
    public var bundleID: String
    public var name: String
    public var lastPlayedAt: Date

    public init(bundleID: String, name: String, lastPlayedAt: Date) {
        self.bundleID = bundleID
        self.name = name
        self.lastPlayedAt = lastPlayedAt
    }
}
