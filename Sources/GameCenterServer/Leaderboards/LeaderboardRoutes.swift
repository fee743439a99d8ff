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
            let body = try await request.body(
                upTo: Limits.maximumRequestBodyBytes + (Limits.maximumScoreAttachmentBytes + 2) / 3 * 4,
                orThrow: APIError(
                    .requestBodyTooLarge,
                    "a score report is at most \(Limits.maximumRequestBodyBytes) bytes besides its attachments, which total at most \(Limits.maximumScoreAttachmentBytes) bytes"
                ))
            let batch = try WireRequestDecoder.decode(ScoreReportBatch.self, from: body)
            return try await leaderboards.report(
                batch, body: body, headers: request.headers, device: context.requireDevice(), session: context.requireSession())
        }
        group.post("report-keys") { _, context -> ReportKey in
            try await leaderboards.issueReportKey(session: context.requireSession())
        }
        group.get("score-submissions") { _, context -> ScoreSubmissionList in
            try await leaderboards.ownSubmissions(device: context.requireDevice(), session: context.requireSession())
        }
    }
}

extension LeaderboardList: ResponseEncodable {}
extension LeaderboardSetList: ResponseEncodable {}
extension TournamentEntry: ResponseEncodable {}
extension ReportKey: ResponseEncodable {}
extension ScoreSubmissionList: ResponseEncodable {}

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
            if let submissions {
                json.key("submissions")
                json.array(submissions) { json, submission in submission.write(to: &json) }
            }
        }
    }
}

extension ScoreSubmissionInfo: JSONWritable {
    func write(to json: inout JSONWriter) {
        json.object { json in
            json.key("submissionID")
            json.string(submissionID)
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
            json.key("position")
            json.integer(position)
            json.key("state")
            json.string(state.rawValue)
            if let reason {
                json.key("reason")
                json.string(reason)
            }
            json.key("submittedAt")
            json.date(submittedAt)
            if let decidedAt {
                json.key("decidedAt")
                json.date(decidedAt)
            }
            if let occurrence {
                json.key("occurrence")
                json.date(occurrence)
            }
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
