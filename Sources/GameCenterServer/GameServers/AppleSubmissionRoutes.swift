import Crypto
import Foundation
import GameCenterProtocol
import GameCenterStorage
import HTTPTypes
import Hummingbird

/// App Store Connect's two Game Center submission endpoints, taking Apple's request bodies unchanged and answering as
/// Apple does (`201` with the submission resource; errors as `{"errors": [...]}`): a studio's server written for
/// Apple's API points at this server by changing its base URL and its key.
///
/// - `POST /v1/gameCenterLeaderboardEntrySubmissions` (permission `scores:write`)
/// - `POST /v1/gameCenterPlayerAchievementSubmissions` (permission `achievements:write`)
///
/// `scopedPlayerId` is the player's id here; `bundleId` must be the key's game, and `preReleased`, when given, its
/// environment (`true`: sandbox). Either write may carry an `Idempotency-Key` (``IdempotentWrites``).
struct AppleSubmissionRoutes {
    let leaderboards: LeaderboardService
    let achievements: AchievementService
    let database: Database
    let writes: IdempotentWrites

    static let leaderboardPath = "v1/gameCenterLeaderboardEntrySubmissions"
    static let achievementPath = "v1/gameCenterPlayerAchievementSubmissions"

    func add(to group: RouterGroup<AppRequestContext>) {
        group.post(RouterPath(Self.leaderboardPath)) { request, context -> Response in
            try await submit(
                request, context, needs: .scoresWrite, type: "gameCenterLeaderboardEntrySubmissions", path: Self.leaderboardPath,
                prepare: { (submission: LeaderboardEntrySubmission) in try submission.scoreReport() },
                store: { score, caller, playerID, reportID in
                    _ = try await leaderboards.serverReport(score, reportID: reportID, game: caller.game, environment: caller.environment, playerID: playerID)
                })
        }
        group.post(RouterPath(Self.achievementPath)) { request, context -> Response in
            try await submit(
                request, context, needs: .achievementsWrite, type: "gameCenterPlayerAchievementSubmissions", path: Self.achievementPath,
                prepare: { (submission: AchievementSubmission) in
                    guard (0...100).contains(submission.percentageAchieved) else {
                        throw APIError.invalidParameter("percentageAchieved is a whole number from 0 to 100; got \(submission.percentageAchieved)")
                    }
                    return AchievementReportBatch.Entry(identifier: submission.vendorIdentifier, percentComplete: Double(submission.percentageAchieved))
                },
                store: { entry, caller, playerID, reportID in
                    _ = try await achievements.serverReport(
                        AchievementReportBatch(reportID: reportID, achievements: [entry]), game: caller.game, playerID: playerID)
                })
        }
    }

    /// One submission: the key's permission, Apple's document of `type`, what `prepare` checks and makes of its
    /// attributes, the player it names; then `store` under the request's report id, once per `Idempotency-Key`, answered
    /// `201` with the resource as Apple answers it.
    private func submit<Attributes: PlayerSubmission, Prepared: Sendable>(
        _ request: Request, _ context: AppRequestContext, needs permission: ServerKeyPermission, type: String, path: String,
        prepare: (Attributes) throws -> Prepared, store: @escaping @Sendable (Prepared, ServerCaller, String, String) async throws -> Void
    ) async throws -> Response {
        let caller = try context.requireServerCaller()
        try caller.require(permission)
        let body = try await request.body.collect(upTo: context.maxUploadSize)
        let document = try Self.decode(AppleDocument<Attributes>.self, from: body, type: type)
        let submission = document.data.attributes
        let prepared = try prepare(submission)
        let playerID = try await player(submission.scopedPlayerId, bundleID: submission.bundleId, preReleased: submission.preReleased, caller: caller)
        return try await writes.answer(request, body: body, caller: caller) { reportID in
            try await store(prepared, caller, playerID, reportID)
            return (.created, try Self.created(document, reportID: reportID, path: path))
        }
    }

    /// The player `scopedPlayerId` names, once the submission's game and environment are found to be the key's.
    private func player(_ scopedPlayerID: String, bundleID: String, preReleased: Bool?, caller: ServerCaller) async throws -> String {
        guard bundleID == caller.game.bundleID else {
            throw APIError.keyForbidden("bundleId '\(bundleID.prefix(100))' is not the key's game, \(caller.game.bundleID)")
        }
        if let preReleased, preReleased != (caller.environment == .sandbox) {
            throw APIError.keyForbidden(
                "preReleased \(preReleased) names the \(preReleased ? "sandbox" : "live") environment; the key is for \(caller.environment.rawValue)")
        }
        let environment = caller.environment.rawValue
        let found = try await database.read { try await $0.players(ids: [scopedPlayerID], environment: environment) }
        guard found.first != nil else { throw APIError.unknownPlayers([String(scopedPlayerID.prefix(100))]) }
        return scopedPlayerID
    }

    private static func decode<Attributes>(_ type: AppleDocument<Attributes>.Type, from body: ByteBuffer, type name: String) throws
        -> AppleDocument<Attributes>
    {
        let document: AppleDocument<Attributes>
        do {
            document = try JSONDecoder().decode(type, from: Data(buffer: body, byteTransferStrategy: .noCopy))
        } catch let error as DecodingError {
            throw APIError.malformedBody(WireRequestDecoder.describe(error))
        }
        guard document.data.type == name else {
            throw APIError.invalidParameter("data.type must be '\(name)'; got '\(document.data.type.prefix(60))'")
        }
        return document
    }

    /// Apple's answer: the submission as sent, with its id (a UUID, the same for every retry of a report id) and links.
    private static func created<Attributes>(_ document: AppleDocument<Attributes>, reportID: String, path: String) throws -> Data {
        var bytes = Array(SHA256.hash(data: Data(reportID.utf8)).prefix(16))
        bytes[6] = bytes[6] & 0x0F | 0x50  // a name-based UUID (version 5 layout, SHA-256 instead of SHA-1)
        bytes[8] = bytes[8] & 0x3F | 0x80
        let id = UUID(
            uuid: (
                bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7], bytes[8], bytes[9], bytes[10], bytes[11],
                bytes[12], bytes[13], bytes[14], bytes[15]
            )
        ).uuidString.lowercased()
        let link = "/\(path)/\(id)"
        let answer = AppleCreated(
            data: .init(type: document.data.type, id: id, attributes: document.data.attributes, links: .init(selfLink: link)),
            links: .init(selfLink: link))
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        return try encoder.encode(answer)
    }
}

/// A JSON:API request document as App Store Connect takes them: `{"data": {"type": …, "attributes": {…}}}`.
struct AppleDocument<Attributes: Codable & Sendable>: Codable, Sendable {
    struct Resource: Codable, Sendable {
        var type: String
        var attributes: Attributes
    }
    var data: Resource
}

/// App Store Connect's answer to a created resource.
struct AppleCreated<Attributes: Codable & Sendable>: Codable, Sendable {
    struct Links: Codable, Sendable {
        var selfLink: String
        enum CodingKeys: String, CodingKey { case selfLink = "self" }
    }
    struct Resource: Codable, Sendable {
        var type: String
        var id: String
        var attributes: Attributes
        var links: Links
    }
    var data: Resource
    var links: Links
}

/// What both submissions name: the game, the player and the environment.
protocol PlayerSubmission: Codable, Sendable {
    var bundleId: String { get }
    var scopedPlayerId: String { get }
    var preReleased: Bool? { get }
}

/// `GameCenterLeaderboardEntrySubmission.Attributes`: numbers travel as strings.
struct LeaderboardEntrySubmission: PlayerSubmission {
    var bundleId: String
    var scopedPlayerId: String
    var vendorIdentifier: String
    var score: String
    var context: String?
    var submittedDate: String?
    var challengeIds: [String]?
    var preReleased: Bool?

    /// The score as this server reports it, or what is wrong with the submission.
    func scoreReport() throws(APIError) -> ScoreReport {
        guard let value = Int64(score.trimmingCharacters(in: .whitespaces)) else {
            throw APIError.invalidParameter("score is a whole number from \(-Int64.max) to \(Int64.max) as a string (e.g. \"123\"); got '\(score.prefix(40))'")
        }
        var contextValue: UInt64 = 0
        if let context {
            guard let parsed = UInt64(context.trimmingCharacters(in: .whitespaces)) else {
                throw APIError.invalidParameter("context is a whole number from 0 to \(UInt64.max) as a string; got '\(context.prefix(40))'")
            }
            contextValue = parsed
        }
        var date: Date?
        if let submittedDate {
            guard let parsed = Self.date(submittedDate) else {
                throw APIError.invalidParameter("submittedDate is an ISO 8601 date and time (e.g. 2026-11-30T12:00:00Z); got '\(submittedDate.prefix(40))'")
            }
            date = parsed
        }
        if let challengeIds, challengeIds.count > 100 || challengeIds.contains(where: { $0.count > 100 }) {
            throw APIError.invalidParameter("challengeIds holds at most 100 ids of at most 100 characters")
        }
        return ScoreReport(category: vendorIdentifier, value: value, context: contextValue, date: date)
    }

    private static func date(_ text: String) -> Date? {
        let plain = ISO8601DateFormatter()
        let fractional = ISO8601DateFormatter()
        fractional.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return plain.date(from: text) ?? fractional.date(from: text)
    }
}

/// `GameCenterPlayerAchievementSubmission.Attributes`.
struct AchievementSubmission: PlayerSubmission {
    var bundleId: String
    var scopedPlayerId: String
    var vendorIdentifier: String
    var percentageAchieved: Int
    var submittedDate: String?
    var challengeIds: [String]?
    var preReleased: Bool?
}

/// Answers errors on App Store Connect's routes as App Store Connect does: `{"errors": [{"id", "status", "code",
/// "title", "detail"}]}`, `code` being this server's specific error code.
struct AppleErrorMiddleware: RouterMiddleware {
    typealias Context = AppRequestContext

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch {
            let apiError = ErrorClassifier.classify(error, path: request.uri.path, logger: context.logger)
            let body = AppleErrors(errors: [
                .init(
                    id: UUID().uuidString.lowercased(), status: String(apiError.status.code), code: apiError.code.rawValue,
                    title: apiError.status.reasonPhrase, detail: apiError.message)
            ])
            var headers: HTTPFields = [.contentType: "application/json"]
            if let retry = apiError.retryAfterSeconds { headers[.retryAfter] = String(retry) }
            return Response(
                status: apiError.status, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: (try? JSONEncoder().encode(body)) ?? Data())))
        }
    }

    private struct AppleErrors: Encodable {
        struct Item: Encodable {
            var id: String
            var status: String
            var code: String
            var title: String
            var detail: String
        }
        var errors: [Item]
    }
}
