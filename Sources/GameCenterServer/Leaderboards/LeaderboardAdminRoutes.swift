import GameCenterProtocol
import Hummingbird

/// Admin HTTP for leaderboards (behind ``AdminMiddleware``): read any board and its occurrence events, grant a
/// tournament's attempts, end its running occurrence early or start its next one now, erase a cheater's scores.
struct LeaderboardAdminRoutes {
    let leaderboards: LeaderboardService
    let registry: GameRegistry
    let audit: AuditLog

    func add(to group: RouterGroup<AppRequestContext>) {
        group.get("games/{bundleID}/leaderboards/{category}") { request, context -> AdminLeaderboardPage in
            let game = try game(context)
            let query = request.uri.queryParameters
            let environment = try QueryParameter.choice(query["environment"], as: Environment.self, name: "environment", default: .sandbox)
            let timeScope = try QueryParameter.choice(query["timeScope"], as: LeaderboardTimeScope.self, name: "timeScope", default: .allTime)
            let start = try QueryParameter.integer(query["rangeStart"], name: "rangeStart", default: 1)
            let length = try QueryParameter.integer(query["rangeLength"], name: "rangeLength", default: Limits.maximumLeaderboardRange)
            return try await leaderboards.adminPage(
                game: game, environment: environment, category: context.parameters.require("category"),
                timeScope: timeScope, rangeStart: start, rangeLength: length, locale: query["locale"].map(String.init) ?? game.defaultLocale)
        }
        group.get("games/{bundleID}/occurrence-events") { request, context -> LeaderboardOccurrenceEventList in
            let game = try game(context)
            let query = request.uri.queryParameters
            let after = try QueryParameter.integer(query["after"], name: "after", default: 0)
            let limit = try QueryParameter.integer(query["limit"], name: "limit", default: 100)
            guard (1...1000).contains(limit) else { throw APIError.invalidParameter("limit is 1 to 1000; got \(limit)") }
            return try await leaderboards.occurrenceEvents(game: game, after: Int64(after), limit: limit)
        }
        group.post("games/{bundleID}/leaderboards/{category}/players/{playerID}/attempts") { request, context -> TournamentEntry in
            let grant = try await request.decode(as: TournamentAttemptGrant.self, context: context)
            return try await leaderboards.grantAttempts(
                game: game(context), environment: grant.environment ?? .sandbox, category: context.parameters.require("category"),
                playerID: context.parameters.requirePlayerID(), extra: grant.extra)
        }
        group.post("games/{bundleID}/leaderboards/{category}/end") { request, context -> LeaderboardOccurrenceEvent in
            let body = try await request.decode(as: TournamentEndBody.self, context: context)
            return try await leaderboards.endTournament(
                game: game(context), environment: body.environment ?? .sandbox, category: context.parameters.require("category"))
        }
        group.post("games/{bundleID}/leaderboards/{category}/start") { request, context -> LeaderboardOccurrenceEvent in
            let body = try await request.decode(as: TournamentStartBody.self, context: context)
            return try await leaderboards.startTournament(
                game: game(context), environment: body.environment ?? .sandbox, category: context.parameters.require("category"))
        }
        group.delete("games/{bundleID}/players/{playerID}/scores") { _, context -> RemovedScores in
            let game = try game(context)
            let playerID = try context.parameters.requirePlayerID()
            let removed = try await leaderboards.removeScores(game: game, playerID: playerID)
            try await audit.record(
                bundleID: game.bundleID, actor: AuditLog.admin, action: "scores.erased", subject: playerID, detail: ["reports": "\(removed)"])
            return RemovedScores(removed: removed)
        }
    }

    private func game(_ context: AppRequestContext) throws -> Game {
        let bundleID = try context.parameters.require("bundleID")
        guard let game = registry.game(bundleID: bundleID) else { throw APIError.unknownGame(bundleID) }
        return game
    }
}

extension AdminLeaderboardPage: ResponseEncodable {}
extension RemovedScores: ResponseEncodable {}
extension LeaderboardOccurrenceEventList: ResponseEncodable {}
extension LeaderboardOccurrenceEvent: ResponseEncodable {}

extension APIError {
    static func unknownGame(_ bundleID: String) -> APIError {
        APIError(.adminUnknownGame, "this server has no game '\(bundleID.prefix(200))'")
    }
}
