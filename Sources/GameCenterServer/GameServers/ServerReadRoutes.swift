import Foundation
import GameCenterProtocol
import GameCenterStorage
import Hummingbird

/// What App Store Connect's API lacks and a studio's game server needs: reading a player of the key's game and
/// environment, with their best score and rank on every leaderboard and their achievements
/// (`GET /server/v1/players/{playerID}`, permission `players:read`).
struct ServerReadRoutes {
    let leaderboards: LeaderboardService
    let achievements: AchievementService
    let database: Database

    func add(to group: RouterGroup<AppRequestContext>) {
        group.get("players/{playerID}") { _, context -> ServerPlayerReport in
            let caller = try context.requireServerCaller()
            try caller.require(.playersRead)
            let playerID = try context.parameters.requirePlayerID()
            let environment = caller.environment.rawValue
            guard let player = try await database.read({ try await $0.players(ids: [playerID], environment: environment) }).first else {
                throw APIError.unknownPlayers([String(playerID.prefix(100))])
            }
            let device = DeviceIdentity(game: caller.game, environment: caller.environment, locale: caller.game.defaultLocale)
            let progress = try await achievements.progress(device: device, playerID: playerID)
            return ServerPlayerReport(
                playerID: player.playerID, alias: player.alias, environment: caller.environment,
                scores: try await leaderboards.standings(of: playerID, game: caller.game, environment: caller.environment),
                achievements: progress.achievements, achievementPoints: progress.points)
        }
    }
}

/// `GET /server/v1/players/{playerID}`: a player as the studio's game server sees them.
public struct ServerPlayerReport: Codable, Sendable {
    public var playerID: String
    public var alias: String
    public var environment: GameCenterProtocol.Environment
    /// Their best score on each leaderboard they have one on, with its all-time rank (a recurring board's running
    /// occurrence).
    public var scores: [ScoreEntry]
    /// Their progress on each achievement they reported.
    public var achievements: [AchievementProgress]
    /// The points of their completed achievements.
    public var achievementPoints: Int
}

extension ServerPlayerReport: ResponseEncodable {}
