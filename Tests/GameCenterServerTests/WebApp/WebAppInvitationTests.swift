import Foundation
import GameCenterProtocol
import GameCenterStorage
import HTTPTypes
import Testing
@testable import GameCenterServer

/// The invitations page and a game's play-with-friends page: what they show, how their answers reach the game and
/// the inviter, and that nobody sees or answers another player's invitations.
@Suite struct WebAppInvitationTests {
    /// Ann (a device of the open game, its realtime channel open) and Bob (signed in on the page) are friends.
    struct Friends {
        let ann: SessionResponse, annAccount: String
        let bob: SessionResponse
        var bobPage: PageClient
    }

    static func friends(_ server: TestServer.Client) async throws -> Friends {
        let annAccount = WebAppAccountTests.newAccount(), bobAccount = WebAppAccountTests.newAccount()
        let ann = try await server.signUp(alias: "Ann", account: annAccount)
        let bob = try await server.signUp(alias: "Bob", account: bobAccount)
        try await befriend(server, ann, bob)
        server.services.matchmaking.channelOpened(sessionID: ann.sessionID)
        return Friends(ann: ann, annAccount: annAccount, bob: bob, bobPage: try await WebAppGameTests.signIn(server, bobAccount))
    }

    static func befriend(_ server: TestServer.Client, _ a: SessionResponse, _ b: SessionResponse) async throws {
        let sent = try await server.send(.post, "/v1/friend-requests", SendFriendRequests(playerIDs: [b.player.playerID], message: nil), token: a.token)
        #expect(sent.status == .created, "\(String(decoding: sent.body, as: UTF8.self))")
        let pending = try await server.call(.get, "/v1/friend-requests", token: b.token).decode(FriendRequestList.self)
        let request = try #require(pending.requests.first { $0.from == a.player.playerID })
        #expect(try await server.call(.post, "/v1/friend-requests/\(request.requestID)/accept", token: b.token).status == .noContent)
    }

    /// `inviter`'s device asks for a match of two inviting `invitee`; returns the invitation as the invitee's game
    /// lists it.
    static func invite(
        _ server: TestServer.Client, from inviter: SessionResponse, to invitee: SessionResponse, requestID: String = "r-invite",
        message: String? = "Tap with me!"
    ) async throws -> InvitationInfo {
        let body = MatchRequestBody(requestID: requestID, minPlayers: 2, maxPlayers: 2, playersToInvite: [invitee.player.playerID], inviteMessage: message)
        let answer = try await server.send(.post, "/v1/matchmaking/requests", body, token: inviter.token)
        #expect(answer.status == .created, "\(String(decoding: answer.body, as: UTF8.self))")
        let list = try await server.call(.get, "/v1/invitations", token: invitee.token).decode(InvitationList.self)
        return try #require(list.invitations.first { $0.inviter == inviter.player.playerID })
    }

    static func status(_ server: TestServer.Client, _ requestID: String, of player: SessionResponse) async throws -> MatchRequestStatus {
        try await server.call(.get, "/v1/matchmaking/requests/\(requestID)", token: player.token).decode(MatchRequestStatus.self)
    }

    static func events(_ server: TestServer.Client, of player: SessionResponse, _ kind: EventKind) async throws -> [String] {
        try await server.services.database.read { try await $0.events(playerID: player.player.playerID, after: 0, limit: 1000) }
            .filter { $0.kind == kind.rawValue }.map(\.payload)
    }

    /// The `<li>` of the invitations list that holds `text`.
    static func item(_ html: String, containing text: String) -> String? {
        html.components(separatedBy: "<li").first { $0.contains(text) }
    }

    @Test func thePageShowsWhoInvitesToWhichGameAndWhenItExpiresButNoPlayerIDs() async throws {
        try await TestServer.run { server in
            var friends = try await Self.friends(server)
            let invitation = try await Self.invite(server, from: friends.ann, to: friends.bob)
            // No manifest lifetime: the server's default, an hour.
            let lifetime = invitation.expiresAt.timeIntervalSince(Date())
            #expect((3590...3600).contains(lifetime), "expires in \(lifetime) s")

            let page = try await friends.bobPage.get("/invitations")
            #expect(page.status == .ok)
            #expect(page.html.contains(#"<a href="/invitations" aria-current="page">Invitations</a>"#))
            let item = try #require(Self.item(page.html, containing: "Ann invites you to play Open Game"))
            #expect(item.contains("“Tap with me!”") && item.contains("2 players"))
            #expect(item.contains(#"<time datetime="\#(PageDates.machine(invitation.expiresAt))">\#(PageDates.minute(invitation.expiresAt))</time>"#))
            #expect(item.contains("(in 59 minutes)"), "\(item)")
            #expect(item.contains(#"action="/invitations/accept""#) && item.contains(#"action="/invitations/decline""#))
            #expect(!page.html.contains(friends.ann.player.playerID))
            // The inviter sees nothing on their own invitations page.
            var annPage = try await WebAppGameTests.signIn(server, friends.annAccount)
            let annView = try await annPage.get("/invitations")
            #expect(!annView.html.contains("invites you to play") && annView.html.contains("No invitations are waiting for you."))
        }
    }

    @Test func anInvitationAcceptedOnThePageWaitsForTheGameWhichThenJoinsTheMatch() async throws {
        try await TestServer.run { server in
            var friends = try await Self.friends(server)
            let invitation = try await Self.invite(server, from: friends.ann, to: friends.bob)
            #expect(invitation.acceptedAt == nil)

            let accepted = try await friends.bobPage.submit(
                "/invitations/accept", on: "/invitations", [("invitation", invitation.invitationID)])
            #expect(accepted.status == .seeOther && accepted.headers[.location] == "/invitations?done=accepted")
            let page = try await friends.bobPage.get("/invitations?done=accepted")
            #expect(page.html.contains("Invitation accepted."))
            let item = try #require(Self.item(page.html, containing: "Ann invites you"))
            #expect(item.contains("Start Open Game on your device to join the match."))
            #expect(!item.contains("/invitations/accept") && item.contains("/invitations/decline"))
            // Accepting twice changes nothing.
            #expect(try await friends.bobPage.submit("/invitations/accept", on: "/invitations", [("invitation", invitation.invitationID)]).status == .seeOther)

            // The game hears it: pushed once to the running devices, and listed for the next start, accepted.
            let pushed = try await Self.events(server, of: friends.bob, .invitationAccepted)
            #expect(pushed.count == 1)
            let info = try WireCoding.makeDecoder().decode(InvitationInfo.self, from: Data(try #require(pushed.first).utf8))
            #expect(info.invitationID == invitation.invitationID && info.acceptedAt != nil && info.inviterAlias == "Ann")
            let listed = try await server.call(.get, "/v1/invitations", token: friends.bob.token).decode(InvitationList.self)
            #expect(listed.invitations.map(\.invitationID) == [invitation.invitationID])
            #expect(listed.invitations.first?.acceptedAt != nil)
            // The inviter's match still waits for the game to join.
            #expect(try await Self.status(server, "r-invite", of: friends.ann).invitees.map(\.state) == [.pending])

            // Bob's game starts and joins: the match starts with both.
            server.services.matchmaking.channelOpened(sessionID: friends.bob.sessionID)
            let joined = try await server.send(
                .post, "/v1/invitations/\(invitation.invitationID)/accept", AcceptInvitation(requestID: "r-join"), token: friends.bob.token)
            #expect(joined.status == .ok, "\(String(decoding: joined.body, as: UTF8.self))")
            let annStatus = try await Self.status(server, "r-invite", of: friends.ann)
            let bobStatus = try await Self.status(server, "r-join", of: friends.bob)
            #expect(annStatus.state == .matched && bobStatus.state == .matched && annStatus.matchID == bobStatus.matchID)
            // Answered: gone from the page, and the page cannot answer it any more.
            #expect(try await friends.bobPage.get("/invitations").html.contains("No invitations are waiting for you."))
            let late = try await friends.bobPage.submit("/invitations/decline", on: "/invitations", [("invitation", invitation.invitationID)])
            #expect(late.status == .gone && late.html.contains("can no longer be answered"))
        }
    }

    @Test func declineOnThePageIsTheGamesDeclineAndTheInviterIsTold() async throws {
        try await TestServer.run { server in
            var friends = try await Self.friends(server)
            let invitation = try await Self.invite(server, from: friends.ann, to: friends.bob)
            let declined = try await friends.bobPage.submit(
                "/invitations/decline", on: "/invitations", [("invitation", invitation.invitationID)])
            #expect(declined.status == .seeOther && declined.headers[.location] == "/invitations?done=declined")
            #expect(try await Self.status(server, "r-invite", of: friends.ann).invitees.map(\.state) == [.declined])
            let told = try await Self.events(server, of: friends.ann, .inviteeAnswered).compactMap {
                try? WireCoding.makeDecoder().decode(InviteeAnswered.self, from: Data($0.utf8))
            }
            #expect(told.map(\.state) == [.declined] && told.first?.playerID == friends.bob.player.playerID)
            #expect(try await server.call(.get, "/v1/invitations", token: friends.bob.token).decode(InvitationList.self).invitations.isEmpty)
            // Answered once: accepting it afterwards is refused with the API's code and status.
            let again = try await friends.bobPage.submit("/invitations/accept", on: "/invitations", [("invitation", invitation.invitationID)])
            #expect(again.status == .gone && again.html.contains("can no longer be answered"))
            #expect(try await Self.events(server, of: friends.bob, .invitationAccepted).isEmpty)
        }
    }

    @Test func nobodySeesOrAnswersAnotherPlayersInvitation() async throws {
        try await TestServer.run { server in
            var friends = try await Self.friends(server)
            let invitation = try await Self.invite(server, from: friends.ann, to: friends.bob)
            // Carol, Ann's friend too, signed in on the page; and Ann, the inviter.
            let carolAccount = WebAppAccountTests.newAccount()
            let carol = try await server.signUp(alias: "Carol", account: carolAccount)
            try await Self.befriend(server, friends.ann, carol)
            var carolPage = try await WebAppGameTests.signIn(server, carolAccount)
            let annPage = try await WebAppGameTests.signIn(server, friends.annAccount)
            #expect(try await carolPage.get("/invitations").html.contains("No invitations are waiting for you."))
            for var browser in [carolPage, annPage] {
                for verb in ["accept", "decline"] {
                    let refused = try await browser.submit("/invitations/\(verb)", on: "/invitations", [("invitation", invitation.invitationID)])
                    #expect(refused.status == .notFound && refused.html.contains("no invitation with this id is addressed to you"))
                }
            }
            // Made-up ids, and none at all.
            for id in ["", "inv_nothing", String(repeating: "x", count: 65)] {
                #expect(try await carolPage.submit("/invitations/accept", on: "/invitations", [("invitation", id)]).status == .notFound)
            }
            // Without the form's token nothing is answered, even by the invitee.
            let forged = try await friends.bobPage.post("/invitations/accept", [("invitation", invitation.invitationID)])
            #expect(forged.status == .forbidden)
            let crossSession = try await friends.bobPage.post(
                "/invitations/decline", [("csrf", try #require(try await carolPage.get("/invitations").csrf)), ("invitation", invitation.invitationID)])
            #expect(crossSession.status == .forbidden)
            // Signed out: sent to sign in.
            var stranger = PageClient(server)
            #expect(try await stranger.get("/invitations").headers[.location] == "/sign-in")
            let stored = try await server.services.database.read { try await $0.invitation(id: invitation.invitationID) }
            #expect(stored?.state == .pending && stored?.acceptedInAppAt == nil)
            #expect(try await Self.events(server, of: friends.bob, .invitationAccepted).isEmpty)
            #expect(try await Self.status(server, "r-invite", of: friends.ann).invitees.map(\.state) == [.pending])
        }
    }

    @Test func anExpiredInvitationLeavesThePageAndCannotBeAccepted() async throws {
        try await TestServer.run(admin: true) { server in
            var friends = try await Self.friends(server)
            let invitation = try await Self.invite(server, from: friends.ann, to: friends.bob)
            #expect(try await friends.bobPage.get("/invitations").html.contains("Ann invites you"))
            let token = try #require(try await friends.bobPage.get("/invitations").csrf)
            try await LeaderboardTests.advanceClock(server, hours: 3601.0 / 3600)
            let page = try await friends.bobPage.get("/invitations")
            #expect(!page.html.contains("Ann invites you"))
            let late = try await friends.bobPage.post("/invitations/accept", [("csrf", token), ("invitation", invitation.invitationID)])
            #expect(late.status == .gone && late.html.contains("can no longer be answered"))
        }
    }

    @Test func playWithFriendsKeepsTheChosenFriendsForTheGameUntilOneDeviceClaimsThem() async throws {
        try await TestServer.run(admin: true) { server in
            let annAccount = WebAppAccountTests.newAccount()
            let ann = try await server.signUp(alias: "Ann", account: annAccount)
            let bob = try await server.signUp(alias: "Bob"), carol = try await server.signUp(alias: "Carol")
            let stranger = try await server.signUp(alias: "Stranger")
            try await Self.befriend(server, ann, bob)
            try await Self.befriend(server, ann, carol)
            var page = try await WebAppGameTests.signIn(server, annAccount)

            let empty = try await page.get("/games/com.example.open/play")
            #expect(empty.status == .ok && empty.html.contains("<h1>Open Game: play with friends</h1>"))
            #expect(empty.html.contains(#"<label for="friend-0">Bob</label>"#) && empty.html.contains(#"<label for="friend-1">Carol</label>"#))
            #expect(!empty.html.contains("Waiting for Open Game to start"))
            #expect(try await page.get("/games/com.example.open/leaderboards").html.contains(#"href="/games/com.example.open/play""#))

            let chosen = try await page.submit(
                "/games/com.example.open/play", on: "/games/com.example.open/play",
                [("friend", carol.player.playerID), ("friend", bob.player.playerID)])
            #expect(chosen.status == .seeOther && chosen.headers[.location] == "/games/com.example.open/play?done=chosen")
            let waiting = try await page.get("/games/com.example.open/play?done=chosen")
            #expect(waiting.html.contains("Your friends are chosen."))
            #expect(waiting.html.contains("Waiting for Open Game to start: Carol and Bob."))
            #expect(waiting.html.contains(#"value="\#(bob.player.playerID)" checked"#))
            #expect(try await Self.events(server, of: ann, .playWithFriends).count == 1)

            // Ann's game claims the choice once; another device of hers then gets nothing.
            let claimed = try await server.call(.post, "/v1/matchmaking/play-with-friends/claim", token: ann.token).decode(PlayWithFriendsList.self)
            #expect(claimed.choices == [PlayWithFriends(bundleID: "com.example.open", playerIDs: [carol.player.playerID, bob.player.playerID])])
            let otherDevice = try await server.send(.post, "/v1/sessions", SignInRequest(account: annAccount, password: "password-1"))
                .decode(SessionResponse.self)
            #expect(
                try await server.call(.post, "/v1/matchmaking/play-with-friends/claim", token: otherDevice.token).decode(PlayWithFriendsList.self).choices
                    .isEmpty)
            #expect(!(try await page.get("/games/com.example.open/play").html.contains("Waiting for Open Game to start")))
            // Chosen again, for the expiry below.
            #expect(
                try await page.submit("/games/com.example.open/play", on: "/games/com.example.open/play", [("friend", bob.player.playerID)]).status
                    == .seeOther)

            // Bad choices are told on the form, without player ids.
            let none = try await page.submit("/games/com.example.open/play", on: "/games/com.example.open/play", [])
            #expect(none.status == .badRequest && none.html.contains("choose at least one friend to play with"))
            let notFriend = try await page.submit("/games/com.example.open/play", on: "/games/com.example.open/play", [("friend", stranger.player.playerID)])
            #expect(notFriend.status == .forbidden && notFriend.html.contains("you can play only with your friends"))
            #expect(!notFriend.html.contains(stranger.player.playerID))
            let unknown = try await page.submit("/games/com.example.open/play", on: "/games/com.example.open/play", [("friend", "G:nobody")])
            #expect(unknown.status == .notFound && !unknown.html.contains("G:nobody"))
            let myself = try await page.submit("/games/com.example.open/play", on: "/games/com.example.open/play", [("friend", ann.player.playerID)])
            #expect(myself.status == .badRequest && myself.html.contains("you cannot invite yourself"))
            #expect(try await page.get("/games/com.example.nothing/play").status == .notFound)
            let forged = try await page.post("/games/com.example.open/play", [("friend", bob.player.playerID)])
            #expect(forged.status == .forbidden)

            // The waiting choice (Bob) expires with the invitation lifetime.
            try await LeaderboardTests.advanceClock(server, hours: 3601.0 / 3600)
            #expect(try await server.call(.post, "/v1/matchmaking/play-with-friends/claim", token: ann.token).decode(PlayWithFriendsList.self).choices.isEmpty)
        }
    }

    @Test(
        arguments: [
            (0.0, "in less than a minute"), (59.9, "in less than a minute"), (60, "in 1 minute"), (3599, "in 59 minutes"),
            (3600, "in 60 minutes"), (7199, "in 119 minutes"), (7200, "in 2 hours"), (47 * 3600 + 3599, "in 47 hours"),
            (48 * 3600, "in 2 days"), (-5, "in less than a minute"),
        ] as [(Double, String)])
    func theTimeLeftIsToldInWholeUnits(seconds: Double, words: String) {
        let now = Date(timeIntervalSince1970: 1_700_000_000)
        #expect(PageDates.remaining(until: now.addingTimeInterval(seconds), from: now) == words)
    }
}

extension WebAppInvitationTests {
    /// The page's dates: read by people in UTC to the minute, and by machines as ISO 8601 in UTC.
    @Test func datesAreWrittenInUTCForPeopleAndMachines() {
        let date = Date(timeIntervalSince1970: 1_700_000_000)
        #expect(PageDates.minute(date) == "2023-11-14 22:13 UTC")
        #expect(PageDates.machine(date) == "2023-11-14T22:13:20Z")
    }
}
