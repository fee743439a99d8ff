import Foundation
import GameCenterProtocol
import Testing
@testable import GameCenterServer

/// Friend requests, friendships and what friends (and strangers) see, through the HTTP routes.
@Suite struct FriendTests {
    func pending(_ client: TestServer.Client, _ token: String) async throws -> [FriendRequestInfo] {
        try await client.call(.get, "/v1/friend-requests", token: token).decode(FriendRequestList.self).requests
    }

    @Test func aRequestAcceptedMakesFriendsBothWays() async throws {
        try await TestServer.run { client in
            let alice = try await client.signUp(alias: "Alice"), bob = try await client.signUp(alias: "Bob")
            let sent = try await client.send(
                .post, "/v1/friend-requests", SendFriendRequests(playerIDs: [bob.player.playerID], message: "Play?"), token: alice.token)
            #expect(sent.status == .created)
            let requests = try await pending(client, bob.token)
            #expect(requests.count == 1)
            #expect(requests[0].from == alice.player.playerID)
            #expect(requests[0].fromAlias == "Alice")
            #expect(requests[0].message == "Play?")
            #expect(try await client.call(.post, "/v1/friend-requests/\(requests[0].requestID)/accept", token: bob.token).status == .noContent)
            #expect(try await client.call(.get, "/v1/friends", token: alice.token).decode(FriendList.self).playerIDs == [bob.player.playerID])
            #expect(try await client.call(.get, "/v1/friends", token: bob.token).decode(FriendList.self).playerIDs == [alice.player.playerID])
            // Replaying the accept is refused and changes nothing.
            expectError(
                try await client.call(.post, "/v1/friend-requests/\(requests[0].requestID)/accept", token: bob.token),
                .conflict, "friend.request_answered", .invalidParameter)
            expectError(
                try await client.call(.post, "/v1/friend-requests/\(requests[0].requestID)/decline", token: bob.token),
                .conflict, "friend.request_answered", .invalidParameter)
            // Only the recipient can answer.
            expectError(
                try await client.call(.post, "/v1/friend-requests/\(requests[0].requestID)/accept", token: alice.token),
                .notFound, "friend.no_such_request", .invalidParameter)
            // Already friends: a new request is refused.
            expectError(
                try await client.send(.post, "/v1/friend-requests", SendFriendRequests(playerIDs: [alice.player.playerID], message: nil), token: bob.token),
                .conflict, "friend.already_friends", .invalidParameter)
        }
    }

    @Test func declinedRequestsMakeNoFriendsAndMaySendAgain() async throws {
        try await TestServer.run { client in
            let alice = try await client.signUp(), bob = try await client.signUp()
            let body = SendFriendRequests(playerIDs: [bob.player.playerID], message: nil)
            _ = try await client.send(.post, "/v1/friend-requests", body, token: alice.token)
            expectError(try await client.send(.post, "/v1/friend-requests", body, token: alice.token), .conflict, "friend.request_pending", .invalidParameter)
            let reverse = try await client.send(
                .post, "/v1/friend-requests", SendFriendRequests(playerIDs: [alice.player.playerID], message: nil), token: bob.token)
            expectError(reverse, .conflict, "friend.request_from_recipient", .invalidParameter)
            let request = try #require(try await pending(client, bob.token).first)
            #expect(try await client.call(.post, "/v1/friend-requests/\(request.requestID)/decline", token: bob.token).status == .noContent)
            #expect(try await client.call(.get, "/v1/friends", token: bob.token).decode(FriendList.self).playerIDs.isEmpty)
            #expect(try await client.send(.post, "/v1/friend-requests", body, token: alice.token).status == .created)
        }
    }

    @Test func badFriendRequestsAreRefusedAndNothingIsSent() async throws {
        try await TestServer.run { client in
            let alice = try await client.signUp(), bob = try await client.signUp()
            let kid = try await client.signUp(underage: true)
            func send(_ ids: [String], _ token: String, message: String? = nil) async throws -> TestServer.Client.Answer {
                try await client.send(.post, "/v1/friend-requests", SendFriendRequests(playerIDs: ids, message: message), token: token)
            }
            expectError(try await send([alice.player.playerID], alice.token), .badRequest, "friend.to_self", .invalidParameter)
            expectError(try await send([bob.player.playerID, "G:nobody"], alice.token), .notFound, "player.unknown", .invalidPlayer)
            expectError(try await send([], alice.token), .badRequest, "request.invalid_parameter", .invalidParameter)
            expectError(
                try await send([bob.player.playerID], alice.token, message: String(repeating: "m", count: 281)),
                .badRequest, "request.invalid_parameter", .invalidParameter)
            expectError(try await send([bob.player.playerID], kid.token), .forbidden, "friend.underage", .underage)
            expectError(try await send([bob.player.playerID, kid.player.playerID], alice.token), .forbidden, "friend.recipient_underage", .underage)
            // None of the refused batches reached Bob.
            #expect(try await pending(client, bob.token).isEmpty)
            // A player of the other environment is unknown here.
            let live = try await client.signUp(environment: "live")
            expectError(try await send([live.player.playerID], alice.token), .notFound, "player.unknown", .invalidPlayer)
        }
    }

    @Test func underagePlayersCannotAccept() async throws {
        try await TestServer.run { client in
            let alice = try await client.signUp()
            let kid = try await client.signUp(underage: true)
            // Requests cannot even reach an underage player, so there is nothing to accept: a forged id is refused too.
            expectError(try await client.call(.post, "/v1/friend-requests/fr_forged/accept", token: kid.token), .forbidden, "friend.underage", .underage)
            expectError(
                try await client.call(.post, "/v1/friend-requests/fr_forged/accept", token: alice.token), .notFound, "friend.no_such_request", .invalidParameter
            )
        }
    }

    @Test func friendsSeeStatusAndRecentGamesStrangersDoNot() async throws {
        try await TestServer.run { client in
            let alice = try await client.signUp(alias: "Alice"), bob = try await client.signUp(alias: "Bob"), eve = try await client.signUp(alias: "Eve")
            _ = try await client.send(.patch, "/v1/me", UpdateProfileRequest(status: "Hunting dragons"), token: alice.token)
            _ = try await client.send(.post, "/v1/friend-requests", SendFriendRequests(playerIDs: [bob.player.playerID], message: nil), token: alice.token)
            let request = try #require(try await pending(client, bob.token).first)
            _ = try await client.call(.post, "/v1/friend-requests/\(request.requestID)/accept", token: bob.token)

            let ids = [alice.player.playerID, "G:unknown", eve.player.playerID]
            let byBob = try await client.send(.post, "/v1/players/lookup", PlayerLookupRequest(playerIDs: ids), token: bob.token).decode(
                PlayerLookupResponse.self)
            #expect(byBob.unknownPlayerIDs == ["G:unknown"])
            #expect(byBob.players.map(\.alias) == ["Alice", "Eve"])
            #expect(byBob.players[0].isFriend)
            #expect(byBob.players[0].status == "Hunting dragons")
            #expect(byBob.players[0].recentGames == [])  // the sandbox shares no games: recentGamesAreSharedInLiveOnly
            #expect(byBob.players[1].isFriend == false)
            #expect(byBob.players[1].status == nil)

            let byEve = try await client.send(.post, "/v1/players/lookup", PlayerLookupRequest(playerIDs: [alice.player.playerID]), token: eve.token)
                .decode(PlayerLookupResponse.self)
            #expect(byEve.players[0].isFriend == false)
            #expect(byEve.players[0].status == nil)
            #expect(byEve.players[0].recentGames == nil)

            // Removing the friend hides it again, for both.
            #expect(try await client.call(.delete, "/v1/friends/\(alice.player.playerID)", token: bob.token).status == .noContent)
            expectError(
                try await client.call(.delete, "/v1/friends/\(alice.player.playerID)", token: bob.token), .notFound, "friend.not_a_friend", .invalidPlayer)
            let after = try await client.send(.post, "/v1/players/lookup", PlayerLookupRequest(playerIDs: [bob.player.playerID]), token: alice.token)
                .decode(PlayerLookupResponse.self)
            #expect(after.players[0].isFriend == false)
        }
    }

    /// The seed: the sandbox does not share which games friends play. A friend's recent games are empty there and
    /// shown in live; one's own are shown in both.
    @Test(arguments: ["sandbox", "live"])
    func recentGamesAreSharedInLiveOnly(environment: String) async throws {
        try await TestServer.run { client in
            let alice = try await client.signUp(alias: "Alice", environment: environment)
            let bob = try await client.signUp(alias: "Bob", environment: environment)
            _ = try await client.send(
                .post, "/v1/friend-requests", SendFriendRequests(playerIDs: [bob.player.playerID], message: nil), token: alice.token,
                environment: environment)
            let request = try #require(
                try await client.call(.get, "/v1/friend-requests", token: bob.token, environment: environment).decode(FriendRequestList.self).requests
                    .first)
            _ = try await client.call(.post, "/v1/friend-requests/\(request.requestID)/accept", token: bob.token, environment: environment)
            let ids = [alice.player.playerID, bob.player.playerID]
            let byBob = try await client.send(.post, "/v1/players/lookup", PlayerLookupRequest(playerIDs: ids), token: bob.token, environment: environment)
                .decode(PlayerLookupResponse.self)
            #expect(byBob.players.map(\.isFriend) == [true, false])
            #expect(byBob.players[0].recentGames?.map(\.name) == (environment == "live" ? ["Open Game"] : []))
            #expect(byBob.players[1].recentGames?.map(\.name) == ["Open Game"])
        }
    }

    /// Friends by name (the seed never shows player ids): an account name or an alias only one player has reaches
    /// them; a shared alias asks for the account name; every name counts against the sender's limit, found or not.
    @Test func friendRequestsByNameReachTheNamedPlayerAndCountEveryNameTried() async throws {
        try await TestServer.run { client in
            let alice = try await client.signUp(alias: "Alice")
            let suffix = UUID().uuidString.prefix(8).lowercased()
            let bob = try await client.signUp(alias: "Bob \(suffix)", account: "bob-\(suffix)")
            let carol = try await client.signUp(alias: "Carol \(suffix)")
            _ = try await client.signUp(alias: "Twin \(suffix)")
            _ = try await client.signUp(alias: "Twin \(suffix)")
            func send(_ names: [String]) async throws -> TestServer.Client.Answer {
                try await client.send(.post, "/v1/friend-requests/by-name", SendFriendRequestsByName(names: names, message: "Hi"), token: alice.token)
            }
            #expect(try await send(["BOB-\(suffix)", " Carol \(suffix) "]).status == .created)
            #expect(try await pending(client, bob.token).map(\.from) == [alice.player.playerID])
            #expect(try await pending(client, carol.token).map(\.message) == ["Hi"])
            let shared = try await send(["Twin \(suffix)"])
            expectError(shared, .badRequest, "request.invalid_parameter", .invalidParameter)
            #expect(String(decoding: shared.body, as: UTF8.self).contains("account name"))
            expectError(try await send(["nobody-\(suffix)"]), .notFound, "player.unknown", .invalidPlayer)
            expectError(try await send([]), .badRequest, "request.invalid_parameter", .invalidParameter)
            // 2 sent + 1 shared + 1 unknown: 4 of the 30 an hour are gone; trying 26 more names, found or not,
            // uses the rest, and the next name is refused before it is looked up.
            for index in 0..<26 { expectError(try await send(["nobody-\(index)-\(suffix)"]), .notFound, "player.unknown", .invalidPlayer) }
            expectError(try await send(["nobody-else-\(suffix)"]), .tooManyRequests, "request.rate_limited", .communicationsFailure)
        }
    }

    /// Lookups are answered from a short-lived cache: every change made on the server shows in the very next lookup.
    @Test func lookupsSeeEveryChangeAtOnce() async throws {
        try await TestServer.run { client in
            let alice = try await client.signUp(alias: "Alice"), eve = try await client.signUp(alias: "Eve")
            func look(_ id: String, by token: String, environment: String = "sandbox") async throws -> PlayerLookupResponse {
                try await client.send(.post, "/v1/players/lookup", PlayerLookupRequest(playerIDs: [id]), token: token, environment: environment)
                    .decode(PlayerLookupResponse.self)
            }
            #expect(try await look(alice.player.playerID, by: eve.token).players.first?.alias == "Alice")
            _ = try await client.send(.patch, "/v1/me", UpdateProfileRequest(alias: "Alicia", status: "Back soon"), token: alice.token)
            let renamed = try await look(alice.player.playerID, by: eve.token).players.first
            #expect(renamed?.alias == "Alicia")
            #expect(renamed?.status == nil, "a stranger does not see the status")

            _ = try await client.send(.post, "/v1/friend-requests", SendFriendRequests(playerIDs: [eve.player.playerID], message: nil), token: alice.token)
            let request = try #require(try await pending(client, eve.token).first)
            _ = try await client.call(.post, "/v1/friend-requests/\(request.requestID)/accept", token: eve.token)
            let friend = try await look(alice.player.playerID, by: eve.token).players.first
            #expect(friend?.isFriend == true)
            #expect(friend?.status == "Back soon")
            _ = try await client.send(.patch, "/v1/me", UpdateProfileRequest(status: "Playing"), token: alice.token)
            #expect(try await look(alice.player.playerID, by: eve.token).players.first?.status == "Playing")

            #expect(try await client.call(.delete, "/v1/friends/\(eve.player.playerID)", token: alice.token).status == .noContent)
            let stranger = try await look(alice.player.playerID, by: eve.token).players.first
            #expect(stranger?.isFriend == false)
            #expect(stranger?.status == nil)

            // A cached sandbox player is still unknown to a device of the live environment.
            let live = try await client.signUp(alias: "Live", environment: "live")
            let fromLive = try await look(alice.player.playerID, by: live.token, environment: "live")
            #expect(fromLive.players.isEmpty)
            #expect(fromLive.unknownPlayerIDs == [alice.player.playerID])
        }
    }

    @Test func lookupsValidateTheirIDs() async throws {
        try await TestServer.run { client in
            let alice = try await client.signUp()
            // A new player with no friends asks for no one: an empty answer, not an error.
            let none = try await client.send(.post, "/v1/players/lookup", PlayerLookupRequest(playerIDs: []), token: alice.token)
            #expect(none.status == .ok)
            let empty = try none.decode(PlayerLookupResponse.self)
            #expect(empty.players.isEmpty && empty.unknownPlayerIDs.isEmpty)
            let tooMany = (0...100).map { "G:\($0)" }
            expectError(
                try await client.send(.post, "/v1/players/lookup", PlayerLookupRequest(playerIDs: tooMany), token: alice.token),
                .badRequest, "request.invalid_parameter", .invalidParameter)
        }
    }
}
