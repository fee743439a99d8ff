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

    /// A running game shows an invitation with the standard invitation screen: drawn by the game from the model
    /// (Accept hands it to the invite handler accepted), or presented as the app's invitations page (accepted there,
    /// the running game's handler gets it; Done finishes the screen).
    @Test func aRunningGameAnswersAnInvitationOnItsStandardScreenOrOnTheAppsPage() async throws {
        let server = try await Self.server()
        let (alice, _) = try await Self.player(server, "Alice")
        let (bob, _) = try await Self.player(server, "Bob")
        try await MatchmakingLiveTests.befriend(alice, bob)
        let inbox = InviteInbox()
        inbox.watch(bob)
        let finished = InvitationScreenLog()

        // Drawn by the game.
        let request = MatchmakingLiveTests.request(2, 3, invite: [bob.localPlayer.playerID])
        request.inviteMessage = "One more?"
        let aliceTask = MatchmakingLiveTests.find(alice, request)
        let received = try await inbox.next()
        #expect(!received.isAccepted)
        let screen = GKInvitationViewController(invite: received)
        screen.invitationDelegate = finished
        #expect(screen.headline == "Alice invites you to a match of 2 to 3 players" && screen.message == "One more?")
        #expect(abs(screen.expiresAt.timeIntervalSinceNow - Self.lifetime) < 60)
        screen.accept()
        let accepted = try await inbox.next()
        #expect(accepted.invitationID == received.invitationID && accepted.isAccepted)
        #expect(finished.count == 1)
        let bobMatch = try await bob.matchmaker.match(for: accepted)
        let aliceMatch = try await value(of: aliceTask, "Alice's match")
        #expect(aliceMatch.matchID == bobMatch.matchID)
        aliceMatch.disconnect()
        bobMatch.disconnect()

        // Presented as the app's invitations page.
        let secondTask = MatchmakingLiveTests.find(alice, MatchmakingLiveTests.request(2, 2, invite: [bob.localPlayer.playerID]))
        let second = try await inbox.next()
        let presented = GKInvitationViewController(invite: second)
        presented.invitationDelegate = finished
        var browser = WebAppBrowser(server: server.url)
        let opened = try await browser.get(try await presented.presentationURL().path)
        let page = try await browser.get(try #require(opened.location))
        #expect(page.html.contains("Alice invites you to play Lobby"))
        let csrf = try #require(page.field("csrf"))
        #expect(try await browser.post("/invitations/accept", [("csrf", csrf), ("invitation", second.invitationID)]).status == 303)
        let viaPage = try await inbox.next()
        #expect(viaPage.invitationID == second.invitationID && viaPage.isAccepted)
        #expect(finished.count == 1, "the page is still open")
        #expect(try await browser.post("/screen/done", [("csrf", csrf)]).status == 200)
        try await waitUntil("Done finished the screen") { finished.count == 2 }
        let secondMatch = try await bob.matchmaker.match(for: viaPage)
        #expect(try await value(of: secondTask, "Alice's second match").matchID == secondMatch.matchID)
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

/// Counts an invitation screen's `…DidFinish`.
final class InvitationScreenLog: GKInvitationViewControllerDelegate, @unchecked Sendable {
    private let lock = NSLock()
    private var finished = 0
    var count: Int { lock.withLock { finished } }

    func invitationViewControllerDidFinish(_ viewController: GKInvitationViewController) {
        lock.withLock { finished += 1 }
    }
}
