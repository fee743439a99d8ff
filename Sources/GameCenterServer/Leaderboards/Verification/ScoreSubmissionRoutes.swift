import Foundation
import GameCenterProtocol
import GameCenterStorage
import Hummingbird

/// The studio's view of verified boards' submissions: list them (the quarantined ones first of all), read one with its
/// details and attachment, release or reject a quarantined one. For server keys with `moderation`
/// (`/server/v1/score-submissions…`, the key's game and environment; writes take an `Idempotency-Key`) and for the
/// admin key (`/admin/v1/games/{bundleID}/score-submissions…?environment=`).
struct ScoreSubmissionRoutes {
    let leaderboards: LeaderboardService
    let writes: IdempotentWrites
    let registry: GameRegistry

    func addServer(to group: RouterGroup<AppRequestContext>) {
        group.get("score-submissions") { request, context -> ScoreSubmissionList in
            let caller = try context.requireServerCaller()
            try caller.require(.moderation)
            return try await list(request, game: caller.game, environment: caller.environment)
        }
        group.get("score-submissions/{submissionID}") { _, context -> ScoreSubmissionDetail in
            let caller = try context.requireServerCaller()
            try caller.require(.moderation)
            return try await leaderboards.submission(context.parameters.require("submissionID"), game: caller.game, environment: caller.environment)
        }
        group.post("score-submissions/{submissionID}/release") { request, context -> Response in
            let caller = try context.requireServerCaller()
            try caller.require(.moderation)
            let submissionID = try context.parameters.require("submissionID")
            let body = try await request.body.collect(upTo: context.maxUploadSize)
            return try await writes.answer(request, body: body, caller: caller) { _ in
                let decided = try await leaderboards.decideQuarantined(
                    submissionID, release: true, reason: nil, game: caller.game, environment: caller.environment, actor: caller.keyID)
                return (.ok, try WireCoding.makeEncoder().encode(decided))
            }
        }
        group.post("score-submissions/{submissionID}/reject") { request, context -> Response in
            let caller = try context.requireServerCaller()
            try caller.require(.moderation)
            let submissionID = try context.parameters.require("submissionID")
            let body = try await request.body.collect(upTo: context.maxUploadSize)
            let rejection = try WireRequestDecoder.decode(ScoreRejection.self, from: body)
            return try await writes.answer(request, body: body, caller: caller) { _ in
                let decided = try await leaderboards.decideQuarantined(
                    submissionID, release: false, reason: rejection.reason, game: caller.game, environment: caller.environment, actor: caller.keyID)
                return (.ok, try WireCoding.makeEncoder().encode(decided))
            }
        }
    }

    func addAdmin(to group: RouterGroup<AppRequestContext>) {
        group.get("games/{bundleID}/score-submissions") { request, context -> ScoreSubmissionList in
            try await list(request, game: game(context), environment: environment(request))
        }
        group.get("games/{bundleID}/score-submissions/{submissionID}") { request, context -> ScoreSubmissionDetail in
            try await leaderboards.submission(context.parameters.require("submissionID"), game: game(context), environment: environment(request))
        }
        group.post("games/{bundleID}/score-submissions/{submissionID}/release") { request, context -> ScoreSubmissionInfo in
            try await leaderboards.decideQuarantined(
                context.parameters.require("submissionID"), release: true, reason: nil, game: game(context), environment: environment(request),
                actor: AuditLog.admin)
        }
        group.post("games/{bundleID}/score-submissions/{submissionID}/reject") { request, context -> ScoreSubmissionInfo in
            let rejection = try await request.decode(as: ScoreRejection.self, context: context)
            return try await leaderboards.decideQuarantined(
                context.parameters.require("submissionID"), release: false, reason: rejection.reason, game: game(context),
                environment: environment(request), actor: AuditLog.admin)
        }
    }

    /// A page of submissions: `state`, `playerID`, `before` (seconds since 1970) and `limit` (1 to 1000, 100 by default)
    /// from the query.
    private func list(_ request: Request, game: Game, environment: GameCenterProtocol.Environment) async throws -> ScoreSubmissionList {
        let query = request.uri.queryParameters
        let state = try query["state"].map { text -> ScoreVerificationState in
            guard let state = ScoreVerificationState(rawValue: String(text)) else {
                throw APIError.invalidParameter(
                    "state is one of \(ScoreVerificationState.allCases.map(\.rawValue).joined(separator: ", ")); got '\(text.prefix(20))'")
            }
            return state
        }
        let before = try query["before"].map { text -> Int64 in
            guard let seconds = Double(text), let millis = StoredTime.checkedMillis(Date(timeIntervalSince1970: seconds)) else {
                throw APIError.invalidParameter("before is a time in seconds since 1970, in the years 1 to 9999")
            }
            return millis
        }
        let limit = try query["limit"].map { text -> Int in
            guard let limit = Int(text) else { throw APIError.invalidParameter("limit is a whole number from 1 to 1000") }
            return limit
        }
        return try await leaderboards.submissions(
            game: game, environment: environment, state: state, playerID: query["playerID"].map(String.init), before: before, limit: limit ?? 100)
    }

    private func game(_ context: AppRequestContext) throws -> Game {
        let bundleID = try context.parameters.require("bundleID")
        guard let game = registry.game(bundleID: bundleID) else { throw APIError.unknownGame(bundleID) }
        return game
    }

    /// The `environment` query parameter (required on the admin routes).
    private func environment(_ request: Request) throws -> GameCenterProtocol.Environment {
        guard let text = request.uri.queryParameters["environment"], let environment = GameCenterProtocol.Environment(rawValue: String(text)) else {
            throw APIError.invalidParameter("environment is sandbox or live")
        }
        return environment
    }
}

extension ScoreSubmissionDetail: ResponseEncodable {}
extension ScoreSubmissionInfo: ResponseEncodable {}
