import Foundation
import GameCenterProtocol
import HTTPTypes
import Testing
@testable import GameCenterServer

/// The turn-based routes' edges: limits refused before a body is read, bad bodies named, strangers kept out, every
/// change pushed as a numbered event to each participant.
@Suite struct TurnBasedRouteTests {
    func find(_ client: TestServer.Client, _ token: String, players: Int = 2) async throws -> TurnBasedMatchInfo {
        try await client.send(.post, "/v1/turn-matches", TurnBasedFindBody(minPlayers: 2, maxPlayers: players), token: token)
            .decode(TurnBasedMatchInfo.self)
    }

    /// A save whose data is the same size as the last changes nothing else in the match: it is stored all the same, a
    /// new version, told to the participants (it was once taken for no change and dropped).
    @Test func aSaveOfDataTheSameSizeIsStored() async throws {
        try await TestServer.run { client in
            let ann = try await client.signUp()
            let match = try await find(client, ann.token)
            var version = match.version
            for byte in [UInt8(1), 2, 2] {
                let saved = try await client.send(
                    .post, "/v1/turn-matches/\(match.matchID)/turn", TurnBasedTurnBody(action: .saveTurn, version: version, matchData: Data([byte])),
                    token: ann.token
                ).decode(TurnBasedMatchInfo.self)
                #expect(saved.version == version + 1)
                version = saved.version
                #expect(try await client.call(.get, "/v1/turn-matches/\(match.matchID)/data", token: ann.token).body == Data([byte]))
            }
        }
    }

    @Test func matchDataAboveTheGamesLimitIsRefusedAndExactlyTheLimitIsStored() async throws {
        try await TestServer.run { client in
            let ann = try await client.signUp()
            let match = try await find(client, ann.token)
            #expect(match.matchDataMaximumSize == 1 << 20)
            // Within the body limit but over the data limit: the rules refuse it and nothing is stored. (A body whose
            // declared length is over the limit is refused before it is read: `TurnBasedLiveTests`, on a real socket.)
            let body = TurnBasedTurnBody(action: .saveTurn, version: match.version, matchData: Data(count: (1 << 20) + 1))
            expectError(
                try await client.send(.post, "/v1/turn-matches/\(match.matchID)/turn", body, token: ann.token),
                .contentTooLarge, "turn.match_data_too_large", .turnBasedMatchDataTooLarge)
            let data = try await client.call(.get, "/v1/turn-matches/\(match.matchID)/data", token: ann.token)
            #expect(data.status == .ok && data.body.isEmpty)
            // Exactly the limit is stored.
            let full = TurnBasedTurnBody(action: .saveTurn, version: match.version, matchData: Data(repeating: 7, count: 1 << 20))
            #expect(try await client.send(.post, "/v1/turn-matches/\(match.matchID)/turn", full, token: ann.token).status == .ok)
            #expect(try await client.call(.get, "/v1/turn-matches/\(match.matchID)/data", token: ann.token).body.count == 1 << 20)
        }
    }

    @Test func aPlayerPlaysAtMostTheGamesOpenMatchesEvenAskingAtOnce() async throws {
        try await TestServer.run { client in
            let game = "com.example.saves"  // two matches at once per player
            let signUp = { (alias: String) in
                try await client.send(
                    .post, "/v1/accounts",
                    SignUpRequest(account: "\(alias.lowercased())-\(UUID().uuidString.prefix(8).lowercased())", password: "password-1", alias: alias),
                    bundleID: game
                ).decode(SessionResponse.self)
            }
            let (ann, bob) = (try await signUp("Ann"), try await signUp("Bob"))
            // Ann asks for five new matches at once (each in a group of its own): two are made, three refused.
            let answers = try await withThrowingTaskGroup(of: TestServer.Client.Answer.self) { group in
                for index in 0..<5 {
                    group.addTask {
                        try await client.send(
                            .post, "/v1/turn-matches", TurnBasedFindBody(minPlayers: 2, maxPlayers: 2, playerGroup: UInt32(100 + index)), token: ann.token,
                            bundleID: game)
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(answers.filter { $0.status == .ok }.count == 2)
            for refused in answers where refused.status != .ok {
                expectError(refused, .conflict, "turn.too_many_matches", .turnBasedTooManySessions)
            }
            #expect(try await client.call(.get, "/v1/turn-matches", token: ann.token, bundleID: game).decode(TurnBasedMatchList.self).matches.count == 2)
            // Bob asks in all five groups at once: he joins or starts two matches, the rest are refused.
            let bobsAnswers = try await withThrowingTaskGroup(of: TestServer.Client.Answer.self) { group in
                for index in 0..<5 {
                    group.addTask {
                        try await client.send(
                            .post, "/v1/turn-matches", TurnBasedFindBody(minPlayers: 2, maxPlayers: 2, playerGroup: UInt32(100 + index)), token: bob.token,
                            bundleID: game)
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(bobsAnswers.filter { $0.status == .ok }.count == 2)
            let bobs = try await client.call(.get, "/v1/turn-matches", token: bob.token, bundleID: game).decode(TurnBasedMatchList.self).matches
            #expect(bobs.count == 2, "Bob plays two matches, whichever he joined or started")
        }
    }

    @Test func badBodiesAndStrangersGetClearErrors() async throws {
        try await TestServer.run { client in
            let ann = try await client.signUp()
            let stranger = try await client.signUp()
            let match = try await find(client, ann.token)
            expectError(
                try await client.call(.post, "/v1/turn-matches/\(match.matchID)/turn", json: #"{"action": "win"}"#, token: ann.token),
                .badRequest, "request.malformed_body", .invalidParameter)
            expectError(
                try await client.call(.get, "/v1/turn-matches/\(match.matchID)", token: stranger.token), .notFound, "turn.no_such_match",
                .invalidParameter)
            expectError(
                try await client.call(.get, "/v1/turn-matches/\(String(repeating: "x", count: 100))", token: ann.token), .notFound,
                "turn.no_such_match", .invalidParameter)
            expectError(
                try await client.send(.post, "/v1/turn-matches", TurnBasedFindBody(minPlayers: 2, maxPlayers: 17), token: ann.token),
                .badRequest, "matchmaking.invalid_request", .matchRequestInvalid)
            let endTurn = TurnBasedTurnBody(action: .endTurn, version: match.version, matchData: Data(), nextParticipants: [1], turnTimeout: -1)
            expectError(
                try await client.send(.post, "/v1/turn-matches/\(match.matchID)/turn", endTurn, token: ann.token), .badRequest,
                "turn.invalid_request", .invalidParameter)
            let quit = TurnBasedParticipantBody(action: .quit, outcome: 1)
            expectError(
                try await client.send(.post, "/v1/turn-matches/\(match.matchID)/participant", quit, token: ann.token), .conflict,
                "turn.invalid_state", .turnBasedInvalidState)
            // Only action, version and match data are needed; the rest default to none.
            let saved = try await client.call(
                .post, "/v1/turn-matches/\(match.matchID)/turn", json: #"{"action": "saveTurn", "version": \#(match.version), "matchData": "AQI="}"#,
                token: ann.token)
            #expect(saved.status == .ok, "\(String(decoding: saved.body, as: UTF8.self))")
            #expect(try await client.call(.get, "/v1/turn-matches/\(match.matchID)/data", token: ann.token).body == Data([1, 2]))
            expectError(
                try await client.call(
                    .post, "/v1/turn-matches/\(match.matchID)/turn", json: #"{"action": "saveTurn", "version": \#(match.version + 1)}"#,
                    token: ann.token), .badRequest, "request.malformed_body", .invalidParameter)
        }
    }

    @Test func everyChangeIsAnEventForEachParticipantNumberedByTheMatchVersion() async throws {
        try await TestServer.run { client in
            let ann = try await client.signUp()
            let bob = try await client.signUp()
            let match = try await find(client, ann.token)
            let joined = try await find(client, bob.token)
            #expect(joined.matchID == match.matchID && joined.version == 2)
            let end = TurnBasedTurnBody(
                action: .endTurn, version: joined.version, matchData: Data("A".utf8), message: "go", nextParticipants: [1], turnTimeout: 60)
            let after = try await client.send(.post, "/v1/turn-matches/\(match.matchID)/turn", end, token: ann.token).decode(TurnBasedMatchInfo.self)
            #expect(after.version == 3 && after.currentIndex == 1 && after.participants[1].timeoutDate != nil)
            let events = try await client.services.database.read { storage in
                try await storage.events(playerID: bob.player.playerID, after: 0, limit: 10)
            }.filter { $0.kind == EventKind.turnBased.rawValue }
            let infos = try events.map { try WireCoding.makeDecoder().decode(TurnBasedEventInfo.self, from: Data($0.payload.utf8)) }
            #expect(infos.map(\.kind) == [.joined, .turnPassed] && infos.map(\.match.version) == [2, 3])
            #expect(infos.last?.becameActive == true && infos.last?.actorIndex == 0 && infos.last?.match.message == "go")
        }
    }
}
