import Foundation
import NetworkFaultProxy
@testable import OpenGameKit
import Testing

/// The matchmaking screen inviting more friends while it is shown, against a real server process: the invitee gets a
/// normal invitation, joins the same match, and the screen's refusals say what was wrong.
@Suite(.serialized, .timeLimit(.minutes(3))) struct MatchmakerScreenInviteLiveTests {
    typealias Live = MatchmakingLiveTests

    /// The GKError `invite(playerIDs:)` threw, or nil when it succeeded.
    static func refusal(_ screen: GKMatchmakerViewController, _ players: [String]) async -> GKError? {
        do {
            try await screen.invite(playerIDs: players)
            return nil
        } catch {
            return error as? GKError
        }
    }

    @Test(arguments: LiveServer.engines)
    func aFriendInvitedWhileTheScreenIsShownJoinsTheSameMatch(engine: String) async throws {
        let server = try await Live.server(engine)
        let alice = try await Live.player(server, "Alice"), bob = try await Live.player(server, "Bob")
        let cat = try await Live.player(server, "Cat")
        for friend in [bob, cat] { try await Live.befriend(alice, friend) }
        let bobInvites = InviteInbox(), catInvites = InviteInbox()
        bobInvites.watch(bob)
        catInvites.watch(cat)
        let (bobID, catID) = (bob.localPlayer.playerID, cat.localPlayer.playerID)

        let screen = GKMatchmakerViewController(matchRequest: Live.request(2, 3, invite: [bobID]), in: alice)
        let outcome = ScreenOutcome()
        screen.matchmakerDelegate = outcome
        #expect(screen.lobby.slots == [.localPlayer, .invitee(playerID: bobID, state: .pending), .open])
        screen.present()
        try await screen.invite(playerIDs: [catID])
        #expect(screen.lobby.slots == [.localPlayer, .invitee(playerID: bobID, state: .pending), .invitee(playerID: catID, state: .pending)])

        // Cat gets a normal invitation: an event, listed among the received invites, from Alice, for three players.
        let catInvite = try await catInvites.next()
        #expect(catInvite.inviter == alice.localPlayer.playerID && catInvite.maxPlayers == 3)
        #expect(cat.matchmaker.receivedInvites.map(\.invitationID) == [catInvite.invitationID])
        let catScreen = GKMatchmakerViewController(invite: catInvite)
        let catOutcome = ScreenOutcome()
        catScreen.matchmakerDelegate = catOutcome
        catScreen.present()
        try await waitUntil("Alice's screen shows Cat accepted") { screen.lobby.slots.contains(.invitee(playerID: catID, state: .accepted)) }
        #expect(outcome.players == nil && screen.lobby.phase == .searching, "Bob has not answered")

        let bobScreen = GKMatchmakerViewController(invite: try await bobInvites.next())
        let bobOutcome = ScreenOutcome()
        bobScreen.matchmakerDelegate = bobOutcome
        bobScreen.present()
        let match = try await outcome.match()
        #expect(Set(try await allConnected(match)) == [bobID, catID])
        #expect(try await catOutcome.match().matchID == match.matchID)
        #expect(try await bobOutcome.match().matchID == match.matchID)
        let slots = screen.lobby.slots
        #expect(slots.count == 3 && slots.contains(.localPlayer))
        #expect(slots.contains(.invitee(playerID: bobID, state: .connected)) && slots.contains(.invitee(playerID: catID, state: .connected)))
        try await server.stop()
    }

    @Test(arguments: LiveServer.engines)
    func theScreenRefusesWhatItCannotInvite(engine: String) async throws {
        let server = try await Live.server(engine)
        let alice = try await Live.player(server, "Alice"), bob = try await Live.player(server, "Bob")
        let cat = try await Live.player(server, "Cat"), dave = try await Live.player(server, "Dave")
        let eve = try await Live.player(server, "Eve")
        for friend in [bob, cat, eve] { try await Live.befriend(alice, friend) }
        let bobInvites = InviteInbox()
        bobInvites.watch(bob)
        let (bobID, catID, eveID) = (bob.localPlayer.playerID, cat.localPlayer.playerID, eve.localPlayer.playerID)

        let screen = GKMatchmakerViewController(matchRequest: Live.request(2, 3, invite: [bobID]), in: alice)
        let notShown = await Self.refusal(screen, [catID])
        #expect(notShown?.code == .invalidParameter && notShown?.message.contains("only while the screen is shown") == true)
        screen.present()

        #expect(await Self.refusal(screen, [dave.localPlayer.playerID])?.serverCode == "matchmaking.not_friends")
        #expect(await Self.refusal(screen, [alice.localPlayer.playerID])?.serverCode == "matchmaking.invite_self")
        #expect(await Self.refusal(screen, [bobID])?.serverCode == "matchmaking.already_in_match")
        let noSeats = await Self.refusal(screen, [catID, eveID])
        #expect(noSeats?.serverCode == "matchmaking.no_open_seats" && noSeats?.code == .matchRequestInvalid)
        #expect(screen.lobby.slots == [.localPlayer, .invitee(playerID: bobID, state: .pending), .open], "nothing changed")

        // The completion-handler form, and a full lobby after it.
        let failure: String? = await withCheckedContinuation { continuation in
            screen.invite(playerIDs: [catID]) { error in continuation.resume(returning: error.map { "\($0)" }) }
        }
        #expect(failure == nil)
        #expect(await Self.refusal(screen, [eveID])?.serverCode == "matchmaking.no_open_seats")

        // An invitee's screen cannot invite: only the host's can.
        let bobScreen = GKMatchmakerViewController(invite: try await bobInvites.next())
        #expect(await Self.refusal(bobScreen, [eveID])?.message.contains("only the screen of the player who made the match request") == true)

        // Cancelled, the screen invites nobody.
        screen.cancel()
        try await waitUntil("the screen was cancelled") { screen.lobby.phase == .cancelled }
        #expect(await Self.refusal(screen, [eveID])?.code == .invalidParameter)
        try await server.stop()
    }
}
