import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import NetworkFaultProxy
@testable import OpenGameKit
import Testing

/// The Game Center app's invitations and play-with-friends reaching games, against a real server: an invitation
/// accepted on the invitations page is handed to the invitee's game when it next starts (`inviteHandler(invite,
/// nil)`, `isAccepted`) and joining it makes the match; friends chosen on a game's page reach the game's next start
/// as `inviteHandler(nil, playerIDs)`, once. The game `com.example.lobby` sets no invitation lifetime: the server's
/// `--invitation-lifetime 600` applies.
@Suite(.serialized, .timeLimit(.minutes(3))) struct GameCenterAppInvitationLiveTests {
    static let lobby = "com.example.lobby"
    static let lifetime = 600.0

    static func server(_ engine: String = "sqlite") async throws -> LiveServer {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("app-games-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try "bundleID: \(lobby)\nname: Lobby\nmatchmaking: { fillSeconds: 1 }\n"
            .write(to: folder.appendingPathComponent("lobby.yaml"), atomically: true, encoding: .utf8)
        let server = try LiveServer(engine: engine, games: folder.path)
        try await server.start(extraArguments: ["--invitation-lifetime", "\(Int(lifetime))"])
        return server
    }

    /// A player of the lobby game signed up on a device of their own; returns the device and the account name.
    static func player(_ server: LiveServer, _ alias: String) async throws -> (device: GKGameCenter, account: String) {
        let device = Devices.make(server, bundleID: lobby)
        let account = "\(alias.lowercased())-\(UUID().uuidString.prefix(8).lowercased())"
        try await device.localPlayer.authenticate(.signUp(account: account, password: password(alias), alias: alias, underage: false))
        return (device, account)
    }

    static func password(_ alias: String) -> String { "password-\(alias)" }

    /// The player starts the game on a new device: signs in, and sets the invitation handler right after, as the
    /// seed says.
    static func start(_ server: LiveServer, account: String, alias: String, inbox: InviteInbox) async throws -> GKGameCenter {
        let device = Devices.make(server, bundleID: lobby)
        try await device.localPlayer.authenticate(.signIn(account: account, password: password(alias)))
        inbox.watch(device)
        return device
    }

    @Test(arguments: LiveServer.engines)
    func anInvitationAcceptedOnThePageReachesTheGameWhenItStartsAndItJoinsTheMatch(engine: String) async throws {
        let server = try await Self.server(engine)
        let (alice, _) = try await Self.player(server, "Alice")
        let (bobFirst, bobAccount) = try await Self.player(server, "Bob")
        try await MatchmakingLiveTests.befriend(alice, bobFirst)
        let bobID = bobFirst.localPlayer.playerID
        await bobFirst.close()  // Bob's game is not running

        let responses = ResponseLog()
        let request = MatchmakingLiveTests.request(2, 2, invite: [bobID])
        request.inviteMessage = "Lobby tonight?"
        request.inviteeResponseHandler = { player, state in responses.record(player, state) }
        let aliceTask = MatchmakingLiveTests.find(alice, request)
        try await MatchmakingLiveTests.sent(alice, "the server has Alice's request (and so the invitation)")

        // Bob accepts in his browser.
        var browser = try await WebAppBrowser.signedIn(to: server.url, account: bobAccount, password: Self.password("Bob"))
        let page = try await browser.get("/invitations")
        #expect(page.html.contains("Alice invites you to play Lobby") && page.html.contains("“Lobby tonight?”"))
        #expect(page.html.contains("(in 9 minutes)"), "the server's invitation lifetime, 600 s")
        let invitationID = try #require(page.field("invitation"))
        let accepted = try await browser.submit("/invitations/accept", on: "/invitations", [("invitation", invitationID)])
        #expect(accepted.status == 303 && accepted.location == "/invitations?done=accepted")
        #expect(responses.states(of: bobID).isEmpty, "the inviter hears Bob's answer when his game joins")

        // Bob starts the game: its invitation handler gets the accepted invitation, and joining it makes the match.
        let inbox = InviteInbox()
        let bob = try await Self.start(server, account: bobAccount, alias: "Bob", inbox: inbox)
        let invite = try await inbox.next()
        #expect(invite.invitationID == invitationID && invite.isAccepted)
        #expect(invite.inviter == alice.localPlayer.playerID && invite.inviterAlias == "Alice" && invite.message == "Lobby tonight?")
        #expect(abs(invite.expiresAt.timeIntervalSinceNow - Self.lifetime) < 60)
        let bobMatch = try await bob.matchmaker.match(for: invite)
        let aliceMatch = try await value(of: aliceTask, "Alice's match")
        #expect(bobMatch.matchID == aliceMatch.matchID)
        #expect(try await allConnected(aliceMatch) == [bobID])
        #expect(try await allConnected(bobMatch) == [alice.localPlayer.playerID])
        try await waitUntil("the inviter saw accepted then connected") { responses.states(of: bobID) == [.accepted, .connected] }
        #expect(inbox.count == 0, "the invitation was handed over once")
        #expect(!(try await browser.get("/invitations").html.contains("Alice invites you")))
        try await server.stop()
    }

    @Test func aRunningGameGetsTheInvitationAgainAcceptedWhenThePlayerAcceptsItOnThePage() async throws {
        let server = try await Self.server()
        let (alice, _) = try await Self.player(server, "Alice")
        let (bob, bobAccount) = try await Self.player(server, "Bob")
        try await MatchmakingLiveTests.befriend(alice, bob)
        let inbox = InviteInbox()
        inbox.watch(bob)
        let aliceTask = MatchmakingLiveTests.find(alice, MatchmakingLiveTests.request(2, 2, invite: [bob.localPlayer.playerID]))
        let unanswered = try await inbox.next()
        #expect(!unanswered.isAccepted)

        var browser = try await WebAppBrowser.signedIn(to: server.url, account: bobAccount, password: Self.password("Bob"))
        let accepted = try await browser.submit("/invitations/accept", on: "/invitations", [("invitation", unanswered.invitationID)])
        #expect(accepted.status == 303)
        let invite = try await inbox.next()
        #expect(invite.invitationID == unanswered.invitationID && invite.isAccepted)
        let bobMatch = try await bob.matchmaker.match(for: invite)
        #expect(try await value(of: aliceTask, "Alice's match").matchID == bobMatch.matchID)
        try await server.stop()
    }

    @Test func friendsChosenOnThePageReachTheGameWhenItStartsOnce() async throws {
        let server = try await Self.server()
        let (aliceFirst, aliceAccount) = try await Self.player(server, "Alice")
        let (bob, _) = try await Self.player(server, "Bob")
        try await MatchmakingLiveTests.befriend(aliceFirst, bob)
        await aliceFirst.close()  // Alice's game is not running

        var browser = try await WebAppBrowser.signedIn(to: server.url, account: aliceAccount, password: Self.password("Alice"))
        let page = try await browser.get("/games/\(Self.lobby)/play")
        #expect(page.status == 200 && page.html.contains("Bob"))
        #expect(page.field("friend") == bob.localPlayer.playerID)
        let chosen = try await browser.submit("/games/\(Self.lobby)/play", on: "/games/\(Self.lobby)/play", [("friend", bob.localPlayer.playerID)])
        #expect(chosen.status == 303)

        // Alice starts the game: its invitation handler gets Bob's id, and the choice is used up.
        let inbox = InviteInbox()
        let alice = try await Self.start(server, account: aliceAccount, alias: "Alice", inbox: inbox)
        #expect(try await inbox.nextPlayers() == [bob.localPlayer.playerID])
        // Claimed, so used up on the server: the page no longer shows it waiting (another device claiming it gets
        // nothing: the in-process tests show it).
        #expect(!(try await browser.get("/games/\(Self.lobby)/play").html.contains("Waiting for Lobby to start")))
        #expect(inbox.count == 0)

        // The game invites them, as the seed's playersToInvite.
        let bobInbox = InviteInbox()
        bobInbox.watch(bob)
        let aliceTask = MatchmakingLiveTests.find(alice, MatchmakingLiveTests.request(2, 2, invite: [bob.localPlayer.playerID]))
        let bobMatch = try await bob.matchmaker.match(for: try await bobInbox.next())
        #expect(try await value(of: aliceTask, "Alice's match").matchID == bobMatch.matchID)
        try await server.stop()
    }
}
