import Foundation
import GameCenterProtocol
import HTTPTypes
import Testing
@testable import GameCenterServer

/// The abuse limits through the routes: each refuses with `429 request.rate_limited` and `Retry-After`, counts only
/// its own subject, refills with time, and is counted in `/metrics`.
@Suite struct RateLimitTests {
    static func limits(_ settings: String...) throws -> RateLimits {
        var limits = RateLimits()
        for setting in settings { try limits.set(setting) }
        return limits
    }

    static func expectLimited(_ answer: TestServer.Client.Answer, sourceLocation: SourceLocation = #_sourceLocation) {
        expectError(answer, .tooManyRequests, "request.rate_limited", .communicationsFailure, sourceLocation: sourceLocation)
        let retry = Int(answer.headers[.retryAfter] ?? "")
        #expect(retry != nil && retry! >= 1 && retry == answer.error?.retryAfterSeconds, sourceLocation: sourceLocation)
    }

    static func refused(_ client: TestServer.Client, _ limit: String) throws -> Double {
        let text = String(decoding: client.services.metrics.exposition(), as: UTF8.self)
        let samples = try MetricsTests.parse(text)
        return samples.first { $0.name == "ratelimit_refused" && $0.labels["limit"] == limit }?.value ?? 0
    }

    /// The issue's case: request → decline → request again, 50 times, gave the victim 50 events.
    @Test func askingTheSamePlayerAgainAndAgainStopsAtThePairsLimit() async throws {
        try await TestServer.run(rateLimits: try Self.limits("friend-requests-to-one-player=3/86400")) { client in
            let pest = try await client.signUp(alias: "Pest"), victim = try await client.signUp(alias: "Victim")
            let body = SendFriendRequests(playerIDs: [victim.player.playerID], message: nil)
            for _ in 0..<3 {
                #expect(try await client.send(.post, "/v1/friend-requests", body, token: pest.token).status == .created)
                let request = try #require(
                    try await client.call(.get, "/v1/friend-requests", token: victim.token).decode(FriendRequestList.self).requests.first)
                #expect(try await client.call(.post, "/v1/friend-requests/\(request.requestID)/decline", token: victim.token).status == .noContent)
            }
            let fourth = try await client.send(.post, "/v1/friend-requests", body, token: pest.token)
            Self.expectLimited(fourth)
            #expect(fourth.error?.message.contains("3 per day") == true, "\(fourth.error?.message ?? "")")
            #expect(try await client.call(.get, "/v1/friend-requests", token: victim.token).decode(FriendRequestList.self).requests.isEmpty)
            // Another player is not limited by the pest's count, nor is the pest towards someone else.
            let other = try await client.signUp(alias: "Other")
            #expect(try await client.send(.post, "/v1/friend-requests", body, token: other.token).status == .created)
            #expect(
                try await client.send(
                    .post, "/v1/friend-requests", SendFriendRequests(playerIDs: [other.player.playerID], message: nil),
                    token: pest.token
                ).status == .created)
            #expect(try Self.refused(client, "friend-requests-to-one-player") == 1)
        }
    }

    @Test func aPlayersFriendRequestsAreLimitedAllOrNoneAndRefillWithTime() async throws {
        try await TestServer.run(rateLimits: try Self.limits("friend-requests=4/3600"), admin: true) { client in
            let sender = try await client.signUp(alias: "Sender")
            var recipients: [String] = []
            for n in 0..<6 { recipients.append(try await client.signUp(alias: "R\(n)").player.playerID) }
            #expect(
                try await client.send(
                    .post, "/v1/friend-requests", SendFriendRequests(playerIDs: Array(recipients[0..<3]), message: nil),
                    token: sender.token
                ).status == .created)
            // Two more do not fit in the one left: neither is sent.
            Self.expectLimited(
                try await client.send(
                    .post, "/v1/friend-requests", SendFriendRequests(playerIDs: Array(recipients[3..<5]), message: nil),
                    token: sender.token))
            #expect(
                try await client.send(
                    .post, "/v1/friend-requests", SendFriendRequests(playerIDs: [recipients[3]], message: nil),
                    token: sender.token
                ).status == .created)
            let refused = try await client.send(.post, "/v1/friend-requests", SendFriendRequests(playerIDs: [recipients[4]], message: nil), token: sender.token)
            Self.expectLimited(refused)
            // 4 per hour: one comes back every 15 minutes, as Retry-After said.
            #expect((890...900).contains(refused.error?.retryAfterSeconds ?? 0), "\(refused.error?.retryAfterSeconds ?? 0)")
            try await LeaderboardTests.advanceClock(client, hours: 0.25)
            #expect(
                try await client.send(
                    .post, "/v1/friend-requests", SendFriendRequests(playerIDs: [recipients[4]], message: nil),
                    token: sender.token
                ).status == .created)
            Self.expectLimited(
                try await client.send(
                    .post, "/v1/friend-requests", SendFriendRequests(playerIDs: [recipients[5]], message: nil),
                    token: sender.token))
        }
    }

    @Test func signUpsAndSignInsAreLimitedPerAddress() async throws {
        try await TestServer.run(rateLimits: try Self.limits("sign-ups=2/3600", "sign-ins=3/60")) { client in
            let farm = try client.from("203.0.113.7")
            func signUp(_ from: TestServer.Client, _ name: String) async throws -> TestServer.Client.Answer {
                try await from.send(.post, "/v1/accounts", SignUpRequest(account: name, password: "password-1", alias: "A", underage: false))
            }
            #expect(try await signUp(farm, "farm-1").status == .created)
            #expect(try await signUp(farm, "farm-2").status == .created)
            Self.expectLimited(try await signUp(farm, "farm-3"))
            // Another address is not limited.
            #expect(try await signUp(try client.from("198.51.100.1"), "farm-3").status == .created)
            // Sign-ins: right or wrong, three a minute from one address.
            let signIn = SignInRequest(account: "farm-1", password: "password-1")
            for _ in 0..<3 { #expect(try await farm.send(.post, "/v1/sessions", signIn).status == .ok) }
            Self.expectLimited(try await farm.send(.post, "/v1/sessions", signIn))
            #expect(try await client.from("198.51.100.2").send(.post, "/v1/sessions", signIn).status == .ok)
            // A loopback peer (a reverse proxy on this host) is not limited by address.
            for n in 0..<4 { _ = try await client.signUp(account: "local-\(n)") }
        }
    }

    @Test func scoresAndAchievementsShareThePlayersReportLimitAndARefusedReportStoresNothing() async throws {
        try await TestServer.run(rateLimits: try Self.limits("reports=10/60")) { client in
            let player = try await client.signUp()
            #expect(try await LeaderboardTests.report(client, player.token, (1...8).map { LeaderboardTests.score($0) }).status == .ok)
            // Three more do not fit in the two left: none is stored.
            Self.expectLimited(try await LeaderboardTests.report(client, player.token, (9...11).map { LeaderboardTests.score($0) }))
            #expect(try await LeaderboardTests.page(client, player.token).scores.map(\.value) == [8])
            func achievements(_ entries: [(String, Double)]) async throws -> TestServer.Client.Answer {
                try await client.send(
                    .post, "/v1/achievements",
                    AchievementReportBatch(
                        reportID: UUID().uuidString, achievements: entries.map { .init(identifier: $0.0, percentComplete: $0.1) }), token: player.token)
            }
            #expect(try await achievements([("open.many", 10), ("open.first", 10)]).status == .ok)
            Self.expectLimited(try await achievements([("open.many", 20)]))
            // Another player has their own allowance.
            let other = try await client.signUp()
            #expect(try await LeaderboardTests.report(client, other.token, [LeaderboardTests.score(5)]).status == .ok)
        }
    }

    @Test func aPlayersTurnBasedWritesAreLimitedAndARefusedOneChangesNothing() async throws {
        try await TestServer.run(rateLimits: try Self.limits("turn-writes=3/60")) { client in
            let ann = try await client.signUp()
            let match = try await client.send(.post, "/v1/turn-matches", TurnBasedFindBody(minPlayers: 2, maxPlayers: 2), token: ann.token)
                .decode(TurnBasedMatchInfo.self)
            func save(_ version: Int64, _ byte: UInt8) async throws -> TestServer.Client.Answer {
                try await client.send(
                    .post, "/v1/turn-matches/\(match.matchID)/turn",
                    TurnBasedTurnBody(action: .saveTurn, version: version, matchData: Data([byte])), token: ann.token)
            }
            let first = try await save(match.version, 1).decode(TurnBasedMatchInfo.self)
            let second = try await save(first.version, 2).decode(TurnBasedMatchInfo.self)
            Self.expectLimited(try await save(second.version, 3))
            let stored = try await client.call(.get, "/v1/turn-matches/\(match.matchID)/data", token: ann.token)
            #expect(stored.body == Data([2]), "\(stored.status) \(Array(stored.body))")
            #expect(try Self.refused(client, "turn-writes") == 1)
            // Reading is not a write; another player has their own allowance.
            #expect(try await client.call(.get, "/v1/turn-matches/\(match.matchID)", token: ann.token).status == .ok)
            let bob = try await client.signUp()
            #expect(try await client.send(.post, "/v1/turn-matches", TurnBasedFindBody(minPlayers: 2, maxPlayers: 2), token: bob.token).status == .ok)
        }
    }

    @Test func settingsAreReadAndRefusedWithClearMessages() throws {
        var limits = RateLimits()
        try limits.set("reports=100/10")
        #expect(limits[.reports] == .init(count: 100, period: .seconds(10)))
        try limits.set("sign-ups=0/1")
        #expect(!limits[.signUps].isOn)
        for bad in ["reports", "nope=1/1", "reports=-1/10", "reports=1/0", "reports=1", "reports=a/b"] {
            #expect(throws: RateLimitSettingError.self, "\(bad)") { try limits.set(bad) }
        }
        do {
            try limits.set("nope=1/1")
        } catch {
            #expect(error.description.contains("friend-requests") && error.description.contains("realtime-channels"))
        }
        #expect(RateLimits.Limit(count: 30, period: .seconds(3600)).description == "30 per hour")
    }
}

/// The limiter itself: several charges count together or not at all, and its table stays bounded.
@Suite struct RateLimiterTests {
    @Test func chargesCountAllOrNone() throws {
        var limits = RateLimits()
        try limits.set("invitations=3/60")
        try limits.set("invitations-to-one-player=2/60")
        let clock = ServerClock(isAdjustable: true)
        let limiter = RateLimiter(limits: limits, metrics: ServerMetrics(), clock: clock)
        try limiter.take([.init(name: .invitations, subject: "a", cost: 1), .init(name: .invitationsToOnePlayer, subject: "a b")])
        try limiter.take([.init(name: .invitations, subject: "a", cost: 1), .init(name: .invitationsToOnePlayer, subject: "a b")])
        // The pair is spent: the player's allowance is untouched by the refusal.
        #expect(throws: APIError.self) {
            try limiter.take([.init(name: .invitations, subject: "a", cost: 1), .init(name: .invitationsToOnePlayer, subject: "a b")])
        }
        try limiter.take(.invitations, for: "a")
        #expect(throws: APIError.self) { try limiter.take(.invitations, for: "a") }
        // A cost larger than the burst passes on a full bucket only.
        try limiter.take(.invitations, for: "c", cost: 10)
        #expect(throws: APIError.self) { try limiter.take(.invitations, for: "c") }
        _ = clock.advance(byMillis: 20_000)
        try limiter.take(.invitations, for: "c")
    }

    @Test func theTableStaysBoundedAndForgetsWhatRefilledFirst() throws {
        var limits = RateLimits()
        try limits.set("reports=2/3600")
        let clock = ServerClock(isAdjustable: true)
        let limiter = RateLimiter(limits: limits, metrics: ServerMetrics(), clock: clock)
        try limiter.take(.reports, for: "kept", cost: 2)
        for n in 1..<RateLimiter.capacity { try limiter.take(.reports, for: "p\(n)") }
        #expect(limiter.count == RateLimiter.capacity)
        _ = clock.advance(byMillis: 1_801_000)  // the others' single action has come back; "kept" still lacks one
        try limiter.take(.reports, for: "last")
        #expect(limiter.count == 2, "the refilled buckets went, the two that still count stayed")
        #expect(throws: APIError.self) { try limiter.take(.reports, for: "kept", cost: 2) }
    }

    @Test func whenNothingRefilledTheLeastRecentlyUsedGo() throws {
        var limits = RateLimits()
        try limits.set("reports=2/3600")
        let limiter = RateLimiter(limits: limits, metrics: ServerMetrics(), clock: ServerClock(isAdjustable: false))
        try limiter.take(.reports, for: "oldest", cost: 2)
        for n in 0..<RateLimiter.capacity { try limiter.take(.reports, for: "p\(n)") }
        #expect(limiter.count <= RateLimiter.capacity)
        // Its bucket was dropped, so it starts full again: the bound forgets the longest-idle subjects first.
        try limiter.take(.reports, for: "oldest", cost: 2)
        #expect(throws: APIError.self) { try limiter.take(.reports, for: "p\(RateLimiter.capacity - 1)", cost: 2) }
    }
}
