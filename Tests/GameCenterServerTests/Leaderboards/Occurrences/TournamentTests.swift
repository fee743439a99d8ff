import Foundation
import GameCenterProtocol
import GameCenterStorage
import HTTPTypes
import NetworkFaultProxy
import Testing
@testable import GameCenterServer

/// Tournaments through the HTTP routes: `seasons.cup` (``TestServer/seasonsManifest``), a daily board in UTC that
/// takes its first 2 entrants, who must join, and 2 scores from each per day.
@Suite struct TournamentTests {
    typealias Client = TestServer.Client
    static let game = RecurringLeaderboardTests.game

    static func join(_ client: Client, _ token: String) async throws -> Client.Answer {
        try await client.call(.post, "/v1/leaderboards/seasons.cup/entry", token: token, bundleID: game)
    }

    static func entry(_ client: Client, _ token: String) async throws -> Client.Answer {
        try await client.call(.get, "/v1/leaderboards/seasons.cup/entry", token: token, bundleID: game)
    }

    static func report(_ client: Client, _ token: String, _ value: Int64, reportID: String = UUID().uuidString) async throws -> Client.Answer {
        try await client.send(
            .post, "/v1/scores", ScoreReportBatch(reportID: reportID, scores: [ScoreReport(category: "seasons.cup", value: value, context: 0)]),
            token: token, bundleID: game)
    }

    @Test func entrantsJoinFirstAndEachHasTheirAttempts() async throws {
        try await TestServer.run(admin: true) { client in
            let ann = try await client.signUp(alias: "Ann", bundleID: Self.game)
            let bob = try await client.signUp(alias: "Bob", bundleID: Self.game)
            let cleo = try await client.signUp(alias: "Cleo", bundleID: Self.game)
            expectError(try await Self.report(client, ann.token, 10), .forbidden, "leaderboard.not_joined", .invalidParameter)
            expectError(try await Self.entry(client, ann.token), .forbidden, "leaderboard.not_joined", .invalidParameter)

            let joined = try await Self.join(client, ann.token).decode(TournamentEntry.self)
            #expect(joined.attemptsUsed == 0 && joined.attemptsLeft == 2 && joined.entrants == 1 && joined.maxSize == 2)
            #expect(joined.occurrence.isRunning && joined.occurrence.timeZone == "UTC")
            #expect(try await Self.join(client, ann.token).decode(TournamentEntry.self).entrants == 1, "joining again answers the entry")
            #expect(try await Self.join(client, bob.token).status == .ok)
            expectError(try await Self.join(client, cleo.token), .conflict, "leaderboard.tournament_full", .invalidParameter)

            let first = try await Self.report(client, ann.token, 10)
            #expect(try first.decode(ScoreReportResult.self).scores.first?.attemptsLeft == 1)
            let repeated = try await Self.report(client, ann.token, 30, reportID: "cup-report-2")
            #expect(try repeated.decode(ScoreReportResult.self).scores.first?.attemptsLeft == 0)
            // The same report again changes nothing and uses no attempt.
            #expect(try await Self.report(client, ann.token, 30, reportID: "cup-report-2").decode(ScoreReportResult.self).scores.isEmpty)
            let refused = try await Self.report(client, ann.token, 99)
            expectError(refused, .conflict, "leaderboard.no_attempts_left", .invalidParameter)
            #expect(String(decoding: refused.body, as: UTF8.self).contains("allows you 2 scores; you reported 2"))
            let page = try await RecurringLeaderboardTests.page(client, bob.token, category: "seasons.cup").decode(LeaderboardPage.self)
            #expect(page.scores.map(\.value) == [30], "the refused score was not stored")

            // An admin grants one attempt more.
            let grant = try await client.send(
                .post, "/admin/v1/games/\(Self.game)/leaderboards/seasons.cup/players/\(ann.player.playerID)/attempts",
                TournamentAttemptGrant(extra: 1), token: TestServer.adminKey)
            #expect(try grant.decode(TournamentEntry.self).attemptsLeft == 1)
            #expect(try await Self.report(client, ann.token, 99).decode(ScoreReportResult.self).scores.first?.attemptsLeft == 0)
            let mine = try await Self.entry(client, ann.token).decode(TournamentEntry.self)
            #expect(mine.attemptsUsed == 3 && mine.attemptsLeft == 0 && mine.entrants == 2)
            expectError(
                try await client.send(
                    .post, "/admin/v1/games/\(Self.game)/leaderboards/seasons.cup/players/\(cleo.player.playerID)/attempts",
                    TournamentAttemptGrant(extra: 1), token: TestServer.adminKey), .forbidden, "leaderboard.not_joined", .invalidParameter)

            // The next day is a new occurrence: nobody is in it yet.
            let schedule = OccurrenceSchedule(rule: .calendar(try CronExpression("0 0 * * *"), notBefore: nil), timeZone: TimeZone(identifier: "UTC")!)
            let tomorrow = try #require(schedule.first(startingAfter: Int64(Date().timeIntervalSince1970 * 1000)))
            try await RecurringLeaderboardTests.freeze(client, at: tomorrow.start)
            expectError(try await Self.entry(client, ann.token), .forbidden, "leaderboard.not_joined", .invalidParameter)
            #expect(try await Self.join(client, cleo.token).decode(TournamentEntry.self).entrants == 1)
            // A classic board is no tournament.
            expectError(
                try await client.call(.post, "/v1/leaderboards/seasons.secret/entry", token: ann.token, bundleID: Self.game), .badRequest,
                "leaderboard.not_a_tournament", .invalidParameter)
        }
    }

    static func end(_ client: Client) async throws -> Client.Answer {
        try await client.send(.post, "/admin/v1/games/\(game)/leaderboards/seasons.cup/end", TournamentEndBody(), token: TestServer.adminKey)
    }

    /// The ends recorded for `seasons.cup`'s occurrence that starts at `occurrence`, in the sandbox.
    static func ends(_ client: Client, occurrence: Int64) async throws -> [LeaderboardOccurrenceEvent] {
        let answer = try await client.call(
            .get, "/admin/v1/games/\(game)/occurrence-events?limit=1000", extraHeaders: [.authorization: "Bearer \(TestServer.adminKey)"])
        return try answer.decode(LeaderboardOccurrenceEventList.self).events.filter {
            $0.category == "seasons.cup" && $0.environment == .sandbox && $0.kind == .ended && StoredTime.millis($0.start) == occurrence
        }
    }

    /// Nakama's missing "end now": an admin ends the running occurrence early, once; it takes no more entrants or scores,
    /// its end is recorded at once with the standings, and the scheduled end records nothing more.
    @Test func anAdminEndsTheRunningOccurrenceEarlyOnce() async throws {
        try await TestServer.run(admin: true) { client in
            let ann = try await client.signUp(alias: "Ann", bundleID: Self.game)
            let bob = try await client.signUp(alias: "Bob", bundleID: Self.game)
            let cleo = try await client.signUp(alias: "Cleo", bundleID: Self.game)
            let schedule = OccurrenceSchedule(rule: .calendar(try CronExpression("0 0 * * *"), notBefore: nil), timeZone: TimeZone(identifier: "UTC")!)
            let day = try #require(schedule.first(startingAfter: Int64(Date().timeIntervalSince1970 * 1000) + 86_400_000))
            try await RecurringLeaderboardTests.freeze(client, at: day.start + 3_600_000)
            for player in [ann, bob] { #expect(try await Self.join(client, player.token).status == .ok) }
            #expect(try await Self.report(client, ann.token, 10).status == .ok)
            #expect(try await Self.report(client, bob.token, 20).status == .ok)

            let ended = try await Self.end(client)
            #expect(ended.status == .ok, "\(String(decoding: ended.body, as: UTF8.self))")
            let event = try ended.decode(LeaderboardOccurrenceEvent.self)
            #expect(event.kind == .ended && StoredTime.millis(event.start) == day.start && StoredTime.millis(event.end) == day.start + 3_600_000)
            #expect(event.standings.map(\.score.value) == [20, 10] && event.standings.map(\.alias) == ["Bob", "Ann"])
            expectError(try await Self.end(client), .conflict, "leaderboard.tournament_ended", .invalidParameter)
            expectError(try await Self.report(client, ann.token, 99), .conflict, "leaderboard.tournament_ended", .invalidParameter)
            expectError(try await Self.join(client, cleo.token), .conflict, "leaderboard.tournament_ended", .invalidParameter)
            let page = try await RecurringLeaderboardTests.page(client, bob.token, category: "seasons.cup").decode(LeaderboardPage.self)
            #expect(page.scores.map(\.value) == [20, 10], "the refused score was not stored")

            // The scheduled end finds the end recorded; the next occurrence runs as usual.
            try await RecurringLeaderboardTests.freeze(client, at: day.end + 1000)
            try await Task.sleep(for: .milliseconds(2500))
            let recorded = try await Self.ends(client, occurrence: day.start)
            #expect(recorded.count == 1, "\(recorded)")
            #expect(try await Self.join(client, cleo.token).status == .ok)
            expectError(
                try await client.send(
                    .post, "/admin/v1/games/\(Self.game)/leaderboards/seasons.daily/end", TournamentEndBody(), token: TestServer.adminKey),
                .badRequest, "leaderboard.not_a_tournament", .invalidParameter)
        }
    }

    static func start(_ client: Client) async throws -> Client.Answer {
        try await client.send(.post, "/admin/v1/games/\(game)/leaderboards/seasons.cup/start", TournamentStartBody(), token: TestServer.adminKey)
    }

    /// The starts recorded for `seasons.cup`'s occurrence that starts at `occurrence`, in the sandbox.
    static func starts(_ client: Client, occurrence: Int64) async throws -> [LeaderboardOccurrenceEvent] {
        let answer = try await client.call(
            .get, "/admin/v1/games/\(game)/occurrence-events?limit=1000", extraHeaders: [.authorization: "Bearer \(TestServer.adminKey)"])
        return try answer.decode(LeaderboardOccurrenceEventList.self).events.filter {
            $0.category == "seasons.cup" && $0.environment == .sandbox && $0.kind == .started && StoredTime.millis($0.start) == occurrence
        }
    }

    /// Nakama's missing "start now": once the running occurrence was ended, an admin starts the next one at once; it
    /// takes entrants and scores from then on, answers say it runs, and its start is recorded once, not again at the
    /// scheduled start.
    @Test func anAdminStartsTheNextOccurrenceNow() async throws {
        try await TestServer.run(admin: true) { client in
            let ann = try await client.signUp(alias: "Ann", bundleID: Self.game)
            let bob = try await client.signUp(alias: "Bob", bundleID: Self.game)
            let schedule = OccurrenceSchedule(rule: .calendar(try CronExpression("0 0 * * *"), notBefore: nil), timeZone: TimeZone(identifier: "UTC")!)
            let day = try #require(schedule.first(startingAfter: Int64(Date().timeIntervalSince1970 * 1000) + 86_400_000))
            let now = day.start + 3_600_000
            try await RecurringLeaderboardTests.freeze(client, at: now)
            #expect(try await Self.join(client, ann.token).status == .ok)
            #expect(try await Self.report(client, ann.token, 10).status == .ok)

            // While an occurrence takes scores, the next cannot start.
            expectError(try await Self.start(client), .conflict, "leaderboard.tournament_running", .invalidParameter)
            #expect(try await Self.end(client).status == .ok)
            let started = try await Self.start(client)
            #expect(started.status == .ok, "\(String(decoding: started.body, as: UTF8.self))")
            let event = try started.decode(LeaderboardOccurrenceEvent.self)
            #expect(event.kind == .started && StoredTime.millis(event.start) == day.end && StoredTime.millis(event.recordedAt) == now)
            expectError(try await Self.start(client), .conflict, "leaderboard.tournament_running", .invalidParameter)

            // The new occurrence takes entrants and scores now; answers show it running.
            let entry = try await Self.join(client, bob.token).decode(TournamentEntry.self)
            #expect(StoredTime.millis(entry.occurrence.start) == day.end && entry.occurrence.isRunning && entry.entrants == 1)
            let reported = try await Self.report(client, bob.token, 5).decode(ScoreReportResult.self)
            #expect(reported.scores.first.flatMap(\.occurrence).map(StoredTime.millis) == day.end && reported.scores.first?.attemptsLeft == 1)
            let page = try await RecurringLeaderboardTests.page(client, bob.token, category: "seasons.cup").decode(LeaderboardPage.self)
            #expect(page.scores.map(\.value) == [5] && page.occurrence.map { StoredTime.millis($0.start) } == day.end && page.occurrence?.isRunning == true)
            let old = try await RecurringLeaderboardTests.page(client, bob.token, category: "seasons.cup", occurrence: StoredTime.date(day.start))
                .decode(LeaderboardPage.self)
            #expect(old.scores.map(\.value) == [10])
            expectError(try await Self.report(client, ann.token, 7), .forbidden, "leaderboard.not_joined", .invalidParameter)

            // At the scheduled start the clock finds the start recorded; scores go on counting in the same occurrence.
            try await RecurringLeaderboardTests.freeze(client, at: day.end + 1000)
            try await Task.sleep(for: .milliseconds(2500))
            #expect(try await Self.starts(client, occurrence: day.end).count == 1)
            let later = try await Self.report(client, bob.token, 8).decode(ScoreReportResult.self)
            #expect(later.scores.first.flatMap(\.occurrence).map(StoredTime.millis) == day.end && later.scores.first?.attemptsLeft == 0)
        }
    }

    /// Two nodes on one PostgreSQL database: an occurrence started on one node takes scores on the other within a tick
    /// of its clock.
    @Test(.enabled(if: SharedDatabaseNodesTests.postgresURL != nil), .timeLimit(.minutes(2)))
    func anOccurrenceStartedOnOneNodeTakesScoresOnTheOther() async throws {
        let url = try await SharedDatabaseNodesTests.freshDatabase()
        try await TestServer.run(admin: true, databaseURL: url, nodeID: "node-a") { a in
            try await TestServer.run(admin: true, databaseURL: url, nodeID: "node-b") { b in
                let ann = try await a.signUp(alias: "Ann", bundleID: Self.game)
                #expect(try await Self.join(b, ann.token).status == .ok)
                #expect(try await Self.end(a).status == .ok)
                #expect(try await Self.start(a).status == .ok)
                try await waitUntil("node b takes entrants of the occurrence started on node a", within: .seconds(10)) {
                    try await Self.join(b, ann.token).status == .ok
                }
                let reported = try await Self.report(b, ann.token, 20)
                #expect(reported.status == .ok, "\(String(decoding: reported.body, as: UTF8.self))")
                expectError(try await Self.start(b), .conflict, "leaderboard.tournament_running", .invalidParameter)
            }
        }
    }

    /// Two nodes on one PostgreSQL database: an occurrence ended on one node refuses scores on the other at once.
    @Test(.enabled(if: SharedDatabaseNodesTests.postgresURL != nil), .timeLimit(.minutes(2)))
    func anOccurrenceEndedOnOneNodeRefusesScoresOnTheOther() async throws {
        let url = try await SharedDatabaseNodesTests.freshDatabase()
        try await TestServer.run(admin: true, databaseURL: url, nodeID: "node-a") { a in
            try await TestServer.run(admin: true, databaseURL: url, nodeID: "node-b") { b in
                let ann = try await a.signUp(alias: "Ann", bundleID: Self.game)
                #expect(try await Self.join(b, ann.token).status == .ok)
                #expect(try await Self.report(b, ann.token, 10).status == .ok)
                #expect(try await Self.end(a).status == .ok)
                expectError(try await Self.report(b, ann.token, 20), .conflict, "leaderboard.tournament_ended", .invalidParameter)
            }
        }
    }

    @Test func joinsAtOnceNeverPassTheSize() async throws {
        try await TestServer.run { client in
            var tokens: [String] = []
            for index in 0..<8 { tokens.append(try await client.signUp(alias: "P\(index)", bundleID: Self.game).token) }
            let statuses = try await withThrowingTaskGroup(of: HTTPResponse.Status.self) { group in
                for token in tokens { group.addTask { try await Self.join(client, token).status } }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(statuses.filter { $0 == .ok }.count == 2 && statuses.filter { $0 == .conflict }.count == 6)
        }
    }

    /// Two nodes on one PostgreSQL database: joins sent to both at once still stop at the size.
    @Test(.enabled(if: SharedDatabaseNodesTests.postgresURL != nil), .timeLimit(.minutes(2)))
    func joinsOnTwoNodesAtOnceNeverPassTheSize() async throws {
        let url = try await SharedDatabaseNodesTests.freshDatabase()
        try await TestServer.run(databaseURL: url, nodeID: "node-a") { a in
            try await TestServer.run(databaseURL: url, nodeID: "node-b") { b in
                var players: [(Client, String)] = []
                for index in 0..<8 {
                    let node = index.isMultiple(of: 2) ? a : b
                    players.append((node, try await node.signUp(alias: "P\(index)", bundleID: Self.game).token))
                }
                let statuses = try await withThrowingTaskGroup(of: HTTPResponse.Status.self) { group in
                    for (node, token) in players { group.addTask { try await Self.join(node, token).status } }
                    return try await group.reduce(into: []) { $0.append($1) }
                }
                #expect(statuses.filter { $0 == .ok }.count == 2 && statuses.filter { $0 == .conflict }.count == 6)
            }
        }
    }

    /// One player joining several times at once, on two PostgreSQL nodes: one entry, counted once.
    @Test(.enabled(if: SharedDatabaseNodesTests.postgresURL != nil), .timeLimit(.minutes(2)))
    func aPlayerJoiningTwiceAtOnceOnTwoNodesIsOneEntrant() async throws {
        let url = try await SharedDatabaseNodesTests.freshDatabase()
        try await TestServer.run(databaseURL: url, nodeID: "node-a") { a in
            try await TestServer.run(databaseURL: url, nodeID: "node-b") { b in
                let ann = try await a.signUp(alias: "Ann", bundleID: Self.game)
                let statuses = try await withThrowingTaskGroup(of: HTTPResponse.Status.self) { group in
                    for index in 0..<6 { group.addTask { try await Self.join(index.isMultiple(of: 2) ? a : b, ann.token).status } }
                    return try await group.reduce(into: []) { $0.append($1) }
                }
                #expect(statuses.allSatisfy { $0 == .ok }, "\(statuses)")
                #expect(try await Self.entry(b, ann.token).decode(TournamentEntry.self).entrants == 1)
            }
        }
    }
}
