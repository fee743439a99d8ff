import Foundation
import GameCenterProtocol
import GameCenterStorage
import Testing
@testable import GameCenterServer

/// Activities and party codes through the HTTP routes, on `com.example.seasons` (``TestServer/seasonsManifest``:
/// `seasons.party` takes party codes and 2 to 3 players, `seasons.solo` does not) and `com.example.saves`
/// (`saves.party`), on every engine.
@Suite struct ActivityTests {
    typealias Client = TestServer.Client
    static let game = RecurringLeaderboardTests.game

    static func start(_ client: Client, _ token: String, _ body: ActivityStartBody, game: String = game) async throws -> Client.Answer {
        try await client.send(.post, "/v1/activities", body, token: token, bundleID: game)
    }

    /// Starts and answers the activity, failing the test with the server's answer when it is an error.
    static func started(_ client: Client, _ token: String, _ body: ActivityStartBody, game: String = game) async throws -> ActivityInfo {
        let answer = try await start(client, token, body, game: game)
        #expect(answer.status == .ok, "\(String(decoding: answer.body, as: UTF8.self))")
        return try answer.decode(ActivityInfo.self)
    }

    static func setState(_ client: Client, _ token: String, _ id: String, _ state: ActivityState) async throws -> Client.Answer {
        try await client.send(.post, "/v1/activities/\(id)/state", ActivityStateBody(state: state), token: token, bundleID: game)
    }

    /// The activity events stored for `player`, oldest first.
    static func events(_ client: Client, of player: SessionResponse) async throws -> [ActivityEventInfo] {
        try await client.services.database.read { try await $0.events(playerID: player.player.playerID, after: 0, limit: 1000) }
            .filter { $0.kind == EventKind.activity.rawValue }
            .map { try WireCoding.makeDecoder().decode(ActivityEventInfo.self, from: Data($0.payload.utf8)) }
    }

    @Test(arguments: ChallengeTests.engines)
    func playersWhoShareACodeAreInOneParty(engine: String) async throws {
        let url = engine == "postgres" ? try await SharedDatabaseNodesTests.freshDatabase() : nil
        try await TestServer.run(admin: true, databaseURL: url, nodeID: url == nil ? nil : "node-a") { client in
            let ann = try await client.signUp(alias: "Ann", bundleID: Self.game)
            let bob = try await client.signUp(alias: "Bob", bundleID: Self.game)
            let cleo = try await client.signUp(alias: "Cleo", bundleID: Self.game)

            let definitions = try await client.call(.get, "/v1/activity-definitions", token: ann.token, bundleID: Self.game)
                .decode(ActivityDefinitionList.self).definitions
            #expect(definitions.map(\.identifier) == ["seasons.party", "seasons.solo"])
            #expect(definitions[0].supportsPartyCode && definitions[0].maxPlayers == 3 && definitions[0].playStyle == .synchronous)
            #expect(definitions[0].defaultProperties == ["map": "forest"] && !definitions[1].supportsPartyCode)

            // Ann starts a party: the server makes a code in Apple's format, and she hosts it.
            let started = try await Self.start(client, ann.token, ActivityStartBody(definition: "seasons.party", properties: ["mode": "hard"]))
            #expect(started.status == .ok, "\(String(decoding: started.body, as: UTF8.self))")
            let party = try started.decode(ActivityInfo.self)
            let code = try #require(party.partyCode)
            #expect(PartyCode.isValid(code) && code.count == 9)
            #expect(party.state == .active && party.partyHostID == ann.player.playerID && party.partyPlayerIDs == [ann.player.playerID])
            #expect(party.properties == ["map": "forest", "mode": "hard"])

            // Bob types it in lower case and joins; Ann hears it. Starting again answers the same activity.
            let bobs = try await Self.started(client, bob.token, ActivityStartBody(definition: "seasons.party", partyCode: code.lowercased()))
            #expect(bobs.partyCode == code && bobs.partyHostID == ann.player.playerID)
            #expect(bobs.partyPlayerIDs == [ann.player.playerID, bob.player.playerID])
            let again = try await Self.started(client, bob.token, ActivityStartBody(definition: "seasons.party", partyCode: code))
            #expect(again.activityID == bobs.activityID)
            let heard = try await Self.events(client, of: ann)
            #expect(heard.map(\.kind) == [.playerJoined] && heard[0].playerID == bob.player.playerID)
            #expect(heard[0].activity.activityID == party.activityID && heard[0].activity.partyPlayerIDs.count == 2)

            // The code is the party's: another activity cannot use it; malformed codes and codes on a solo activity
            // are refused with what is allowed.
            expectError(
                try await Self.start(client, cleo.token, ActivityStartBody(definition: "seasons.solo", partyCode: code)),
                .badRequest, "activity.invalid_request", .invalidParameter)
            for bad in ["AB-CDE", "A0-BC", "ABCDEFG-ABCDEFG", "12-AB", "", "AB_CD"] {
                let answer = try await Self.start(client, cleo.token, ActivityStartBody(definition: "seasons.party", partyCode: bad))
                expectError(answer, .badRequest, "activity.invalid_request", .invalidParameter)
                #expect(answer.error?.message.contains("two parts of the same length") == true)
            }
            expectError(
                try await Self.start(client, cleo.token, ActivityStartBody(definition: "seasons.nope")), .notFound, "activity.unknown_definition",
                .invalidParameter)
            expectError(
                try await Self.start(client, cleo.token, ActivityStartBody(definition: "seasons.party", properties: ["k": String(repeating: "v", count: 257)])),
                .badRequest, "activity.invalid_request", .invalidParameter)

            // A code of her own choosing: Cleo hosts "4812-3301", the same digits in another game are another party.
            let cleos = try await Self.started(client, cleo.token, ActivityStartBody(definition: "seasons.party", partyCode: "4812-3301"))
            #expect(cleos.partyCode == "4812-3301" && cleos.partyHostID == cleo.player.playerID)
            let sam = try await client.signUp(alias: "Sam", bundleID: "com.example.saves")
            let elsewhere = try await Self.started(
                client, sam.token, ActivityStartBody(definition: "saves.party", partyCode: "4812-3301"), game: "com.example.saves")
            #expect(elsewhere.partyHostID == sam.player.playerID && elsewhere.partyPlayerIDs == [sam.player.playerID])

            // Pause, resume, end: active time leaves the pause out; an ended activity takes no more changes.
            try await RecurringLeaderboardTests.freeze(client, at: ChallengeTests.startTime())
            let solo = try await Self.started(client, bob.token, ActivityStartBody(definition: "seasons.solo"))
            #expect(solo.partyCode == nil && solo.partyPlayerIDs.isEmpty)
            try await LeaderboardTests.advanceClock(client, hours: 1)
            #expect(try await Self.setState(client, bob.token, solo.activityID, .paused).decode(ActivityInfo.self).activeSeconds == 3600)
            try await LeaderboardTests.advanceClock(client, hours: 2)
            #expect(try await Self.setState(client, bob.token, solo.activityID, .active).decode(ActivityInfo.self).activeSeconds == 3600)
            try await LeaderboardTests.advanceClock(client, hours: 0.5)
            let ended = try await Self.setState(client, bob.token, solo.activityID, .ended).decode(ActivityInfo.self)
            #expect(ended.state == .ended && ended.activeSeconds == 5400 && ended.endedAt != nil)
            expectError(try await Self.setState(client, bob.token, solo.activityID, .active), .conflict, "activity.ended", .invalidParameter)
            expectError(
                try await client.call(.get, "/v1/activities/\(solo.activityID)", token: ann.token, bundleID: Self.game), .notFound, "activity.not_found",
                .invalidParameter)
        }
    }

    @Test(arguments: ChallengeTests.engines)
    func aPartyTakesPlayersUntilItsHostEndsItOrItExpires(engine: String) async throws {
        let url = engine == "postgres" ? try await SharedDatabaseNodesTests.freshDatabase() : nil
        try await TestServer.run(admin: true, databaseURL: url, nodeID: url == nil ? nil : "node-a") { client in
            let ann = try await client.signUp(alias: "Ann", bundleID: Self.game)
            let bob = try await client.signUp(alias: "Bob", bundleID: Self.game)
            let cleo = try await client.signUp(alias: "Cleo", bundleID: Self.game)
            try await RecurringLeaderboardTests.freeze(client, at: ChallengeTests.startTime())
            let anns = try await Self.started(client, ann.token, ActivityStartBody(definition: "seasons.party", partyCode: "ab-cd"))
            #expect(anns.partyCode == "AB-CD")
            _ = try await Self.start(client, bob.token, ActivityStartBody(definition: "seasons.party", partyCode: "AB-CD"))

            // Ann ends hers: the code stops taking players, and the next to use it hosts a new party with it.
            #expect(try await Self.setState(client, ann.token, anns.activityID, .ended).decode(ActivityInfo.self).partyCode == nil)
            let cleos = try await Self.started(client, cleo.token, ActivityStartBody(definition: "seasons.party", partyCode: "AB-CD"))
            #expect(cleos.partyHostID == cleo.player.playerID && cleos.partyPlayerIDs == [cleo.player.playerID])

            // A day later Cleo's party has expired: its code is free again, though she never ended it.
            try await LeaderboardTests.advanceClock(client, hours: 24)
            let bobs = try await Self.started(client, bob.token, ActivityStartBody(definition: "seasons.party", partyCode: "AB-CD"))
            #expect(bobs.partyHostID == bob.player.playerID && bobs.partyPlayerIDs == [bob.player.playerID])
            #expect(
                try await client.call(.get, "/v1/activities/\(cleos.activityID)", token: cleo.token, bundleID: Self.game)
                    .decode(ActivityInfo.self).partyCode == nil)
        }
    }

    /// Two nodes on one PostgreSQL database: players on both who choose the same code land in one party.
    @Test(.enabled(if: SharedDatabaseNodesTests.postgresURL != nil))
    func playersOnTwoNodesWhoTypeOneCodeShareAParty() async throws {
        let url = try await SharedDatabaseNodesTests.freshDatabase()
        try await TestServer.run(databaseURL: url, nodeID: "node-a") { a in
            try await TestServer.run(databaseURL: url, nodeID: "node-b") { b in
                var players: [SessionResponse] = []
                for index in 0..<6 { players.append(try await (index % 2 == 0 ? a : b).signUp(alias: "P\(index)", bundleID: Self.game)) }
                let answers = try await withThrowingTaskGroup(of: ActivityInfo.self) { group in
                    for (index, player) in players.enumerated() {
                        group.addTask {
                            try await Self.started(index % 2 == 0 ? a : b, player.token, ActivityStartBody(definition: "seasons.party", partyCode: "ZZ9-9ZZ"))
                        }
                    }
                    return try await group.reduce(into: []) { $0.append($1) }
                }
                #expect(Set(answers.compactMap(\.partyHostID)).count == 1)
                let host = try #require(players.first { $0.player.playerID == answers[0].partyHostID })
                let hosts = try await Self.started(a, host.token, ActivityStartBody(definition: "seasons.party", partyCode: "ZZ9-9ZZ"))
                #expect(Set(hosts.partyPlayerIDs) == Set(players.map(\.player.playerID)))
            }
        }
    }
}
