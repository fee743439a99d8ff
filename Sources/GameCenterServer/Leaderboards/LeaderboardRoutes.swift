import GameCenterProtocol
import Hummingbird

/// HTTP for leaderboards: the list, score reports and pages.
struct LeaderboardRoutes {
    let leaderboards: LeaderboardService

    func addAuthenticated(to group: RouterGroup<AppRequestContext>) {
        group.get("leaderboards") { _, context -> LeaderboardList in
            leaderboards.list(device: try context.requireDevice())
        }
        group.get("leaderboard-sets") { _, context -> LeaderboardSetList in
            leaderboards.sets(device: try context.requireDevice())
        }
        group.post("leaderboards/{category}/entry") { _, context -> TournamentEntry in
            try await leaderboards.joinTournament(
                context.parameters.require("category"), device: context.requireDevice(), session: context.requireSession())
        }
        group.get("leaderboards/{category}/entry") { _, context -> TournamentEntry in
            try await leaderboards.tournamentEntry(
                context.parameters.require("category"), device: context.requireDevice(), session: context.requireSession())
        }
        group.post("leaderboards/query") { request, context -> LeaderboardPage in
            let query = try await request.decode(as: LeaderboardQuery.self, context: context)
            return try await leaderboards.page(query, device: context.requireDevice(), session: context.requireSession())
        }
        group.post("scores") { request, context -> ScoreReportResult in
            let batch = try await request.decode(as: ScoreReportBatch.self, context: context)
            return try await leaderboards.report(
                batch, deviceTime: request.headers[.deviceTime], device: context.requireDevice(), session: context.requireSession())
        }
    }
}

extension LeaderboardList: ResponseEncodable {}
extension LeaderboardSetList: ResponseEncodable {}
extension TournamentEntry: ResponseEncodable {}

// Pages and report answers are sent many times a second: they write their own JSON (see JSONWriter).

extension LeaderboardPage: ResponseGenerator, JSONWritable {
    public func response(from request: Request, context: some RequestContext) throws -> Response {
        JSONWriter.response(self)
    }

    func write(to json: inout JSONWriter) {
        json.object { json in
            json.key("category")
            json.string(category)
            json.key("title")
            json.string(title)
            json.key("scores")
            json.array(scores) { json, score in score.write(to: &json) }
            if let localPlayerScore {
                json.key("localPlayerScore")
                localPlayerScore.write(to: &json)
            }
            json.key("maxRange")
            json.integer(maxRange)
            if let occurrence {
                json.key("occurrence")
                occurrence.write(to: &json)
            }
        }
    }
}

extension LeaderboardOccurrence: JSONWritable {
    func write(to json: inout JSONWriter) {
        json.object { json in
            json.key("start")
            json.date(start)
            json.key("end")
            json.date(end)
            if let nextStart {
                json.key("nextStart")
                json.date(nextStart)
            }
            if let previousStart {
                json.key("previousStart")
                json.date(previousStart)
            }
            json.key("timeZone")
            json.string(timeZone)
            json.key("localStart")
            json.string(localStart)
            json.key("localEnd")
            json.string(localEnd)
            json.key("isRunning")
            json.bool(isRunning)
        }
    }
}

extension ScoreReportResult: ResponseGenerator, JSONWritable {
    public func response(from request: Request, context: some RequestContext) throws -> Response {
        JSONWriter.response(self)
    }

    func write(to json: inout JSONWriter) {
        json.object { json in
            json.key("scores")
            json.array(scores) { json, score in score.write(to: &json) }
        }
    }
}

extension ScoreEntry: JSONWritable {
    func write(to json: inout JSONWriter) {
        json.object { json in
            json.key("category")
            json.string(category)
            json.key("playerID")
            json.string(playerID)
            json.key("value")
            json.integer(value)
            json.key("context")
            json.integer(context)
            json.key("date")
            json.date(date)
            json.key("formattedValue")
            json.string(formattedValue)
            json.key("rank")
            json.integer(rank)
            if let occurrence {
                json.key("occurrence")
                json.date(occurrence)
            }
            if let attemptsLeft {
                json.key("attemptsLeft")
                json.integer(attemptsLeft)
            }
        }
    }
}
