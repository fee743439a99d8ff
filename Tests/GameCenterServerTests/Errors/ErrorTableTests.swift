import Foundation
import GameCenterProtocol
import GameCenterStorage
import HTTPTypes
import Hummingbird
import Logging
import Testing
import Yams
@testable import GameCenterServer

/// The error table: every wire code has one status and one `GKError` code, the documentation and the OpenAPI
/// document list the same codes, and every error the server builds speaks in the project's words.
struct ErrorTableTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()

    @Test func everyCodeIsAClientOrServerFailureByItsFeature() {
        for code in WireErrorCode.allCases {
            if code.rawValue.hasPrefix("server.") {
                #expect(code.status.kind == .serverError, "\(code.rawValue) is the server's failure but answers \(code.status)")
                #expect([ErrorCode.unknown, .communicationsFailure].contains(code.gkCode), "\(code.rawValue)")
            } else {
                #expect(code.status.kind == .clientError, "\(code.rawValue) is the caller's failure but answers \(code.status)")
            }
            #expect(code.rawValue.wholeMatch(of: /[a-z]+\.[a-z_]+/) != nil, "\(code.rawValue) is not feature.snake_case")
        }
    }

    /// `docs/ERRORS.md` is the table for people; it must be exactly the server's.
    @Test func theDocumentedTableIsTheServersTable() throws {
        let text = try String(contentsOf: Self.root.appendingPathComponent("docs/ERRORS.md"), encoding: .utf8)
        var documented: [String: (status: Int, gk: String)] = [:]
        for match in text.matches(of: /\| `([a-z_.]+)` \| (\d{3}) \| `(\w+)` \|/) {
            #expect(documented[String(match.1)] == nil, "\(match.1) is documented twice")
            documented[String(match.1)] = (Int(match.2)!, String(match.3))
        }
        #expect(Set(documented.keys) == Set(WireErrorCode.allCases.map(\.rawValue)))
        for code in WireErrorCode.allCases {
            guard let row = documented[code.rawValue] else { continue }
            #expect(row.status == code.status.code, "\(code.rawValue): documented \(row.status), served \(code.status.code)")
            #expect(row.gk == "\(code.gkCode)", "\(code.rawValue): documented \(row.gk), served \(code.gkCode)")
        }
        let readme = try String(contentsOf: Self.root.appendingPathComponent("README.md"), encoding: .utf8)
        #expect(readme.contains("docs/ERRORS.md"))
    }

    @Test func theOpenAPIDocumentListsEveryCode() throws {
        let yaml = try String(contentsOf: Self.root.appendingPathComponent("Sources/GameCenterServer/Resources/openapi.yaml"), encoding: .utf8)
        let document = try #require(try Yams.load(yaml: yaml) as? [String: Any])
        let components = try #require(document["components"] as? [String: Any])
        let schemas = try #require(components["schemas"] as? [String: Any])
        let error = try #require(schemas["Error"] as? [String: Any])
        let code = try #require((error["properties"] as? [String: Any])?["code"] as? [String: Any])
        let listed = try #require(code["enum"] as? [String])
        #expect(listed == WireErrorCode.allCases.map(\.rawValue))
    }

    /// One error of every code, built the way the server builds it.
    static func everyError() throws -> [APIError] {
        let game = try #require(try ManifestLoader.loadGames(at: TestServer.games).first { $0.bundleID == "com.example.open" })
        let board = try #require(game.leaderboards.first)
        let aggregate = try #require(game.aggregates.first)
        return [
            .invalidParameter("rangeLength must be 1 to 100"), .malformedBody("alias: a value is required"), .bodyTooLarge,
            .routeNotFound("/v1/nope"), .methodNotAllowed, .malformedRequest, .headersTooLarge,
            ErrorClassifier.apiError(status: .unsupportedMediaType, message: nil, path: "/v1/me"),
            .rateLimited(.friendRequests, limit: RateLimits()[.friendRequests], retryAfterSeconds: 30), .tooManyRealtimeChannels(4),
            .internalError, .tooManyConnections, .storageUnavailable, .readOnly, .queueNodeUnavailable, .queueNodeUnreachable("node-a"),
            .invalidAccountName, .invalidPassword, .aliasLength(0), .hiddenCharacterInAlias("\u{200B}"), .aliasLookAlike("B0b", "Bob"), .statusTooLong(300),
            .statusInvalid,
            .accountNameTaken("ann"), .notAuthenticated, .sessionRevoked, .sessionExpired, .sessionForOtherGame, .invalidCredentials,
            .signInThrottled(retryAfterSeconds: 60), .addressThrottled(retryAfterSeconds: 60), .noSuchSession,
            .gameRequired, .gameUnrecognized("com.example.nope"), .clientKeyRejected("com.example.keyed"),
            .unknownPlayers(["G:1"]),
            .underageCannotBefriend, .recipientCannotBefriend("G:2"), .friendRequestToSelf, .alreadyFriends("G:2"),
            .requestAlreadyPending("G:2"), .requestFromRecipientPending("G:2", requestID: "fr_1"), .noSuchFriendRequest,
            .friendRequestAlreadyAnswered(.declined), .notAFriend("G:2"),
            .valueOutOfRange(-1, board), .unknownCategory("nope", game: game), .reportToAggregate(aggregate),
            .scoreForAnotherPlayer("G:2"), .invalidRange("rangeStart must be 1 or more"), .noOccurrence("daily", next: "2026-12-01T00:00:00Z"),
            .notATournament("daily"), .notJoined("cup"), .tournamentFull("cup", maxSize: 2), .noAttemptsLeft("cup", allowed: 2, used: 2, asked: 1),
            .tournamentEnded("cup"), .tournamentRunning("cup"), .serverOnlyLeaderboard("verified"),
            APIError(.leaderboardSignatureRequired, "this leaderboard takes signed reports only"),
            APIError(.leaderboardSignatureInvalid, "the signature is not the HMAC of this body"),
            APIError(.leaderboardCounterUsed, "counter 3 was taken"), .submissionUnknown("sub_1"),
            .submissionDecided(
                ScoreSubmissionRecord(
                    submissionID: "sub_1", bundleID: "b", environment: "sandbox", playerID: "G:1", reportID: "r", position: 0,
                    score: NewScore(category: "c", value: 1, context: 0, higherIsBetter: true, earnedAt: 0), details: [], state: "accepted",
                    createdAt: 0)),
            .unknownChallengeDefinition("nope", known: ["beat"]), .challengeInvalidRequest("durationSeconds is one of 7200"), .challengeNotFound,
            .challengeNotInvited, .challengeFull(3), .challengeEnded, .challengeNotFriends("G:2"),
            .activityInvalidRequest("'seasons.solo' does not support party codes"), .activityNotFound, .activityEnded, .partyNotFound, .partyFull(64),
            .notInParty("AB-CD"), .unknownActivityDefinition("nope", known: ["seasons.party"]),
            .invalidPercent(101, of: "first"), .unknownAchievement("nope"), .noAchievementImage("first"), .notAFriendsAchievements("G:2"),
            .matchRequestInvalid("minPlayers must be 2 to 16"), .inviteSelf, .inviteNonFriends(["G:2"]), .noSuchMatch, .matchNotRunning,
            .noSuchRequest, .requestIDReused, .alreadyWaiting, .channelClosed, .noSuchInvitation, .invitationClosed,
            .notHost, APIError(.alreadyInLobby(playerID: "G:2"), inviting: 1), APIError(.noOpenSeats(open: 1), inviting: 2),
            .unknownQueue("com.example.Nope", known: ["com.example.Ranked"]), .invalidProperties("the key 'gc' is reserved for Game Center"),
            .turnNoSuchMatch, .turnInvalidRequest("a timeout must be 0 (none) to 90 days"), .turnInvalidParticipant("participant 5 does not exist"),
            .turnNotYourTurn, .turnStaleVersion(read: 3, stored: 4), .turnMatchEnded, .turnExchangesNotMerged("ex1"),
            .turnDataTooLarge(2_000_000, limit: 1_048_576, what: "match data"), .turnTooManyMatches(100), .turnTooManyExchanges(4),
            .turnNoSuchExchange("ex9"), .turnReminderTooSoon(retryAfterMillis: 30_000),
            .saveInvalidRequest("sha256 must be 64 lowercase hex digits"), .saveTooLarge(40_000_000, limit: 33_554_432),
            .saveQuotaExceeded(used: 200, adding: 100, total: 300, limit: 256), .saveTooManySaves(200, limit: 200), .saveTooManyUploads(16),
            .saveNoSuchSave, .saveNoSuchUpload, .saveUploadIncomplete("2 of 3 chunks have not arrived yet: 1, 2"),
            .saveChecksumMismatch(String(repeating: "a", count: 64), announced: String(repeating: "b", count: 64)),
            .hostedMatchHasNoRelay,
            .adminDisabled, .adminKeyRequired, .unknownGame("com.example.nope"), .clockFixed,
            .keyRequired, .keyInvalid("the token expired 5 s ago (exp)"), .keyForbidden("it needs the permission 'scores:write'"),
            .keyUnknown("ABCDEFGHIJ"), .idempotencyKeyReused, .webhookUnknown("wh_1234"),
            .formRejected, .linkExpired, .tooManyAppTickets, .deviceSignInExpired, .deviceSignInDeclined, .deviceSignInOtherEnvironment("live"),
            .tooManyDeviceSignIns,
            .accountBanned, .consoleRoleRequired(.ban, has: .readOnly), .consoleInvalidUser("a console user's name is 1 to 64 letters"),
            .consoleUserExists("ann"), .consoleUserUnknown("bob"),
        ]
    }

    @Test func everyErrorSaysWhatWasWrongInTheProjectsWords() throws {
        let errors = try Self.everyError()
        #expect(Set(errors.map(\.code)) == Set(WireErrorCode.allCases), "an error of every code is checked")
        let swiftWords = /Optional\(|Swift\.|GameCenter[A-Z]|APIError|DecodingError|CodingKeys|Int64|\.Type\b|<[A-Z]\w*>/
        for error in errors {
            #expect(error.message.count >= 12, "\(error.code.rawValue): '\(error.message)' says too little")
            #expect(error.message.firstMatch(of: swiftWords) == nil, "\(error.code.rawValue): '\(error.message)' speaks Swift")
            #expect(error.body.code == error.code.rawValue && error.body.gkCode == error.gkCode.rawValue)
            if error.status == .tooManyRequests || error.status == .serviceUnavailable {
                #expect(error.retryAfterSeconds != nil, "\(error.code.rawValue) must say when to retry")
            }
        }
    }

    /// An HTTP error from the framework keeps its class: a 5xx is the server's fault, anything else the caller's.
    @Test func frameworkErrorsMapIntoTheTable() {
        #expect(ErrorClassifier.apiError(status: .notFound, message: nil, path: "/x").code == .requestUnknownRoute)
        #expect(ErrorClassifier.apiError(status: .badGateway, message: nil, path: "/x").code == .serverInternal)
        let other = ErrorClassifier.apiError(status: .unsupportedMediaType, message: nil, path: "/x")
        #expect(other.code == .requestRejected && other.status == .badRequest && other.message.contains("Unsupported Media Type"))
    }

    /// Pages and the JSON API classify errors in one place: a storage outage is 503 with `Retry-After` for both, a
    /// caller's mistake keeps its code, and anything unexpected is a bare 500.
    @Test func errorsAreClassifiedOnceForPagesAndTheAPI() {
        let logger = Logger(label: "test")
        let outage = ErrorClassifier.classify(StorageError.unavailable("connection refused"), path: "/friends", logger: logger)
        #expect(outage.status == .serviceUnavailable && outage.code == .serverStorageUnavailable && outage.retryAfterSeconds == 5)
        #expect(ErrorClassifier.classify(APIError.formRejected, path: "/friends", logger: logger).code == .webFormRejected)
        #expect(ErrorClassifier.classify(StorageError.closed, path: "/friends", logger: logger).code == .serverInternal)
        let notFound = ErrorClassifier.classify(HTTPError(.notFound), path: "/nowhere", logger: logger)
        #expect(notFound.code == .requestUnknownRoute)
    }
}
