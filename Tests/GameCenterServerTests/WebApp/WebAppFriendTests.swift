import Foundation
import GameCenterProtocol
import Testing
@testable import GameCenterServer

/// The friends page: requests by account name or alias, answers, and what it shows of other players.
@Suite struct WebAppFriendTests {
    /// Names tried on the page count against the sender's friend-request limit, found or not: nobody can enumerate
    /// accounts faster than they could send requests.
    @Test func namesTriedCountAgainstTheFriendRequestLimit() async throws {
        try await TestServer.run { server in
            var ann = try await WebAppAccountTests.signUp(server, alias: "Ann")
            for index in 0..<30 {
                let unknown = try await ann.submit("/friends/request", on: "/friends", [("name", "nobody-\(index)-\(UUID().uuidString.prefix(6))")])
                #expect(unknown.status == .notFound)
            }
            let refused = try await ann.submit("/friends/request", on: "/friends", [("name", "nobody-else")])
            #expect(refused.status == .tooManyRequests)
        }
    }

    @Test func friendRequestsAreSentByAccountNameOrByAnAliasOnlyOnePlayerHas() async throws {
        try await TestServer.run { server in
            let unique = "Zed \(UUID().uuidString.prefix(6))"
            let shared = "Twin \(UUID().uuidString.prefix(6))"
            let zedAccount = WebAppAccountTests.newAccount()
            let twinAccount = WebAppAccountTests.newAccount()
            let zed = try await server.signUp(alias: unique, account: zedAccount)
            let twin = try await server.signUp(alias: shared, account: twinAccount)
            _ = try await server.signUp(alias: shared)
            _ = try await server.signUp(alias: "Elsewhere", environment: "live", account: "live-\(UUID().uuidString.prefix(8).lowercased())")
            var ann = try await WebAppAccountTests.signUp(server, alias: "Ann")

            // A unique alias.
            let byAlias = try await ann.submit("/friends/request", on: "/friends", [("name", unique), ("message", "hi there")])
            #expect(byAlias.status == .seeOther)
            // An alias two players share: asked for the account name, nothing sent.
            let ambiguous = try await ann.submit("/friends/request", on: "/friends", [("name", shared)])
            #expect(ambiguous.status == .badRequest)
            #expect(ambiguous.html.contains("several players use the alias"))
            #expect(ambiguous.html.contains(#"value="\#(shared)""#))
            // The account name (in any case) picks one of them.
            let byName = try await ann.submit("/friends/request", on: "/friends", [("name", twinAccount.uppercased())])
            #expect(byName.status == .seeOther)
            // Unknown names, names of another environment, and empty names.
            for name in ["nobody-\(UUID().uuidString.prefix(6))", "Elsewhere"] {
                let unknown = try await ann.submit("/friends/request", on: "/friends", [("name", name)])
                #expect(unknown.status == .notFound)
                #expect(unknown.html.contains("no player has the account name or alias"))
            }
            #expect(try await ann.submit("/friends/request", on: "/friends", [("name", "  ")]).status == .badRequest)
            // Twice to the same player: told with the alias, never the player id.
            let again = try await ann.submit("/friends/request", on: "/friends", [("name", zedAccount)])
            #expect(again.status == .conflict)
            #expect(again.html.contains("your friend request to \(unique) is still waiting"))
            #expect(!again.html.contains(zed.player.playerID))

            let friends = try await ann.get("/friends")
            #expect(friends.html.contains(unique) && friends.html.contains(shared))
            #expect(!friends.html.contains(zed.player.playerID) && !friends.html.contains(twin.player.playerID))
            // The recipients got the requests.
            let pending = try await server.call(.get, "/v1/friend-requests", token: zed.token).decode(FriendRequestList.self)
            #expect(pending.requests.map(\.fromAlias) == ["Ann"])
            #expect(pending.requests.first?.message == "hi there")
        }
    }

    @Test func anUnderageAccountSignedUpOnThePageSendsNoFriendRequests() async throws {
        try await TestServer.run { server in
            let bobAccount = WebAppAccountTests.newAccount()
            _ = try await server.signUp(alias: "Bob", account: bobAccount)
            var child = PageClient(server)
            let signUp = try await child.submit(
                "/sign-up", on: "/sign-up",
                [
                    ("account", WebAppAccountTests.newAccount()), ("password", "password-1"),
                    ("alias", "Kid"), ("underage", "on"), ("environment", "sandbox"),
                ])
            #expect(signUp.status == .seeOther)
            let refused = try await child.submit("/friends/request", on: "/friends", [("name", bobAccount)])
            #expect(refused.status == .forbidden)
            #expect(refused.html.contains("underage accounts cannot send or accept friend requests"))
        }
    }

    @Test func requestsAreAcceptedDeclinedAndFriendsRemovedFromThePage() async throws {
        try await TestServer.run { server in
            let bob = try await server.signUp(alias: "Bob")
            let carol = try await server.signUp(alias: "Carol")
            _ = try await server.send(.patch, "/v1/me", UpdateProfileRequest(status: "Bob's secret plans"), token: bob.token)
            var ann = try await WebAppAccountTests.signUp(server, alias: "Ann")
            let annID = try await server.services.friends.player(named: "Ann", environment: .sandbox).playerID
            for sender in [bob, carol] {
                #expect(
                    try await server.send(
                        .post, "/v1/friend-requests", SendFriendRequests(playerIDs: [annID], message: nil),
                        token: sender.token
                    ).status == .created)
            }
            // A failed request leaves its typed message in the form, and only there.
            let failed = try await ann.submit("/friends/request", on: "/friends", [("name", "nobody-at-all"), ("message", "typed words")])
            #expect(failed.status == .notFound)
            #expect(failed.html.components(separatedBy: "typed words").count == 2)
            #expect(!failed.html.contains("“”"))
            let page = try await ann.get("/friends")
            // Requests for Ann show aliases, but not a stranger's status.
            #expect(page.html.contains("Bob") && page.html.contains("Carol"))
            #expect(!page.html.contains("secret plans"))
            let pending = try await server.services.friends.pending(for: AuthenticatedSession(sessionID: "", playerID: annID, expiresAt: 0))
            let fromBob = try #require(pending.first { $0.fromAlias == "Bob" }?.requestID)
            let fromCarol = try #require(pending.first { $0.fromAlias == "Carol" }?.requestID)
            #expect(try await ann.post("/friends/accept", [("csrf", page.csrf ?? ""), ("request", fromBob)]).status == .seeOther)
            #expect(try await ann.post("/friends/decline", [("csrf", page.csrf ?? ""), ("request", fromCarol)]).status == .seeOther)
            let answered = try await ann.post("/friends/accept", [("csrf", page.csrf ?? ""), ("request", fromCarol)])
            #expect(answered.status == .conflict)
            let friends = try await ann.get("/friends")
            // A friend's status is shown; Carol is gone.
            #expect(friends.html.contains("Bob&#39;s secret plans"))
            #expect(!friends.html.contains("Carol"))
            #expect(try await ann.post("/friends/remove", [("csrf", friends.csrf ?? ""), ("player", bob.player.playerID)]).status == .seeOther)
            #expect(!(try await ann.get("/friends").html.contains("Bob")))
            let notFriend = try await ann.post("/friends/remove", [("csrf", friends.csrf ?? ""), ("player", bob.player.playerID)])
            #expect(notFriend.status == .notFound)
            #expect(notFriend.html.contains("that player is not your friend"))
            #expect(!notFriend.html.contains(bob.player.playerID))
        }
    }

    /// The seed's app lets players "see the games that their friends are playing": each friend's games of this server
    /// played in the last 30 days, linked to their leaderboards. The sandbox shares none, as the seed says.
    @Test(arguments: ["sandbox", "live"])
    func friendsShowTheGamesTheyPlayedRecently(environment: String) async throws {
        try await TestServer.run { server in
            let bobAccount = WebAppAccountTests.newAccount()
            // Signing up through the API signs Bob in to the test game, "Open Game".
            let bob = try await server.signUp(alias: "Bob", environment: environment, account: bobAccount)
            var ann = try await WebAppAccountTests.signUp(server, alias: "Ann", environment: environment)
            #expect(try await ann.submit("/friends/request", on: "/friends", [("name", bobAccount)]).status == .seeOther)
            let request = try #require(
                try await server.call(.get, "/v1/friend-requests", token: bob.token, environment: environment)
                    .decode(FriendRequestList.self).requests.first)
            let accepted = try await server.call(.post, "/v1/friend-requests/\(request.requestID)/accept", token: bob.token, environment: environment)
            #expect(accepted.status == .noContent)
            let page = try await ann.get("/friends")
            #expect(page.html.contains("<strong>Bob</strong>"))
            let played = #"Played recently: <span class="game"><a href="/games/com.example.open/leaderboards">Open Game</a>"#
            #expect(page.html.contains(played) == (environment == "live"), "\(page.html)")
            #expect(page.html.contains("Played recently") == (environment == "live"))
        }
    }
}
