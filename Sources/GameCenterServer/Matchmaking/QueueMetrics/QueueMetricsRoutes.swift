import GameCenterProtocol
import Hummingbird

/// Admin HTTP for a rule-based queue's metrics (behind ``AdminMiddleware``):
/// `GET /admin/v1/games/{bundleID}/matchmaking/queues/{queueName}/metrics?environment=&granularity=`.
struct QueueMetricsRoutes {
    let matchmaking: MatchmakingService
    let registry: GameRegistry

    func add(to group: RouterGroup<AppRequestContext>) {
        group.get("games/{bundleID}/matchmaking/queues/{queueName}/metrics") { request, context -> QueueMetricsSeries in
            let bundleID = try context.parameters.require("bundleID")
            guard let game = registry.game(bundleID: bundleID) else { throw APIError.unknownGame(bundleID) }
            let name = try context.parameters.require("queueName")
            guard game.matchmaking.queues[name] != nil else {
                throw APIError.unknownQueue(name, known: game.matchmaking.queues.keys.sorted())
            }
            let query = request.uri.queryParameters
            let environment = try QueryParameter.choice(query["environment"], as: Environment.self, name: "environment", default: .sandbox)
            let granularity = try QueryParameter.choice(
                query["granularity"], as: QueueMetrics.Granularity.self, name: "granularity", default: .quarterHour)
            return try await matchmaking.queueMetrics.series(
                QueueMetrics.Queue(bundleID: game.bundleID, environment: environment.rawValue, queue: name), granularity: granularity,
                now: matchmaking.clock.nowMillis(), from: matchmaking.database)
        }
    }
}

extension QueueMetricsSeries: ResponseEncodable {}
