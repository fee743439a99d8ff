import Foundation
import GameCenterProtocol
import GameCenterStorage
import HTTPTypes
import NetworkFaultProxy
import Testing
@testable import GameCenterServer

/// Recurring leaderboards through the HTTP routes of an in-process server (game `com.example.seasons`, see
/// ``TestServer/seasonsManifest``), with the server's clock stopped on either side of a boundary to the millisecond.
@Suite struct RecurringLeaderboardTests {
    typealias Client = TestServer.Client
    static let game = "com.example.seasons"

    static func report(_ client: Client, _ token: String, _ value: Int64, _ category: String = "seasons.daily") async throws -> Client.Answer {
        try await client.send(
            .post, "/v1/scores", ScoreReportBatch(reportID: UUID().uuidString, scores: [ScoreReport(category: category, value: value, context: 0)]),
            token: token, bundleID: game)
    }

    static func page(
        _ client: Client, _ token: String, category: String = "seasons.daily", occurrence: Date? = nil, lifetimeBest: Bool? = nil
    ) async throws -> Client.Answer {
        try await client.send(
            .post, "/v1/leaderboards/query",
            LeaderboardQuery(
                category: category, playerScope: .global, timeScope: .today, rangeStart: 1, rangeLength: 25, occurrence: occurrence,
                lifetimeBest: lifetimeBest), token: token, bundleID: game)
    }

    /// Stops the server's clock at `millis`.
    static func freeze(_ client: Client, at millis: Int64) async throws {
        let answer = try await client.send(
            .post, "/admin/v1/clock", ClockAdvance(seconds: 0, freezeAt: StoredTime.date(millis)), token: TestServer.adminKey)
        #expect(answer.status == .ok, "\(String(decoding: answer.body, as: UTF8.self))")
    }

    static let daily = OccurrenceSchedule(
        rule: .calendar(try! CronExpression("0 0 * * *"), notBefore: nil), timeZone: TimeZone(identifier: "America/New_York")!)

    /// The next New York midnight at least two days ahead of the real clock (the test clock only goes forward).
    static func nextMidnight() -> Int64 {
        daily.first(startingAfter: Int64(Date().timeIntervalSince1970 * 1000) + 2 * 86_400_000)!.start
    }

    @Test func aScoreBelongsToTheOccurrenceRunningWhenTheServerReceivesIt() async throws {
        try await TestServer.run(admin: true) { client in
            let ann = try await client.signUp(alias: "Ann", bundleID: Self.game)
            let bob = try await client.signUp(alias: "Bob", bundleID: Self.game)
            let midnight = Self.nextMidnight()
            let dayBefore = try #require(Self.daily.latest(startingAtOrBefore: midnight - 1)).start
            // One millisecond before midnight: the old day.
            try await Self.freeze(client, at: midnight - 1)
            let late = try await Self.report(client, ann.token, 50)
            #expect(late.status == .ok)
            let lateEntry = try #require(try late.decode(ScoreReportResult.self).scores.first)
            #expect(lateEntry.occurrence.map(StoredTime.millis) == dayBefore)
            _ = try await Self.report(client, bob.token, 20)
            // Midnight itself: the new day, whose board starts empty.
            try await Self.freeze(client, at: midnight)
            let fresh = try await Self.page(client, ann.token).decode(LeaderboardPage.self)
            #expect(fresh.scores.isEmpty && fresh.maxRange == 0)
            let occurrence = try #require(fresh.occurrence)
            #expect(StoredTime.millis(occurrence.start) == midnight && occurrence.isRunning)
            #expect(occurrence.timeZone == "America/New_York" && occurrence.localStart.contains("T00:00:00-0"))
            #expect(occurrence.previousStart.map(StoredTime.millis) == dayBefore)
            #expect(occurrence.nextStart.map(StoredTime.millis) == StoredTime.millis(occurrence.end))

            let early = try await Self.report(client, bob.token, 30)
            #expect(try early.decode(ScoreReportResult.self).scores.first?.occurrence.map(StoredTime.millis) == midnight)
            let today = try await Self.page(client, ann.token).decode(LeaderboardPage.self)
            #expect(today.scores.map(\.value) == [30] && today.scores.first?.playerID == bob.player.playerID)
            #expect(today.localPlayerScore == nil)

            // The previous occurrence stays, with exact ranks.
            let yesterday = try await Self.page(client, bob.token, occurrence: occurrence.previousStart).decode(LeaderboardPage.self)
            #expect(yesterday.scores.map(\.value) == [50, 20] && yesterday.scores.map(\.rank) == [1, 2])
            #expect(yesterday.localPlayerScore?.rank == 2)
            #expect(yesterday.occurrence?.isRunning == false && yesterday.occurrence.map { StoredTime.millis($0.end) } == midnight)

            // Lifetime bests: each player's best over every occurrence.
            let lifetime = try await Self.page(client, ann.token, lifetimeBest: true).decode(LeaderboardPage.self)
            #expect(lifetime.scores.map(\.value) == [50, 30] && lifetime.occurrence == nil)
        }
    }

    @Test func applesRuleRefusesScoresInItsGapsWithADistinctError() async throws {
        try await TestServer.run(admin: true) { client in
            let player = try await client.signUp(bundleID: Self.game)
            // Occurrences run an hour every two hours from 2026-01-01T00:00Z: find an end ahead of the real clock.
            let origin = OccurrenceScheduleTests.millis("2026-01-01T00:00:00Z")
            let now = Int64(Date().timeIntervalSince1970 * 1000) + 86_400_000
            let end = origin + ((now - origin) / 7_200_000 + 1) * 7_200_000 + 3_600_000
            try await Self.freeze(client, at: end - 1)
            #expect(try await Self.report(client, player.token, 90, "seasons.sprint").status == .ok)
            try await Self.freeze(client, at: end)
            let refused = try await Self.report(client, player.token, 80, "seasons.sprint")
            expectError(refused, .conflict, "leaderboard.no_occurrence", .invalidParameter)
            #expect(String(decoding: refused.body, as: UTF8.self).contains("the next one starts at"))
            // Between occurrences a page shows the last one, over.
            let last = try await Self.page(client, player.token, category: "seasons.sprint").decode(LeaderboardPage.self)
            #expect(last.scores.map(\.value) == [90] && last.occurrence?.isRunning == false)
            try await Self.freeze(client, at: end + 3_600_000)
            #expect(try await Self.report(client, player.token, 70, "seasons.sprint").status == .ok)
            let next = try await Self.page(client, player.token, category: "seasons.sprint").decode(LeaderboardPage.self)
            #expect(next.scores.map(\.value) == [70] && next.occurrence?.isRunning == true)
            #expect(next.occurrence?.previousStart.map(StoredTime.millis) == end - 3_600_000)
            // Apple's rule keeps no lifetime bests unless its manifest says so.
            expectError(
                try await Self.page(client, player.token, category: "seasons.sprint", lifetimeBest: true), .badRequest, "request.invalid_parameter",
                .invalidParameter)
        }
    }

    @Test func onlyTheKeptOccurrencesStayAndOlderOnesAreErased() async throws {
        try await TestServer.run(admin: true) { client in
            let player = try await client.signUp(bundleID: Self.game)
            var midnight = Self.nextMidnight()
            var starts: [Int64] = []
            for day in 0..<5 {
                try await Self.freeze(client, at: midnight + 3_600_000)
                #expect(try await Self.report(client, player.token, Int64(10 + day)).status == .ok)
                starts.append(midnight)
                let page = try await Self.page(client, player.token).decode(LeaderboardPage.self)
                #expect(page.scores.map(\.value) == [Int64(10 + day)])
                midnight = StoredTime.millis(try #require(page.occurrence?.nextStart))
            }
            // keep: 3 — the first two days are gone, the other three answer.
            for old in starts.prefix(2) {
                expectError(
                    try await Self.page(client, player.token, occurrence: StoredTime.date(old)), .badRequest, "request.invalid_parameter", .invalidParameter)
            }
            for (day, start) in starts.enumerated().dropFirst(2) {
                let page = try await Self.page(client, player.token, occurrence: StoredTime.date(start)).decode(LeaderboardPage.self)
                #expect(page.scores.map(\.value) == [Int64(10 + day)])
            }
            let oldest = try await Self.page(client, player.token, occurrence: StoredTime.date(starts[2])).decode(LeaderboardPage.self)
            #expect(oldest.occurrence?.previousStart == nil, "the previous occurrence is no longer kept")
            // The first day's scores leave storage (in the background; the second day's stay one occurrence more, for
            // its final standings), but for lifetime bests.
            let services = client.services
            let first = starts[0]
            var left = -1
            for _ in 0..<100 {
                left = try await services.database.read { storage in
                    try await storage.boardScores(playerID: player.player.playerID, bundleID: Self.game).filter { $0.record.occurrence == first }.count
                }
                if left == 0 { break }
                try await Task.sleep(for: .milliseconds(50))
            }
            #expect(left == 0, "the first day's score is no longer the lifetime best (14 is), so it is erased")
            let lifetime = try await Self.page(client, player.token, lifetimeBest: true).decode(LeaderboardPage.self)
            #expect(lifetime.scores.map(\.value) == [14])
            // Not a start of the schedule: refused.
            expectError(
                try await Self.page(client, player.token, occurrence: StoredTime.date(starts[2] + 1)), .badRequest, "request.invalid_parameter",
                .invalidParameter)
        }
    }

    @Test func theListShowsKindsDescriptionsAndOccurrencesAndNeverHiddenBoards() async throws {
        try await TestServer.run(admin: true) { client in
            let player = try await client.signUp(bundleID: Self.game)
            let list = try await client.call(.get, "/v1/leaderboards", token: player.token, bundleID: Self.game).decode(LeaderboardList.self)
            #expect(list.leaderboards.map(\.category) == ["seasons.daily", "seasons.sprint", "seasons.cup"])
            let daily = list.leaderboards[0]
            #expect(daily.kind == .recurring && daily.description == "Best score of the day in New York" && daily.lifetimeBest == true)
            let occurrence = try #require(daily.occurrence)
            #expect(occurrence.isRunning && occurrence.timeZone == "America/New_York")
            #expect([23, 24, 25].map { Double($0 * 3600) }.contains(occurrence.end.timeIntervalSince(occurrence.start)))
            #expect(list.leaderboards[1].occurrence?.timeZone == "UTC")
            // A hidden board takes scores and answers queries by name.
            #expect(try await Self.report(client, player.token, 5, "seasons.secret").status == .ok)
            let secret = try await Self.page(client, player.token, category: "seasons.secret").decode(LeaderboardPage.self)
            #expect(secret.scores.map(\.value) == [5] && secret.occurrence == nil)
            // Classic boards have no occurrences.
            expectError(
                try await Self.page(client, player.token, category: "seasons.secret", occurrence: Date()), .badRequest, "request.invalid_parameter",
                .invalidParameter)
        }
    }

    /// Two nodes on one PostgreSQL database, their clocks stopped together on either side of a boundary: a score
    /// received by either node lands in the occurrence running by its clock, and both nodes rank it there.
    @Test(.enabled(if: SharedDatabaseNodesTests.postgresURL != nil), .timeLimit(.minutes(2)))
    func twoNodesOnPostgreSQLAgreeOnEachScoresOccurrence() async throws {
        let url = try await SharedDatabaseNodesTests.freshDatabase()
        try await TestServer.run(admin: true, databaseURL: url, nodeID: "node-a") { a in
            try await TestServer.run(admin: true, databaseURL: url, nodeID: "node-b") { b in
                let ann = try await a.signUp(alias: "Ann", bundleID: Self.game)
                let bob = try await b.signUp(alias: "Bob", bundleID: Self.game)
                let midnight = Self.nextMidnight()
                for node in [a, b] { try await Self.freeze(node, at: midnight - 1) }
                #expect(try await Self.report(a, ann.token, 40).status == .ok)
                for node in [a, b] { try await Self.freeze(node, at: midnight) }
                #expect(try await Self.report(b, bob.token, 60).status == .ok)
                #expect(try await Self.report(a, ann.token, 10).status == .ok)
                for node in [a, b] {
                    try await waitUntil("both nodes rank both days") {
                        let today = try await Self.page(node, ann.token).decode(LeaderboardPage.self)
                        guard today.scores.map(\.value) == [60, 10], let previous = today.occurrence?.previousStart else { return false }
                        let yesterday = try await Self.page(node, ann.token, occurrence: previous).decode(LeaderboardPage.self)
                        return yesterday.scores.map(\.value) == [40]
                    }
                }
                let lifetime = try await Self.page(b, bob.token, lifetimeBest: true).decode(LeaderboardPage.self)
                #expect(lifetime.scores.map(\.value) == [60, 40])
                // Both nodes' clocks record the day's end: it is recorded once, with the final standings.
                let day = try #require(Self.daily.latest(startingAtOrBefore: midnight - 1)).start
                try await waitUntil("the day's end is recorded") { try await Self.events(a, occurrence: day).contains { $0.kind == .ended } }
                try await Task.sleep(for: .milliseconds(2500))
                for node in [a, b] {
                    let ended = try await Self.events(node, occurrence: day).filter { $0.kind == .ended }
                    #expect(ended.count == 1 && ended.first?.standings.map(\.score.value) == [40])
                }
            }
        }
    }

    /// The occurrence events of `seasons.daily` in the sandbox that start at `occurrence`.
    static func events(_ client: Client, occurrence: Int64) async throws -> [LeaderboardOccurrenceEvent] {
        let answer = try await client.call(
            .get, "/admin/v1/games/\(game)/occurrence-events?limit=1000", extraHeaders: [.authorization: "Bearer \(TestServer.adminKey)"])
        #expect(answer.status == .ok, "\(String(decoding: answer.body, as: UTF8.self))")
        return try answer.decode(LeaderboardOccurrenceEventList.self).events.filter {
            $0.category == "seasons.daily" && $0.environment == .sandbox && StoredTime.millis($0.start) == occurrence
        }
    }

    /// Every node down across a boundary: the occurrence's end is recorded once, with its final standings, by the
    /// first server back — and never again.
    @Test func anOccurrencesEndIsRecordedOnceEvenWhenNoServerRanAtTheBoundary() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("occurrence-events-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = "sqlite:\(folder.path)/db.sqlite"
        let midnight = Self.nextMidnight()
        let day = try #require(Self.daily.latest(startingAtOrBefore: midnight - 1))
        try await TestServer.run(admin: true, databaseURL: url) { client in
            let ann = try await client.signUp(alias: "Ann", bundleID: Self.game)
            let bob = try await client.signUp(alias: "Bob", bundleID: Self.game)
            try await Self.freeze(client, at: midnight - 60_000)
            #expect(try await Self.report(client, ann.token, 70).status == .ok)
            #expect(try await Self.report(client, bob.token, 90).status == .ok)
            try await waitUntil("the running day's start is recorded") {
                try await Self.events(client, occurrence: day.start).map(\.kind) == [.started]
            }
        }
        // The server is down at midnight; the next one starts after it.
        try await TestServer.run(admin: true, databaseURL: url) { client in
            try await Self.freeze(client, at: midnight + 5_000)
            try await waitUntil("the day's end is recorded by the server that came back") {
                try await Self.events(client, occurrence: day.start).contains { $0.kind == .ended }
            }
            try await Self.freeze(client, at: midnight + 10_000)
            try await Task.sleep(for: .milliseconds(2500))  // more ticks of the clock: none records it again
            let events = try await Self.events(client, occurrence: day.start)
            #expect(events.map(\.kind) == [.started, .ended])
            let ended = try #require(events.last)
            #expect(ended.standings.map(\.score.value) == [90, 70] && ended.standings.map(\.alias) == ["Bob", "Ann"])
            #expect(ended.standings.map(\.score.rank) == [1, 2] && StoredTime.millis(ended.end) == midnight)
            #expect(StoredTime.millis(ended.recordedAt) == midnight + 5_000)
            #expect(try await Self.events(client, occurrence: midnight).map(\.kind) == [.started])
        }
    }

    @Test func setsListTheirBoardsInTheirOrderWithoutHiddenOnes() async throws {
        try await TestServer.run { client in
            let player = try await client.signUp(bundleID: Self.game)
            let answer = try await client.call(
                .get, "/v1/leaderboard-sets", token: player.token, bundleID: Self.game, extraHeaders: [HTTPField.Name(DeviceHeader.locale)!: "de"])
            let sets = try answer.decode(LeaderboardSetList.self).sets
            #expect(sets.map(\.identifier) == ["seasons.all", "seasons.quick"])
            #expect(sets[0].title == "Alle Bestenlisten" && sets[0].groupIdentifier == "seasons.group" && sets[1].groupIdentifier == nil)
            #expect(sets[0].leaderboards == ["seasons.sprint", "seasons.daily"], "the hidden board is left out")
            #expect(sets[1].leaderboards == ["seasons.sprint"])
            // A game without sets answers none.
            let open = try await client.signUp()
            #expect(try await client.call(.get, "/v1/leaderboard-sets", token: open.token).decode(LeaderboardSetList.self).sets.isEmpty)
        }
    }

    @Test func theClockStopsOnlyForward() async throws {
        try await TestServer.run(admin: true) { client in
            let answer = try await client.send(
                .post, "/admin/v1/clock", ClockAdvance(seconds: 0, freezeAt: Date(timeIntervalSinceNow: -60)), token: TestServer.adminKey)
            expectError(answer, .badRequest, "request.invalid_parameter", .invalidParameter)
        }
    }

    /// Times from the network can be any number: those that cannot be stored are refused, never a crash (schemathesis
    /// found the first).
    @Test(arguments: ["1e300", "-1e300", "9.3e15", "9223372036854775.807"])
    func timesThatCannotBeStoredAreRefused(_ seconds: String) async throws {
        try await TestServer.run(admin: true) { client in
            let player = try await client.signUp(bundleID: Self.game)
            let clock = try await client.call(
                .post, "/admin/v1/clock", json: #"{"seconds": 0, "freezeAt": \#(seconds)}"#,
                extraHeaders: [.authorization: "Bearer \(TestServer.adminKey)"])
            expectError(clock, .badRequest, "request.invalid_parameter", .invalidParameter)
            let page = try await client.call(
                .post, "/v1/leaderboards/query",
                json:
                    #"{"category": "seasons.daily", "playerScope": "global", "timeScope": "allTime", "rangeStart": 1, "rangeLength": 5, "occurrence": \#(seconds)}"#,
                token: player.token, bundleID: Self.game)
            expectError(page, .badRequest, "request.invalid_parameter", .invalidParameter)
        }
    }
}
