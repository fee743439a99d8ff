import GameCenterProtocol
import Hummingbird

/// The studio's view of one player's waiting match request (why it still waits, as the player sees it): for the admin
/// key (`GET /admin/v1/games/{bundleID}/matchmaking/players/{playerID}/request?environment=`) and for server keys with
/// `players:read` (`GET /server/v1/matchmaking/players/{playerID}/request`, the key's game and environment). On several
/// nodes the node that owns the game's queue answers.
struct MatchmakingStudioRoutes {
    let matchmaking: MatchmakingService
    let registry: GameRegistry

    func addAdmin(to group: RouterGroup<AppRequestContext>) {
        group.get("games/{bundleID}/matchmaking/players/{playerID}/request") { request, context -> MatchRequestStatus in
            let bundleID = try context.parameters.require("bundleID")
            guard let game = registry.game(bundleID: bundleID) else { throw APIError.unknownGame(bundleID) }
            let environment = try QueryParameter.choice(
                request.uri.queryParameters["environment"], as: Environment.self, name: "environment", default: .sandbox)
            return try await matchmaking.waitingRequest(
                playerID: context.parameters.requirePlayerID(), bundleID: game.bundleID, environment: environment.rawValue)
        }
    }

    func addServer(to group: RouterGroup<AppRequestContext>) {
        group.get("matchmaking/players/{playerID}/request") { _, context -> MatchRequestStatus in
            let caller = try context.requireServerCaller()
            try caller.require(.playersRead)
            return try await matchmaking.waitingRequest(
                playerID: context.parameters.requirePlayerID(), bundleID: caller.game.bundleID, environment: caller.environment.rawValue)
        }
    }
}
