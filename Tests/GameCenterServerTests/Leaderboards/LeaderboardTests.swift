import Foundation
import GameCenterProtocol
import HTTPTypes
import Testing
@testable import GameCenterServer

/// The leaderboard rules through the HTTP routes of an in-process server (game `com.example.open`: `open.points`
/// default descending, `open.time` ascending, aggregate `open.maps` of `open.map1` and `open.map2`).
@Suite struct LeaderboardTests {
    typealias Client = TestServer.Client

    static func report(_ client: Client, _ token: String, _ scores: [ScoreReport], reportID: String = UUID().uuidString) async throws -> Client.Answer {
        try await client.send(.post, "/v1/scores", ScoreReportBatch(reportID: reportID, scores: scores), token: token)
    }

    static func score(_ value: Int64, _ category: String? = "open.points", context: UInt64 = 0) -> ScoreReport {
        ScoreReport(category: category, value: value, context: context)
    }

    static func page(
        _ client: Client, _ token: String, category: String? = "open.points", scope: LeaderboardPlayerScope = .global,
        time: LeaderboardTimeScope = .allTime, start: Int = 1, length: Int = 25, playerIDs: [String]? = nil
    ) async throws -> LeaderboardPage {
        let answer = try await client.send(
            .post, "/v1/leaderboards/query",
            LeaderboardQuery(
                category: category, playerScope: scope, timeScope: time, rangeStart: start, rangeLength: length, playerIDs: playerIDs), token: token)
        #expect(answer.status == .ok, "\(String(decoding: answer.body, as: UTF8.self))")
        return try answer.decode(LeaderboardPage.self)
    }

    static func advanceClock(_ client: Client, hours: Double) async throws {
        let answer = try await client.call(
            .post, "/admin/v1/clock", json: #"{"seconds": \#(hours * 3600)}"#,
            extraHeaders: [.authorization: "Bearer \(TestServer.adminKey)"])
        #expect(answer.status == .ok)
    }

    @Test func theBestScoreIsKeptAndEveryReportIsStored() async throws {
        try await TestServer.run { client in
            let player = try await client.signUp()
            for value: Int64 in [10, 30, 20] {
                #expect(try await Self.report(client, player.token, [Self.score(value)]).status == .ok)
            }
            let page = try await Self.page(client, player.token)
            #expect(page.scores.map(\.value) == [30])
            #expect(page.localPlayerScore?.value == 30 && page.localPlayerScore?.rank == 1)
            #expect(page.maxRange == 1)
            #expect(page.title == "Points")

            // Ascending: lower is better.
            for value: Int64 in [500, 300, 400] { _ = try await Self.report(client, player.token, [Self.score(value, "open.time")]) }
            #expect(try await Self.page(client, player.token, category: "open.time").scores.map(\.value) == [300])
        }
    }

    @Test func equalValuesRankByTheEarlierReport() async throws {
        try await TestServer.run { client in
            let first = try await client.signUp(alias: "First")
            let second = try await client.signUp(alias: "Second")
            let top = try await client.signUp(alias: "Top")
            _ = try await Self.report(client, first.token, [Self.score(50)])
            _ = try await Self.report(client, second.token, [Self.score(50)])
            _ = try await Self.report(client, top.token, [Self.score(70)])
            // Reporting the same value again does not move a player behind the ones who reached it later.
            _ = try await Self.report(client, first.token, [Self.score(50)])
            let page = try await Self.page(client, second.token)
            #expect(page.scores.map(\.playerID) == [top.player.playerID, first.player.playerID, second.player.playerID])
            #expect(page.scores.map(\.rank) == [1, 2, 3])
            #expect(page.localPlayerScore?.rank == 3)
        }
    }

    @Test func parallelReportsAndReadsEndInTheExactBoard() async throws {
        try await TestServer.run { client in
            var players: [SessionResponse] = []
            for _ in 0..<12 { players.append(try await client.signUp()) }
            let snapshot = players
            // Each player reports 15 distinct values in parallel with everyone else, while pages are read.
            try await withThrowingTaskGroup(of: Void.self) { group in
                for (index, player) in snapshot.enumerated() {
                    group.addTask {
                        for round in 0..<15 {
                            let value = Int64((index * 37 + round * 101) % 997) * 100 + Int64(index)
                            let answer = try await Self.report(client, player.token, [Self.score(value), Self.score(value, "open.map\(1 + round % 2)")])
                            #expect(answer.status == .ok)
                        }
                    }
                    group.addTask {
                        for _ in 0..<10 { _ = try await Self.page(client, player.token, length: 100) }
                    }
                }
                try await group.waitForAll()
            }
            let best = snapshot.indices.map { index in
                (0..<15).map { Int64((index * 37 + $0 * 101) % 997) * 100 + Int64(index) }.max()!
            }
            let expected = zip(snapshot, best).sorted { $0.1 > $1.1 }.map(\.0.player.playerID)
            for category in ["open.points", "open.maps"] {
                let page = try await Self.page(client, snapshot[0].token, category: category, length: 100)
                #expect(page.scores.map(\.playerID) == expected, "\(category)")
                #expect(page.scores.map(\.value) == best.sorted(by: >))
            }
        }
    }

    @Test func aScoreWithoutCategoryGoesToTheDefaultLeaderboard() async throws {
        try await TestServer.run { client in
            let player = try await client.signUp()
            let answer = try await Self.report(client, player.token, [Self.score(1, nil, context: UInt64.max)])
            let stored = try answer.decode(ScoreReportResult.self).scores
            #expect(stored.map(\.category) == ["open.points"])
            #expect(stored.first?.context == UInt64.max)
            #expect(stored.first?.formattedValue.isEmpty == false)
            let page = try await Self.page(client, player.token, category: nil)
            #expect(page.category == "open.points")
            #expect(page.scores.first?.context == UInt64.max)
        }
    }

    @Test func badReportsAreRefusedAndStoreNothing() async throws {
        try await TestServer.run { client in
            let player = try await client.signUp()
            let other = try await client.signUp()
            expectError(
                try await Self.report(client, player.token, [Self.score(5), Self.score(1, "open.nope")]),
                .notFound, "leaderboard.unknown_category", .invalidParameter)
            expectError(
                try await Self.report(client, player.token, [Self.score(5), Self.score(1, "open.maps")]),
                .badRequest, "leaderboard.aggregate", .invalidParameter)
            expectError(
                try await Self.report(
                    client, player.token, [Self.score(5), ScoreReport(category: nil, value: 1, context: 0, playerID: other.player.playerID)]),
                .forbidden, "leaderboard.not_local_player", .invalidPlayer)
            expectError(try await Self.report(client, player.token, []), .badRequest, "request.invalid_parameter", .invalidParameter)
            expectError(
                try await Self.report(client, player.token, Array(repeating: Self.score(1), count: 101)),
                .badRequest, "request.invalid_parameter", .invalidParameter)
            expectError(
                try await Self.report(client, player.token, [Self.score(1)], reportID: "short"),
                .badRequest, "request.invalid_parameter", .invalidParameter)
            for reportID in ["report\u{1}id-01", "report\u{7F}id-01", "report id 0001", "report\tid-0001", "réport-id-0001"] {
                expectError(
                    try await Self.report(client, player.token, [Self.score(1)], reportID: reportID),
                    .badRequest, "request.invalid_parameter", .invalidParameter)
            }
            // Bounds: the manifest's (open.bounded takes 0…1000), no negative elapsed time, and never −2⁶³ (it ranked first
            // on an ascending board).
            for (value, category) in [(-1, "open.bounded"), (1001, "open.bounded"), (-5, "open.time"), (Int64.min, "open.points"), (Int64.min, "open.time")] {
                let answer = try await Self.report(client, player.token, [Self.score(value, category)])
                expectError(answer, .badRequest, "leaderboard.value_out_of_range", .invalidParameter)
                #expect(answer.error?.message.contains(category) == true)
            }
            #expect(try await Self.report(client, player.token, [Self.score(1000, "open.bounded"), Self.score(0, "open.time")]).status == .ok)
            let tooLarge = #"{"reportID": "0123456789", "scores": [{"value": 9223372036854775808, "context": 0}]}"#
            expectError(
                try await client.call(.post, "/v1/scores", json: tooLarge, token: player.token),
                .badRequest, "request.malformed_body", .invalidParameter)
            let negativeContext = #"{"reportID": "0123456789", "scores": [{"value": 1, "context": -1}]}"#
            expectError(
                try await client.call(.post, "/v1/scores", json: negativeContext, token: player.token),
                .badRequest, "request.malformed_body", .invalidParameter)
            expectError(
                try await client.send(.post, "/v1/scores", ScoreReportBatch(reportID: UUID().uuidString, scores: [Self.score(1)])),
                .unauthorized, "account.not_authenticated", .notAuthenticated)

            let page = try await Self.page(client, player.token)
            #expect(page.maxRange == 0 && page.scores.isEmpty && page.localPlayerScore == nil)
        }
    }

    @Test func aReportIDIsAppliedOnce() async throws {
        try await TestServer.run(admin: true) { client in
            let player = try await client.signUp()
            let id = UUID().uuidString
            #expect(try await Self.report(client, player.token, [Self.score(5)], reportID: id).decode(ScoreReportResult.self).scores.count == 1)
            #expect(try await Self.report(client, player.token, [Self.score(5)], reportID: id).decode(ScoreReportResult.self).scores.isEmpty)
            let admin = try await client.call(
                .get, "/admin/v1/games/com.example.open/leaderboards/open.points",
                extraHeaders: [.authorization: "Bearer \(TestServer.adminKey)"]
            ).decode(AdminLeaderboardPage.self)
            #expect(admin.entries.count == 1)
        }
    }

    @Test(arguments: [(0, 10, "ranks start at 1"), (1, 0, "1 to 100"), (1, 101, "1 to 100"), (-5, 10, "ranks start at 1")])
    func rangesOutsideTheRulesAreRefused(start: Int, length: Int, message: String) async throws {
        try await TestServer.run { client in
            let player = try await client.signUp()
            let answer = try await client.send(
                .post, "/v1/leaderboards/query",
                LeaderboardQuery(
                    category: nil, playerScope: .global, timeScope: .allTime, rangeStart: start, rangeLength: length), token: player.token)
            expectError(answer, .badRequest, "leaderboard.invalid_range", .invalidParameter)
            #expect(answer.error?.message.contains(message) == true)
        }
    }

    @Test func pagesAreSlicesOfTheBoard() async throws {
        try await TestServer.run { client in
            var tokens: [String] = []
            for value in 1...12 {
                let player = try await client.signUp()
                tokens.append(player.token)
                _ = try await Self.report(client, player.token, [Self.score(Int64(value) * 10)])
            }
            let middle = try await Self.page(client, tokens[0], start: 4, length: 3)
            #expect(middle.scores.map(\.value) == [90, 80, 70])
            #expect(middle.scores.map(\.rank) == [4, 5, 6])
            #expect(middle.maxRange == 12)
            #expect(middle.localPlayerScore?.rank == 12)
            let beyond = try await Self.page(client, tokens[0], start: 13, length: 5)
            #expect(beyond.scores.isEmpty && beyond.maxRange == 12)
            let overlapping = try await Self.page(client, tokens[0], start: 11, length: 100)
            #expect(overlapping.scores.map(\.rank) == [11, 12])
        }
    }

    @Test func friendsScopeRanksThePlayerAmongTheirFriends() async throws {
        try await TestServer.run { client in
            let alice = try await client.signUp(alias: "Alice")
            let bob = try await client.signUp(alias: "Bob")
            let stranger = try await client.signUp(alias: "Stranger")
            let requests = try await client.send(
                .post, "/v1/friend-requests", SendFriendRequests(playerIDs: [bob.player.playerID], message: nil), token: alice.token)
            #expect(requests.status == .created || requests.status == .ok)
            let pending = try await client.call(.get, "/v1/friend-requests", token: bob.token).decode(FriendRequestList.self).requests
            #expect(try await client.call(.post, "/v1/friend-requests/\(pending[0].requestID)/accept", token: bob.token).status == .noContent)

            _ = try await Self.report(client, stranger.token, [Self.score(1000)])
            _ = try await Self.report(client, alice.token, [Self.score(10)])
            _ = try await Self.report(client, bob.token, [Self.score(20)])

            let friends = try await Self.page(client, alice.token, scope: .friendsOnly)
            #expect(friends.scores.map(\.playerID) == [bob.player.playerID, alice.player.playerID])
            #expect(friends.scores.map(\.rank) == [1, 2])
            #expect(friends.localPlayerScore?.rank == 2)
            #expect(friends.maxRange == 2)
            let global = try await Self.page(client, alice.token)
            #expect(global.localPlayerScore?.rank == 3 && global.maxRange == 3)

            // Named players: ranked among themselves, whatever the scope says.
            let named = try await Self.page(client, bob.token, scope: .friendsOnly, playerIDs: [stranger.player.playerID, alice.player.playerID, "G:unknown"])
            #expect(named.scores.map(\.playerID) == [stranger.player.playerID, alice.player.playerID])
            #expect(named.localPlayerScore == nil && named.maxRange == 2)
        }
    }

    @Test func anAggregateRanksEachPlayersBestOnAnyMember() async throws {
        try await TestServer.run { client in
            let one = try await client.signUp()
            let two = try await client.signUp()
            _ = try await Self.report(client, one.token, [Self.score(10, "open.map1"), Self.score(40, "open.map2")])
            _ = try await Self.report(client, two.token, [Self.score(30, "open.map1")])
            let page = try await Self.page(client, one.token, category: "open.maps")
            #expect(page.title == "Maps")
            #expect(page.scores.map(\.value) == [40, 30])
            #expect(page.scores.map(\.category) == ["open.map2", "open.map1"])
            #expect(page.scores.map(\.playerID) == [one.player.playerID, two.player.playerID])
            #expect(try await Self.page(client, one.token, category: "open.map1").scores.map(\.value) == [30, 10])
        }
    }

    @Test func windowsHoldTheBestReportInsideThemAndLetItAgeOut() async throws {
        try await TestServer.run(admin: true) { client in
            let player = try await client.signUp()
            let rival = try await client.signUp()
            _ = try await Self.report(client, player.token, [Self.score(100)])
            try await Self.advanceClock(client, hours: 12)
            _ = try await Self.report(client, player.token, [Self.score(50)])
            _ = try await Self.report(client, rival.token, [Self.score(70)])
            #expect(try await Self.page(client, player.token, time: .today).scores.map(\.value) == [100, 70])

            try await Self.advanceClock(client, hours: 13)  // the 100 is 25 hours old
            let today = try await Self.page(client, player.token, time: .today)
            #expect(today.scores.map(\.value) == [70, 50])
            #expect(today.localPlayerScore?.rank == 2)
            #expect(try await Self.page(client, player.token, time: .week).scores.map(\.value) == [100, 70])

            try await Self.advanceClock(client, hours: 6 * 24)  // 7 days and 1 hour after the 100
            #expect(try await Self.page(client, player.token, time: .week).scores.map(\.value) == [70, 50])
            #expect(try await Self.page(client, player.token, time: .today).maxRange == 0)

            try await Self.advanceClock(client, hours: 12)  // everything is older than a week
            let week = try await Self.page(client, player.token, time: .week)
            #expect(week.maxRange == 0 && week.localPlayerScore == nil)
            #expect(try await Self.page(client, player.token).scores.map(\.value) == [100, 70])
        }
    }

    /// Reports `scores` with the device's clock header (`deviceTime`, seconds since 1970, when given).
    static func report(_ client: Client, _ token: String, _ scores: [ScoreReport], deviceTime: String?) async throws -> Client.Answer {
        let json = String(decoding: try WireCoding.makeEncoder().encode(ScoreReportBatch(reportID: UUID().uuidString, scores: scores)), as: UTF8.self)
        var headers: HTTPFields = [:]
        if let deviceTime { headers[HTTPField.Name(DeviceHeader.deviceTime)!] = deviceTime }
        return try await client.call(.post, "/v1/scores", json: json, token: token, extraHeaders: headers)
    }

    /// The server's clock (a test server's is moved by ``advanceClock(_:hours:)``).
    static func serverNow(_ client: Client) async throws -> Date {
        try await client.call(
            .post, "/admin/v1/clock", json: #"{"seconds": 0}"#, extraHeaders: [.authorization: "Bearer \(TestServer.adminKey)"]
        ).decode(ClockReading.self).now
    }

    /// The seed: a score's date is set when the object is made. It travels with the report, so a score that waited
    /// on the device ranks in the windows of when it was earned, on the first build of a board and after it.
    @Test func aScoreThatWaitedCountsWhenItWasEarned() async throws {
        try await TestServer.run(admin: true) { client in
            let player = try await client.signUp()
            let rival = try await client.signUp()
            let now = try await Self.serverNow(client)
            let clock = String(now.timeIntervalSince1970)
            func earned(_ value: Int64, hoursAgo: Double) -> ScoreReport {
                ScoreReport(category: "open.points", value: value, context: 0, date: now.addingTimeInterval(-hoursAgo * 3600))
            }
            // Reported before the board is first built (it is built from storage).
            let stored = try await Self.report(client, player.token, [earned(100, hoursAgo: 25)], deviceTime: clock)
            #expect(stored.status == .ok)
            #expect(abs(try stored.decode(ScoreReportResult.self).scores[0].date.timeIntervalSince(now) + 25 * 3600) < 5)
            _ = try await Self.report(client, rival.token, [Self.score(70)])
            #expect(try await Self.page(client, player.token, time: .today).scores.map(\.value) == [70])
            #expect(try await Self.page(client, player.token, time: .week).scores.map(\.value) == [100, 70])
            // Reported to a built board: earned 23 hours ago, it is in today's window for one more hour.
            _ = try await Self.report(client, player.token, [earned(90, hoursAgo: 23)], deviceTime: clock)
            #expect(try await Self.page(client, player.token, time: .today).scores.map(\.value) == [90, 70])
            try await Self.advanceClock(client, hours: 1.5)
            #expect(try await Self.page(client, player.token, time: .today).scores.map(\.value) == [70])
            #expect(try await Self.page(client, player.token, time: .week).scores.map(\.value) == [100, 70])
        }
    }

    /// The device's clock offset is taken out (its header says what its clock read when it sent the report), and
    /// dates are kept between 30 days ago and now; a malformed clock header is refused.
    @Test func scoreDatesAreCorrectedForTheDevicesClockAndKeptPlausible() async throws {
        try await TestServer.run(admin: true) { client in
            let player = try await client.signUp()
            let now = try await Self.serverNow(client)
            /// Reports a score dated `date`; the stored date, and the server's clock just before and after the report
            /// (the test server's clock runs on between requests).
            func report(_ date: Date?, deviceTime: Date?) async throws -> (stored: Date, before: Date, after: Date) {
                let before = try await Self.serverNow(client)
                let answer = try await Self.report(
                    client, player.token, [ScoreReport(category: "open.points", value: 1, context: 0, date: date)],
                    deviceTime: deviceTime.map { String($0.timeIntervalSince1970) })
                #expect(answer.status == .ok)
                let after = try await Self.serverNow(client)
                return (try answer.decode(ScoreReportResult.self).scores[0].date, before, after)
            }
            /// Whether the stored date is `offset` seconds from the server's clock when it took the report.
            func isReceipt(plus offset: TimeInterval, _ result: (stored: Date, before: Date, after: Date)) -> Bool {
                let earliest = result.before.addingTimeInterval(offset - 0.002), latest = result.after.addingTimeInterval(offset + 0.002)
                return earliest <= result.stored && result.stored <= latest
            }
            // A device three hours fast, a score it made 30 minutes before sending.
            let fast = now.addingTimeInterval(3 * 3600)
            #expect(isReceipt(plus: -1800, try await report(fast.addingTimeInterval(-1800), deviceTime: fast)))
            // A device two days slow.
            let slow = now.addingTimeInterval(-2 * 86_400)
            #expect(isReceipt(plus: -60, try await report(slow.addingTimeInterval(-60), deviceTime: slow)))
            // Without the header the date is taken as it is; a date in the future becomes now.
            let asSent = now.addingTimeInterval(-600)
            #expect(abs(try await report(asSent, deviceTime: nil).stored.timeIntervalSince(asSent)) < 0.002)
            #expect(isReceipt(plus: 0, try await report(now.addingTimeInterval(10 * 3600), deviceTime: nil)))
            #expect(isReceipt(plus: 0, try await report(fast, deviceTime: now)))
            #expect(isReceipt(plus: 0, try await report(nil, deviceTime: fast)))
            // Never earlier than 30 days ago, whatever the device says (even the start of time).
            #expect(isReceipt(plus: -Limits.maximumReportAge, try await report(now.addingTimeInterval(-60 * 86_400), deviceTime: now)))
            #expect(isReceipt(plus: -Limits.maximumReportAge, try await report(Date(timeIntervalSince1970: -1e300), deviceTime: now)))
            for header in ["soon", "inf", "nan", "-5", "1e400", ""] {
                let answer = try await Self.report(client, player.token, [Self.score(1)], deviceTime: header)
                expectError(answer, .badRequest, "request.invalid_parameter", .invalidParameter)
                #expect(answer.error?.message.contains(DeviceHeader.deviceTime) == true, "\(header)")
            }
        }
    }

    @Test func sandboxAndLiveBoardsNeverMix() async throws {
        try await TestServer.run { client in
            let sandbox = try await client.signUp(environment: "sandbox")
            let live = try await client.signUp(environment: "live")
            _ = try await Self.report(client, sandbox.token, [Self.score(5)])
            let answer = try await client.send(
                .post, "/v1/scores", ScoreReportBatch(reportID: UUID().uuidString, scores: [Self.score(9)]),
                token: live.token, environment: "live")
            #expect(answer.status == .ok)
            #expect(try await Self.page(client, sandbox.token).scores.map(\.value) == [5])
            let livePage = try await client.send(
                .post, "/v1/leaderboards/query",
                LeaderboardQuery(
                    category: nil, playerScope: .global, timeScope: .allTime, rangeStart: 1, rangeLength: 10), token: live.token, environment: "live")
            #expect(try livePage.decode(LeaderboardPage.self).scores.map(\.value) == [9])
        }
    }

    @Test(arguments: [("en", ["1,234 points", "1 point"]), ("de-AT", ["1.234 points", "1 point"]), ("fr", ["1\u{202F}234 points", "1 point"])])
    func formattedValuesFollowTheDevicesLocale(locale: String, expected: [String]) async throws {
        try await TestServer.run { client in
            let many = try await client.signUp(), one = try await client.signUp()
            _ = try await Self.report(client, many.token, [Self.score(1234)])
            _ = try await Self.report(client, one.token, [Self.score(1)])
            let answer = try await client.call(
                .post, "/v1/leaderboards/query", json: #"{"playerScope": "global", "timeScope": "allTime", "rangeStart": 1, "rangeLength": 10}"#,
                token: one.token, extraHeaders: [HTTPField.Name(DeviceHeader.locale)!: locale])
            #expect(try answer.decode(LeaderboardPage.self).scores.map(\.formattedValue) == expected)
        }
    }

    @Test func theListNamesEveryLeaderboardWithLocalizedTitles() async throws {
        try await TestServer.run { client in
            let player = try await client.signUp()
            let answer = try await client.call(.get, "/v1/leaderboards", token: player.token, extraHeaders: [HTTPField.Name(DeviceHeader.locale)!: "de-DE"])
            let list = try answer.decode(LeaderboardList.self).leaderboards
            #expect(list.map(\.category) == ["open.points", "open.time", "open.map1", "open.map2", "open.bounded", "open.maps"])
            #expect(list.first?.title == "Punkte" && list.first?.isDefault == true)
            #expect(list.last?.members == ["open.map1", "open.map2"])
        }
    }

    @Test func studiosReadBoardsAndRemoveACheatersScores() async throws {
        try await TestServer.run(admin: true) { client in
            let honest = try await client.signUp(alias: "Honest")
            let cheater = try await client.signUp(alias: "Cheater")
            _ = try await Self.report(client, honest.token, [Self.score(10), Self.score(5, "open.map1")])
            _ = try await Self.report(client, cheater.token, [Self.score(Int64.max), Self.score(99, "open.map2")])
            let key: HTTPFields = [.authorization: "Bearer \(TestServer.adminKey)"]
            let before = try await client.call(.get, "/admin/v1/games/com.example.open/leaderboards/open.points?timeScope=today", extraHeaders: key)
                .decode(AdminLeaderboardPage.self)
            #expect(before.entries.map(\.alias) == ["Cheater", "Honest"])
            let removed = try await client.call(.delete, "/admin/v1/games/com.example.open/players/\(cheater.player.playerID)/scores", extraHeaders: key)
            #expect(try removed.decode(RemovedScores.self).removed == 2)
            for category in ["open.points", "open.maps"] {
                let after = try await client.call(.get, "/admin/v1/games/com.example.open/leaderboards/\(category)", extraHeaders: key)
                    .decode(AdminLeaderboardPage.self)
                #expect(after.entries.map(\.alias) == ["Honest"] && after.maxRange == 1)
            }
            #expect(try await Self.page(client, cheater.token).localPlayerScore == nil)

            expectError(
                try await client.call(.get, "/admin/v1/games/com.example.open/leaderboards/open.points"),
                .unauthorized, "admin.key_required", .notAuthenticated)
            expectError(
                try await client.call(
                    .get, "/admin/v1/games/com.example.open/leaderboards/open.points",
                    extraHeaders: [.authorization: "Bearer wrong-key-0123456789"]),
                .unauthorized, "admin.key_required", .notAuthenticated)
            expectError(
                try await client.call(.get, "/admin/v1/games/com.example.nope/leaderboards/x", extraHeaders: key),
                .notFound, "admin.unknown_game", .gameUnrecognized)
            expectError(
                try await client.call(.get, "/admin/v1/games/com.example.open/leaderboards/open.points?rangeLength=500", extraHeaders: key),
                .badRequest, "leaderboard.invalid_range", .invalidParameter)
        }
    }

    @Test func adminRoutesAndTheClockAreOffByDefault() async throws {
        try await TestServer.run { client in
            expectError(
                try await client.call(
                    .get, "/admin/v1/games/com.example.open/leaderboards/open.points",
                    extraHeaders: [.authorization: "Bearer \(TestServer.adminKey)"]),
                .forbidden, "admin.disabled", .notSupported)
            expectError(
                try await client.call(.post, "/admin/v1/clock", json: #"{"seconds": 60}"#),
                .forbidden, "admin.disabled", .notSupported)
        }
    }
}
