import Foundation
import GameCenterProtocol
import HTTPTypes
import Testing
@testable import GameCenterServer

/// The seed's achievement rules, enforced by the server through its HTTP routes.
@Suite struct AchievementTests {
    func report(_ client: TestServer.Client, _ token: String, _ entries: [(String, Double)], reportID: String = UUID().uuidString) async throws
        -> TestServer.Client.Answer
    {
        try await client.send(
            .post, "/v1/achievements",
            AchievementReportBatch(
                reportID: reportID, achievements: entries.map { .init(identifier: $0.0, percentComplete: $0.1) }), token: token)
    }

    func descriptions(_ client: TestServer.Client, _ token: String, locale: String? = nil) async throws -> [String: AchievementDescriptionInfo] {
        var headers = HTTPFields()
        if let locale { headers[HTTPField.Name(DeviceHeader.locale)!] = locale }
        let list = try await client.call(.get, "/v1/achievement-descriptions", token: token, extraHeaders: headers).decode(AchievementDescriptionList.self)
        return Dictionary(uniqueKeysWithValues: list.descriptions.map { ($0.identifier, $0) })
    }

    func progress(_ client: TestServer.Client, _ token: String) async throws -> AchievementList {
        try await client.call(.get, "/v1/achievements", token: token).decode(AchievementList.self)
    }

    @Test func descriptionsAreLocalizedWithFallbackToTheDefaultLocale() async throws {
        try await TestServer.run { client in
            let player = try await client.signUp()
            #expect(try await descriptions(client, player.token)["open.first"]?.title == "First")
            #expect(try await descriptions(client, player.token, locale: "de-AT")["open.first"]?.title == "Erster")
            #expect(try await descriptions(client, player.token, locale: "de")["open.first"]?.unachievedDescription == "Einmal tun.")
            #expect(try await descriptions(client, player.token, locale: "ja-JP")["open.first"]?.achievedDescription == "Done once.")
            #expect(try await descriptions(client, player.token, locale: "fr")["open.many"]?.title == "Many")
            #expect(try await descriptions(client, player.token)["open.many"]?.maximumPoints == 40)
        }
    }

    @Test func aHiddenAchievementIsRevealedByAnyReportEvenZero() async throws {
        try await TestServer.run { client in
            let player = try await client.signUp()
            let before = try #require(try await descriptions(client, player.token)["open.secret"])
            #expect(before.isHidden)
            #expect(before.title.isEmpty && before.achievedDescription.isEmpty && before.maximumPoints == 0 && !before.hasImage)
            expectError(
                try await client.call(.get, "/v1/achievement-descriptions/open.secret/image", token: player.token),
                .notFound, "achievement.unknown", .invalidParameter)
            #expect(try await report(client, player.token, [("open.secret", 0)]).status == .ok)
            let after = try #require(try await descriptions(client, player.token)["open.secret"])
            #expect(after.title == "Secret")
            #expect(after.maximumPoints == 50)
            #expect(after.isHidden)
            // Another player still does not see it.
            let other = try await client.signUp()
            #expect(try await descriptions(client, other.token)["open.secret"]?.title == "")
        }
    }

    @Test func progressNeverGoesDownAnd100Completes() async throws {
        try await TestServer.run { client in
            let player = try await client.signUp()
            _ = try await report(client, player.token, [("open.many", 50)])
            let lowered = try await report(client, player.token, [("open.many", 30)]).decode(AchievementReportResult.self)
            #expect(lowered.achievements.map(\.identifier) == ["open.many"], "the answer holds the reported achievements")
            #expect(lowered.achievements.first?.percentComplete == 50)
            #expect(lowered.achievements.first?.completedAt == nil)
            #expect(try await progress(client, player.token).points == 0)
            let done = try await report(client, player.token, [("open.many", 100), ("open.first", 12.5)]).decode(AchievementReportResult.self)
            #expect(done.achievements.map(\.identifier) == ["open.first", "open.many"])
            let many = try #require(done.achievements.first { $0.identifier == "open.many" })
            #expect(many.percentComplete == 100)
            let completedAt = try #require(many.completedAt)
            #expect(try await progress(client, player.token).points == 40)
            // A later report keeps the completion date.
            _ = try await report(client, player.token, [("open.many", 20)])
            let stored = try await progress(client, player.token)
            #expect(stored.achievements.first { $0.identifier == "open.many" }?.completedAt == completedAt)
            #expect(stored.achievements.first { $0.identifier == "open.first" }?.percentComplete == 12.5)
        }
    }

    @Test func badReportsAreRefusedAndChangeNothing() async throws {
        try await TestServer.run { client in
            let player = try await client.signUp()
            _ = try await report(client, player.token, [("open.many", 10)])
            expectError(
                try await report(client, player.token, [("open.many", 60), ("open.first", 101)]), .badRequest, "achievement.invalid_percent", .invalidParameter)
            expectError(try await report(client, player.token, [("open.many", -0.5)]), .badRequest, "achievement.invalid_percent", .invalidParameter)
            let unknown = try await report(client, player.token, [("open.many", 60), ("open.nope", 10)])
            expectError(unknown, .notFound, "achievement.unknown", .invalidParameter)
            #expect(unknown.error?.message.contains("open.nope") == true)
            let nan = try await client.call(
                .post, "/v1/achievements", json: #"{"reportID":"abcdefgh-1","achievements":[{"identifier":"open.many","percentComplete":NaN}]}"#,
                token: player.token)
            expectError(nan, .badRequest, "request.malformed_body", .invalidParameter)
            expectError(try await report(client, player.token, []), .badRequest, "request.invalid_parameter", .invalidParameter)
            expectError(
                try await report(client, player.token, [("open.many", 60)], reportID: "short"), .badRequest, "request.invalid_parameter", .invalidParameter)
            expectError(
                try await client.send(
                    .post, "/v1/achievements",
                    AchievementReportBatch(reportID: "abcdefgh-2", achievements: [.init(identifier: "open.many", percentComplete: 60)])),
                .unauthorized, "account.not_authenticated", .notAuthenticated)
            // Nothing of the refused batches was stored: still 10.
            #expect(try await progress(client, player.token).achievements.map(\.percentComplete) == [10])
        }
    }

    @Test func aReportAlwaysCountsForTheSignedInPlayer() async throws {
        try await TestServer.run { client in
            let alice = try await client.signUp(), mallory = try await client.signUp()
            // A forged "playerID" field is not part of the format and is ignored: the session decides whose progress it is.
            let json = #"{"reportID":"forged-0001","playerID":"\#(alice.player.playerID)","achievements":[{"identifier":"open.first","percentComplete":100}]}"#
            #expect(try await client.call(.post, "/v1/achievements", json: json, token: mallory.token).status == .ok)
            #expect(try await progress(client, alice.token).achievements.isEmpty)
            #expect(try await progress(client, mallory.token).achievements.map(\.identifier) == ["open.first"])
        }
    }

    @Test func aReportIsAppliedOncePerReportID() async throws {
        try await TestServer.run(admin: true) { client in
            let player = try await client.signUp()
            let id = UUID().uuidString
            let first = try await report(client, player.token, [("open.first", 100)], reportID: id).decode(AchievementReportResult.self)
            // The server's clock moves on, so that a report applied again would show a later report time.
            try await LeaderboardTests.advanceClock(client, hours: 1)
            let again = try await report(client, player.token, [("open.first", 100)], reportID: id).decode(AchievementReportResult.self)
            #expect(again.achievements == first.achievements, "the re-send changed nothing, not even the report time")
            // A new report id is a new report.
            let third = try await report(client, player.token, [("open.first", 100)]).decode(AchievementReportResult.self)
            #expect(third.achievements[0].lastReportedAt > first.achievements[0].lastReportedAt)
        }
    }

    @Test func aReportIDUsedForScoresStillAppliesAnAchievementReport() async throws {
        try await TestServer.run { client in
            let player = try await client.signUp()
            let id = UUID().uuidString
            #expect(try await LeaderboardTests.report(client, player.token, [LeaderboardTests.score(7)], reportID: id).status == .ok)
            let answer = try await report(client, player.token, [("open.first", 100)], reportID: id)
            #expect(answer.status == .ok)
            let stored = try await progress(client, player.token).achievements.first { $0.identifier == "open.first" }
            #expect(stored?.percentComplete == 100, "the achievement report was stored, not taken for a repeat of the score report")
            // The score report's id is still applied once per kind: its re-send stores no second score.
            let resent = try await LeaderboardTests.report(client, player.token, [LeaderboardTests.score(7)], reportID: id)
            #expect(try resent.decode(ScoreReportResult.self).scores.isEmpty)
        }
    }

    @Test func resetErasesProgressAndHidesHiddenAchievementsAgain() async throws {
        try await TestServer.run { client in
            let player = try await client.signUp()
            _ = try await report(client, player.token, [("open.secret", 100), ("open.first", 100)])
            #expect(try await progress(client, player.token).points == 60)
            #expect(try await client.call(.delete, "/v1/achievements", token: player.token).status == .noContent)
            let after = try await progress(client, player.token)
            #expect(after.achievements.isEmpty)
            #expect(after.points == 0)
            #expect(try await descriptions(client, player.token)["open.secret"]?.title == "")
        }
    }

    @Test func friendsCompareCompletedAchievementsStrangersCannot() async throws {
        try await TestServer.run { client in
            let alice = try await client.signUp(), bob = try await client.signUp(), eve = try await client.signUp()
            _ = try await client.send(.post, "/v1/friend-requests", SendFriendRequests(playerIDs: [bob.player.playerID], message: nil), token: alice.token)
            let request = try #require(try await client.call(.get, "/v1/friend-requests", token: bob.token).decode(FriendRequestList.self).requests.first)
            _ = try await client.call(.post, "/v1/friend-requests/\(request.requestID)/accept", token: bob.token)
            _ = try await report(client, alice.token, [("open.first", 100), ("open.many", 70)])
            let seen = try await client.call(.get, "/v1/players/\(alice.player.playerID)/achievements", token: bob.token).decode(AchievementList.self)
            #expect(seen.achievements.map(\.identifier) == ["open.first"])
            #expect(seen.points == 10)
            expectError(
                try await client.call(.get, "/v1/players/\(alice.player.playerID)/achievements", token: eve.token),
                .forbidden, "achievement.not_a_friend", .invalidPlayer)
        }
    }

    @Test func imagesAreServedWithCachingHeaders() async throws {
        try await TestServer.run { client in
            let player = try await client.signUp()
            let image = try await client.call(.get, "/v1/achievement-descriptions/open.first/image", token: player.token)
            #expect(image.status == .ok)
            #expect(image.body == TestServer.medalPNG)
            #expect(image.headers[.contentType] == "image/png")
            #expect(image.headers[.cacheControl]?.contains("max-age") == true)
            let etag = try #require(image.headers[.eTag])
            let cached = try await client.call(.get, "/v1/achievement-descriptions/open.first/image", token: player.token, extraHeaders: [.ifNoneMatch: etag])
            #expect(cached.status == .notModified)
            expectError(
                try await client.call(.get, "/v1/achievement-descriptions/open.many/image", token: player.token), .notFound, "achievement.no_image",
                .invalidParameter)
        }
    }

    @Test func achievementDataDoesNotCrossEnvironments() async throws {
        try await TestServer.run { client in
            let sandbox = try await client.signUp(environment: "sandbox", account: "same-name")
            let live = try await client.signUp(environment: "live", account: "same-name")
            _ = try await report(client, sandbox.token, [("open.first", 100)])
            let liveProgress = try await client.call(.get, "/v1/achievements", token: live.token, environment: "live").decode(AchievementList.self)
            #expect(liveProgress.achievements.isEmpty)
        }
    }
}
