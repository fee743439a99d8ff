import GameCenterProtocol
import Hummingbird

/// HTTP for leaderboards: the list, score reports and pages.
struct LeaderboardRoutes {
    let leaderboards: LeaderboardService

    func addAuthenticated(to group: RouterGroup<AppRequestContext>) {
        group.get("leaderboards") { _, context -> LeaderboardList in
            leaderboards.list(device: try context.requireDevice())
        }
        group.post("leaderboards/query") { request, context -> LeaderboardPage in
            let query = try await request.decode(as: LeaderboardQuery.self, context: context)
            return try await leaderboards.page(query, device: context.requireDevice(), session: context.requireSession())
        }
        group.post("scores") { request, context -> ScoreReportResult in
            let batch = try await request.decode(as: ScoreReportBatch.self, context: context)
            return try await leaderboards.report(batch, device: context.requireDevice(), session: context.requireSession())
        }
    }
}

extension LeaderboardList: ResponseEncodable {}
extension LeaderboardPage: ResponseEncodable {}
extension ScoreReportResult: ResponseEncodable {}
