import Foundation
import GameCenterProtocol
import GameCenterStorage
import NetworkFaultProxy
import Testing
@testable import GameCenterServer

/// Challenges through the HTTP routes, on `com.example.seasons` (``TestServer/seasonsManifest``): `seasons.beat` on a
/// classic board (2 hours or a day, 2 attempts, 3 players, a player's earlier best counts) and the repeatable
/// `seasons.duel` on the daily board. The server's clock is stopped so that the clock's notices come when the test
/// says.
@Suite struct ChallengeTests {
    typealias Client = TestServer.Client
    static let game = RecurringLeaderboardTests.game

    static func create(_ client: Client, _ token: String, _ body: ChallengeCreateBody) async throws -> Client.Answer {
        try await client.send(.post, "/v1/challenges", body, token: token, bundleID: game)
    }

    static func call(_ client: Client, _ token: String, _ path: String, post: Bool = true) async throws -> Client.Answer {
        try await client.call(post ? .post : .get, path, token: token, bundleID: game)
    }

    static func joinByCode(_ client: Client, _ token: String, _ code: String) async throws -> Client.Answer {
        try await client.send(.post, "/v1/challenges/join", ChallengeJoinBody(code: code), token: token, bundleID: game)
    }

    static func report(_ client: Client, _ token: String, _ value: Int64, _ category: String = "seasons.secret") async throws {
        let answer = try await RecurringLeaderboardTests.report(client, token, value, category)
        #expect(answer.status == .ok, "\(String(decoding: answer.body, as: UTF8.self))")
    }

    /// The challenge events stored for `player`, oldest first.
    static func events(_ client: Client, of player: SessionResponse) async throws -> [ChallengeEventInfo] {
        try await client.services.database.read { try await $0.events(playerID: player.player.playerID, after: 0, limit: 1000) }
            .filter { $0.kind == EventKind.challenge.rawValue }
            .map { try WireCoding.makeDecoder().decode(ChallengeEventInfo.self, from: Data($0.payload.utf8)) }
    }

    static func befriend(_ client: Client, _ a: SessionResponse, _ b: SessionResponse) async throws {
        let sent = try await client.send(
            .post, "/v1/friend-requests", SendFriendRequests(playerIDs: [b.player.playerID], message: nil), token: a.token, bundleID: game)
        #expect(sent.status == .created)
        let pending = try await client.call(.get, "/v1/friend-requests", token: b.token, bundleID: game).decode(FriendRequestList.self)
        let request = try #require(pending.requests.first { $0.from == a.player.playerID })
        #expect(try await client.call(.post, "/v1/friend-requests/\(request.requestID)/accept", token: b.token, bundleID: game).status == .noContent)
    }

    /// A round hour at least two days ahead of the real clock (the test clock only goes forward).
    static func startTime() -> Int64 {
        (Int64(Date().timeIntervalSince1970 * 1000) / 3_600_000 + 48) * 3_600_000
    }

    /// SQLite, and PostgreSQL when the tests have one.
    static let engines = ["sqlite"] + (SharedDatabaseNodesTests.postgresURL == nil ? [] : ["postgres"])

    @Test(arguments: engines)
    func aChallengeGoesFromInvitationToWinner(engine: String) async throws {
        let url = engine == "postgres" ? try await SharedDatabaseNodesTests.freshDatabase() : nil
        try await TestServer.run(admin: true, databaseURL: url, nodeID: url == nil ? nil : "node-a") { client in
            let ann = try await client.signUp(alias: "Ann", bundleID: Self.game)
            let bob = try await client.signUp(alias: "Bob", bundleID: Self.game)
            let cleo = try await client.signUp(alias: "Cleo", bundleID: Self.game)
            let dan = try await client.signUp(alias: "Dan", bundleID: Self.game)
            try await Self.befriend(client, ann, bob)
            let start = Self.startTime()
            try await RecurringLeaderboardTests.freeze(client, at: start)

            let definitions = try await Self.call(client, ann.token, "/v1/challenge-definitions", post: false).decode(ChallengeDefinitionList.self)
            #expect(definitions.definitions.map(\.identifier) == ["seasons.beat", "seasons.duel"])
            #expect(definitions.definitions[0].durationOptions == [7200, 86_400] && definitions.definitions[0].attempts == 2)
            #expect(definitions.definitions[1].durationOptions.isEmpty && definitions.definitions[1].isRepeatable)

            // Ann's best from before counts in a challenge that is not repeatable.
            try await Self.report(client, ann.token, 50)
            expectError(
                try await Self.create(client, ann.token, ChallengeCreateBody(definition: "seasons.beat", invite: [cleo.player.playerID])),
                .forbidden, "challenge.not_friends", .invalidPlayer)
            let created = try await Self.create(
                client, ann.token, ChallengeCreateBody(definition: "seasons.beat", durationSeconds: 7200, invite: [bob.player.playerID]))
            #expect(created.status == .ok, "\(String(decoding: created.body, as: UTF8.self))")
            let challenge = try created.challenge()
            #expect(challenge.state == .open && StoredTime.millis(challenge.endsAt) == start + 7_200_000)
            #expect(challenge.participants.map(\.alias) == ["Ann", "Bob"] && challenge.participants.map(\.status) == [.joined, .invited])
            #expect(challenge.participants[0].value == 50 && challenge.participants[0].rank == 1 && challenge.participants[0].attemptsLeft == 2)
            #expect(try await Self.events(client, of: bob).map(\.kind) == [.invited])

            // Bob was invited; Cleo was not, and joins with the code (as typed: lower case, no dash); Dan finds it full.
            let id = challenge.challengeID
            expectError(try await Self.call(client, cleo.token, "/v1/challenges/\(id)/join"), .forbidden, "challenge.not_invited", .challengeInvalid)
            expectError(try await Self.call(client, cleo.token, "/v1/challenges/\(id)", post: false), .notFound, "challenge.not_found", .challengeInvalid)
            #expect(try await Self.call(client, bob.token, "/v1/challenges/\(id)/join").status == .ok)
            let typed = challenge.code.lowercased().replacingOccurrences(of: "-", with: "")
            let joined = try await Self.joinByCode(client, cleo.token, typed)
            #expect(joined.status == .ok, "\(String(decoding: joined.body, as: UTF8.self))")
            #expect(try joined.challenge().participants.count == 3)
            expectError(try await Self.joinByCode(client, dan.token, challenge.code), .conflict, "challenge.full", .challengeInvalid)
            expectError(try await Self.joinByCode(client, dan.token, "0000-0000"), .badRequest, "challenge.invalid_request", .invalidParameter)
            #expect(try await Self.events(client, of: ann).map(\.kind) == [.joined, .joined])

            // Bob passes Ann: she hears she was overtaken, Cleo hears the score. His third score is past his attempts.
            try await Self.report(client, bob.token, 60)
            let heard = try #require(try await Self.events(client, of: ann).last)
            #expect(heard.kind == .overtaken && heard.playerID == bob.player.playerID)
            #expect(try await Self.events(client, of: cleo).last?.kind == .score)
            try await Self.report(client, bob.token, 70)
            try await Self.report(client, bob.token, 99)
            let standing = try await Self.call(client, bob.token, "/v1/challenges/\(id)", post: false).challenge()
            #expect(standing.participants.map(\.alias) == ["Bob", "Ann", "Cleo"] && standing.participants.map(\.rank) == [1, 2, 0])
            let bobs = standing.participants[0]
            #expect(bobs.value == 70 && bobs.formattedValue == "70" && bobs.attemptsUsed == 2 && bobs.attemptsLeft == 0)
            #expect(try await Self.events(client, of: cleo).filter { $0.kind == .score }.count == 2, "the score past the attempts is not pushed")

            // An hour before the end, everyone hears once; at the end, Bob wins and later scores change nothing.
            try await RecurringLeaderboardTests.freeze(client, at: start + 3_600_001)
            try await waitUntil("the one-hour notice") { try await Self.events(client, of: cleo).contains { $0.kind == .endingSoon } }
            try await RecurringLeaderboardTests.freeze(client, at: start + 7_200_000)
            try await waitUntil("the end") { try await Self.events(client, of: ann).contains { $0.kind == .ended } }
            try await Self.report(client, ann.token, 500)
            try await Task.sleep(for: .milliseconds(1500))  // more ticks of the clock: nothing is sent twice
            for player in [ann, bob, cleo] {
                let kinds = try await Self.events(client, of: player).map(\.kind)
                #expect(kinds.filter { $0 == .endingSoon }.count == 1 && kinds.filter { $0 == .ended }.count == 1)
            }
            let ended = try await Self.call(client, ann.token, "/v1/challenges/\(id)", post: false).challenge()
            #expect(ended.state == .ended && ended.winners == [bob.player.playerID] && ended.participants.first?.value == 70)
            #expect(ended.participants.first { $0.alias == "Ann" }?.value == 50, "the score after the end does not count")
            expectError(try await Self.call(client, ann.token, "/v1/challenges/\(id)/leave"), .conflict, "challenge.ended", .challengeInvalid)

            // A rematch: the same players invited, for the same length; Cleo declines it.
            let rematch = try await Self.call(client, bob.token, "/v1/challenges/\(id)/rematch").challenge()
            #expect(rematch.rematchOf == id && rematch.creatorID == bob.player.playerID && rematch.challengeID != id)
            #expect(Set(rematch.participants.filter { $0.status == .invited }.map(\.alias)) == ["Ann", "Cleo"])
            #expect(rematch.endsAt.timeIntervalSince(rematch.createdAt) == 7200)
            let declined = try await Self.call(client, cleo.token, "/v1/challenges/\(rematch.challengeID)/leave").challenge()
            #expect(declined.participants.last?.alias == "Cleo" && declined.participants.last?.status == .left)
            let list = try await Self.call(client, ann.token, "/v1/challenges", post: false).decode(ChallengeList.self)
            #expect(list.challenges.map(\.challengeID) == [rematch.challengeID, id])
        }
    }

    @Test func aRepeatableChallengeCountsOnlyScoresAfterJoiningInItsOccurrence() async throws {
        try await TestServer.run(admin: true) { client in
            let ann = try await client.signUp(alias: "Ann", bundleID: Self.game)
            let bob = try await client.signUp(alias: "Bob", bundleID: Self.game)
            let midnight = RecurringLeaderboardTests.nextMidnight()
            try await RecurringLeaderboardTests.freeze(client, at: midnight + 60_000)
            try await Self.report(client, ann.token, 80, "seasons.daily")
            expectError(
                try await Self.create(client, ann.token, ChallengeCreateBody(definition: "seasons.duel", durationSeconds: 86_400)), .badRequest,
                "challenge.invalid_request", .invalidParameter)
            let duel = try await Self.create(client, ann.token, ChallengeCreateBody(definition: "seasons.duel")).challenge()
            let day = try #require(RecurringLeaderboardTests.daily.latest(startingAtOrBefore: midnight + 60_000))
            #expect(duel.occurrence.map(StoredTime.millis) == day.start && StoredTime.millis(duel.endsAt) == day.end)
            #expect(duel.participants[0].value == nil, "a repeatable challenge counts scores after joining only")
            #expect(try await Self.joinByCode(client, bob.token, duel.code).status == .ok)
            try await Self.report(client, ann.token, 10, "seasons.daily")
            try await Self.report(client, bob.token, 30, "seasons.daily")
            try await Self.report(client, ann.token, 5, "seasons.secret")  // another board: not this challenge's
            let now = try await Self.call(client, ann.token, "/v1/challenges/\(duel.challengeID)", post: false).challenge()
            #expect(now.participants.map(\.value) == [30, 10] && now.participants[1].attemptsLeft == nil)
            // The next day's scores are another occurrence's: the challenge has ended with the day.
            try await RecurringLeaderboardTests.freeze(client, at: day.end)
            try await waitUntil("the end") { try await Self.events(client, of: bob).contains { $0.kind == .ended } }
            try await Self.report(client, ann.token, 90, "seasons.daily")
            let ended = try await Self.call(client, ann.token, "/v1/challenges/\(duel.challengeID)", post: false).challenge()
            #expect(ended.winners == [bob.player.playerID] && ended.participants.map(\.value) == [30, 10])
        }
    }

    @Test func badRequestsAreRefusedWithWhatIsAllowed() async throws {
        try await TestServer.run(admin: true) { client in
            let ann = try await client.signUp(alias: "Ann", bundleID: Self.game)
            let bob = try await client.signUp(alias: "Bob", bundleID: Self.game)
            expectError(
                try await Self.create(client, ann.token, ChallengeCreateBody(definition: "seasons.nope")), .notFound, "challenge.unknown_definition",
                .invalidParameter)
            let length = try await Self.create(client, ann.token, ChallengeCreateBody(definition: "seasons.beat", durationSeconds: 60))
            expectError(length, .badRequest, "challenge.invalid_request", .invalidParameter)
            #expect(String(decoding: length.body, as: UTF8.self).contains("7200, 86400"))
            expectError(
                try await Self.create(client, ann.token, ChallengeCreateBody(definition: "seasons.beat", invite: ["a", "b", "c"])), .badRequest,
                "challenge.invalid_request", .invalidParameter)
            expectError(
                try await Self.create(client, ann.token, ChallengeCreateBody(definition: "seasons.beat", invite: [ann.player.playerID])), .badRequest,
                "challenge.invalid_request", .invalidParameter)
            let mine = try await Self.create(client, ann.token, ChallengeCreateBody(definition: "seasons.beat")).challenge()
            #expect(mine.endsAt.timeIntervalSince(mine.createdAt) == 7200, "the first length is the default")
            #expect(mine.code.wholeMatch(of: /[2-9A-HJ-NP-Z]{4}-[2-9A-HJ-NP-Z]{4}/) != nil)
            expectError(try await Self.joinByCode(client, bob.token, "ZZZZ-ZZZZ"), .notFound, "challenge.not_found", .challengeInvalid)
            expectError(
                try await Self.call(client, bob.token, "/v1/challenges/\(mine.challengeID)/rematch"), .notFound, "challenge.not_found", .challengeInvalid)
            // Another game does not see it, even with its code.
            let other = try await client.signUp(alias: "Other")
            let answer = try await client.send(.post, "/v1/challenges/join", ChallengeJoinBody(code: mine.code), token: other.token)
            expectError(answer, .notFound, "challenge.not_found", .challengeInvalid)
        }
    }

    /// Two nodes on one PostgreSQL database, both clocks running: a join on one node is followed by the other (whose
    /// reports push), and a challenge's one-hour notice and end are told once.
    @Test(.enabled(if: SharedDatabaseNodesTests.postgresURL != nil), .timeLimit(.minutes(2)))
    func twoNodesTellAChallengesNoticeAndEndOnce() async throws {
        let url = try await SharedDatabaseNodesTests.freshDatabase()
        try await TestServer.run(admin: true, databaseURL: url, nodeID: "node-a") { a in
            try await TestServer.run(admin: true, databaseURL: url, nodeID: "node-b") { b in
                let ann = try await a.signUp(alias: "Ann", bundleID: Self.game)
                let bob = try await b.signUp(alias: "Bob", bundleID: Self.game)
                let start = Self.startTime()
                for node in [a, b] { try await RecurringLeaderboardTests.freeze(node, at: start) }
                let challenge = try await Self.create(a, ann.token, ChallengeCreateBody(definition: "seasons.beat")).challenge()
                #expect(try await Self.joinByCode(b, bob.token, challenge.code).status == .ok)
                // Node a learns of the join on node b within a tick of its clock: Bob's score there is pushed.
                try await Task.sleep(for: .milliseconds(1500))
                try await Self.report(a, bob.token, 40)
                let heard = try #require(try await Self.events(a, of: ann).last)
                #expect(heard.kind == .score && heard.playerID == bob.player.playerID)
                try await Self.report(a, ann.token, 30)
                for node in [a, b] { try await RecurringLeaderboardTests.freeze(node, at: start + 3_600_001) }
                try await waitUntil("the one-hour notice") { try await Self.events(a, of: bob).contains { $0.kind == .endingSoon } }
                for node in [a, b] { try await RecurringLeaderboardTests.freeze(node, at: start + 7_200_000) }
                try await waitUntil("the end") { try await Self.events(a, of: ann).contains { $0.kind == .ended } }
                try await Task.sleep(for: .milliseconds(2500))
                for player in [ann, bob] {
                    let kinds = try await Self.events(a, of: player).map(\.kind)
                    #expect(kinds.filter { $0 == .ended }.count == 1 && kinds.filter { $0 == .endingSoon }.count == 1, "\(kinds)")
                }
                let ended = try await Self.call(b, bob.token, "/v1/challenges/\(challenge.challengeID)", post: false).challenge()
                #expect(ended.winners == [bob.player.playerID])
            }
        }
    }
}

extension TestServer.Client.Answer {
    /// The challenge answered, or an issue with the error answered instead.
    func challenge(sourceLocation: SourceLocation = #_sourceLocation) throws -> ChallengeInfo {
        #expect(status == .ok, "\(String(decoding: body, as: UTF8.self))", sourceLocation: sourceLocation)
        return try decode(ChallengeInfo.self)
    }
}
