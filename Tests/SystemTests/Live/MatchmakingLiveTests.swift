import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import NetworkFaultProxy
@testable import OpenGameKit
import Testing

/// Matchmaking through the SDK against real server processes: auto-match, roles, groups, invitations, hosted
/// matches, cancelling, disconnects and activity. Games: `com.example.arena` (fill time 1 s, invitations live
/// 30 s) and `com.example.quest` (every request names a role).
@Suite(.serialized, .timeLimit(.minutes(3))) struct MatchmakingLiveTests {
    static let adminKey = "live-admin-key-0123456789"
    static let arena = "com.example.arena"
    static let quest = "com.example.quest"
    /// Like the arena, with a fill time long enough that players requesting together always arrive within it.
    static let patient = "com.example.patient"
    /// Relays matches of up to 16 players (`matchmaking.maxRelayedPlayers`); the others keep the seed's 4.
    static let crowd = "com.example.crowd"

    /// A folder with the two test games' manifests.
    static func games() throws -> String {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("mm-games-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try """
        bundleID: \(arena)
        name: Arena
        matchmaking: { fillSeconds: 1, invitationSeconds: 30 }
        """.write(to: folder.appendingPathComponent("arena.yaml"), atomically: true, encoding: .utf8)
        try """
        bundleID: \(quest)
        name: Quest
        matchmaking: { rolesRequired: true }
        """.write(to: folder.appendingPathComponent("quest.yaml"), atomically: true, encoding: .utf8)
        try """
        bundleID: \(patient)
        name: Patient
        matchmaking: { fillSeconds: 10 }
        """.write(to: folder.appendingPathComponent("patient.yaml"), atomically: true, encoding: .utf8)
        try """
        bundleID: \(crowd)
        name: Crowd
        matchmaking: { maxRelayedPlayers: 16 }
        """.write(to: folder.appendingPathComponent("crowd.yaml"), atomically: true, encoding: .utf8)
        return folder.path
    }

    static func server(_ engine: String = "sqlite") async throws -> LiveServer {
        let server = try LiveServer(engine: engine, games: try games())
        try await server.start(extraArguments: ["--admin-key", adminKey, "--test-clock"])
        return server
    }

    static func player(_ server: LiveServer, _ alias: String, game: String = arena) async throws -> GKGameCenter {
        let device = Devices.make(server, bundleID: game)
        let account = "\(alias.lowercased())-\(UUID().uuidString.prefix(8).lowercased())"
        try await device.localPlayer.authenticate(.signUp(account: account, password: "password-\(alias)", alias: alias, underage: false))
        return device
    }

    static func request(_ min: Int, _ max: Int, group: UInt32 = 0, role: UInt32 = 0, invite: [String]? = nil) -> GKMatchRequest {
        let request = GKMatchRequest(minPlayers: min, maxPlayers: max)
        request.playerGroup = group
        request.playerAttributes = role
        request.playersToInvite = invite
        return request
    }

    /// Starts `findMatch` in the background.
    static func find(_ device: GKGameCenter, _ request: GKMatchRequest) -> Task<GKMatch, any Error> {
        Task { try await device.matchmaker.findMatch(for: request) }
    }

    static func befriend(_ a: GKGameCenter, _ b: GKGameCenter) async throws {
        try await GKFriendRequest.send(to: [b.localPlayer.playerID], message: nil, in: a)
        try await #require(try await GKFriendRequest.loadPending(in: b).first).accept()
    }

    /// Waits until `device` has a waiting request in the server's activity log for its group.
    static func activity(_ device: GKGameCenter, group: UInt32) async throws -> Int {
        try await device.matchmaker.queryPlayerGroupActivity(group)
    }

    /// Why a test lets the queue run before checking that a request was NOT matched.
    static let unmatchedBecause =
        "the queue matches on the server's own clock (fill times, a tick every 25 ms) and tells nobody when a tick "
        + "matched nothing: a wrong match would come within the arena's 1 s fill time of the requests arriving"

    /// Waits until the server has `device`'s match request.
    static func sent(_ device: GKGameCenter, _ what: String) async throws {
        try await waitUntil(what) { device.matchmaker.waitingRequests.sent == 1 }
    }

    @Test(arguments: LiveServer.engines)
    func twoRequestsBecomeOneMatchThatEveryMemberReceives(engine: String) async throws {
        let server = try await Self.server(engine)
        let alice = try await Self.player(server, "Alice"), bob = try await Self.player(server, "Bob")
        let first = Self.find(alice, Self.request(2, 2))
        let second = Self.find(bob, Self.request(2, 2))
        let (a, b) = (try await value(of: first, "Alice's match"), try await value(of: second, "Bob's match"))
        #expect(a.matchID == b.matchID)
        #expect(try await allConnected(a) == [bob.localPlayer.playerID])
        #expect(try await allConnected(b) == [alice.localPlayer.playerID])
        #expect(a.expectedPlayerCount == 0)

        // Leaving is told to the other member at once.
        let events = b.events
        a.disconnect()
        let left = try await nextEvent(events) { event -> String? in
            if case .playerStateChanged(let player, .disconnected) = event { player } else { nil }
        }
        #expect(left == alice.localPlayer.playerID)
        #expect(b.playerIDs.isEmpty)
        try await server.stop()
    }

    @Test func aMatchWaitsItsFillTimeForMorePlayersThenStartsWithWhoCame() async throws {
        let server = try await Self.server()
        let devices = try await [
            Self.player(server, "P1", game: Self.patient), Self.player(server, "P2", game: Self.patient), Self.player(server, "P3", game: Self.patient),
        ]
        // 2…3 players: the first two can start, but the match waits its fill time (10 s) for a third, and starts as soon
        // as the third is there. (With the arena's 1 s, a loaded machine let the third arrive late: it then waited
        // for a partner who never came.)
        let tasks = devices.map { Self.find($0, Self.request(2, 3)) }
        let matches = try await tasks.asyncMap { try await value(of: $0, "a match of the fill-time players") }
        #expect(Set(matches.map(\.matchID)).count == 1)
        #expect(try await allConnected(matches[0]).count == 2)

        // Two players of 2…4 start together after the fill time, with nobody else coming.
        let pair = try await [Self.player(server, "P4"), Self.player(server, "P5")]
        let pairMatches = try await pair.map { Self.find($0, Self.request(2, 4)) }.asyncMap { try await value(of: $0, "a match of the pair") }
        #expect(pairMatches[0].matchID == pairMatches[1].matchID)
        #expect(try await allConnected(pairMatches[0]) == [pair[1].localPlayer.playerID])

        // Requests whose sizes cannot agree never match: 2…2 and 3…4.
        let small = try await Self.player(server, "Small"), large = try await Self.player(server, "Large")
        let smallTask = Self.find(small, Self.request(2, 2)), largeTask = Self.find(large, Self.request(3, 4))
        try await Self.sent(small, "the server has the 2…2 request")
        try await Self.sent(large, "the server has the 3…4 request")
        #expect(try await isStillRunning(smallTask, after: .milliseconds(1500), because: Self.unmatchedBecause))
        small.matchmaker.cancel()
        large.matchmaker.cancel()
        await #expect(throws: GKError.self) { try await value(of: smallTask, "the cancelled 2…2 request") }
        await #expect(throws: GKError.self) { try await value(of: largeTask, "the cancelled 3…4 request") }
        try await server.stop()
    }

    @Test func theSeedsFourRolesFormOneMatchOfEachRoleNeverTwoOfOne() async throws {
        let server = try await Self.server()
        let fighter: UInt32 = 0xFF00_0000, cleric: UInt32 = 0x00FF_0000, wizard: UInt32 = 0x0000_FF00, thief: UInt32 = 0x0000_00FF
        var heroes: [(device: GKGameCenter, role: UInt32)] = []
        for (index, role) in [fighter, fighter, fighter, cleric, wizard, thief].enumerated() {
            heroes.append((try await Self.player(server, "Hero\(index)", game: Self.quest), role))
        }
        let players = heroes
        // Three fighters wait first (each alone: a fighter cannot join a fighter), then one of each other role.
        let fighters = players.prefix(3).map { Self.find($0.device, Self.request(4, 4, role: $0.role)) }
        try await waitUntil("the fighters wait") { try await players[0].device.matchmaker.queryActivity() == 3 }
        let others = players.suffix(3).map { Self.find($0.device, Self.request(4, 4, role: $0.role)) }
        let match = try await value(of: others[0], "the cleric's match")
        for task in others.dropFirst() { #expect(try await value(of: task, "the wizard's and the thief's matches").matchID == match.matchID) }
        let members = Set(try await allConnected(match) + [players[3].device.localPlayer.playerID])
        let roles = players.filter { members.contains($0.device.localPlayer.playerID) }.map(\.role)
        #expect(roles.sorted() == [thief, wizard, cleric, fighter])
        // Exactly one fighter is in it (the member list says which); the other two keep waiting: the match is full,
        // and two fighters alone can never start one.
        let waiting = fighters.indices.filter { !members.contains(players[$0].device.localPlayer.playerID) }
        #expect(waiting.count == 2)
        for index in fighters.indices where !waiting.contains(index) {
            #expect(try await value(of: fighters[index], "the matched fighter's match").matchID == match.matchID)
        }
        for index in waiting { #expect(players[index].device.matchmaker.waitingRequests.sent == 1) }

        // A role game refuses a request without a role.
        let roleless = try await Self.player(server, "Roleless", game: Self.quest)
        let error = await #expect(throws: GKError.self) { try await roleless.matchmaker.findMatch(for: Self.request(4, 4)) }
        #expect(error?.code == .matchRequestInvalid)
        #expect(error?.message.contains("playerAttributes") == true)
        for index in waiting {
            players[index].device.matchmaker.cancel()
            await #expect(throws: GKError.self) { try await value(of: fighters[index], "a cancelled fighter's request") }
        }
        try await server.stop()
    }

    @Test func groupsAndHostedRequestsNeverMix() async throws {
        let server = try await Self.server()
        let devices = try await (0..<6).asyncMap { try await Self.player(server, "G\($0)") }
        var tasks: [Task<GKMatch, any Error>] = []
        // Alternate groups 7 and 9 so that every neighbour is from the other group: each request reaches the server
        // (its activity counts it) before the next is made.
        for (index, device) in devices.prefix(4).enumerated() {
            tasks.append(Self.find(device, Self.request(2, 2, group: index % 2 == 0 ? 7 : 9)))
            try await waitUntil("the server has request \(index + 1)") { try await devices[0].matchmaker.queryActivity() == index + 1 }
        }
        let matches = try await tasks.asyncMap { try await value(of: $0, "a match of groups 7 and 9") }
        #expect(matches[0].matchID == matches[2].matchID)
        #expect(matches[1].matchID == matches[3].matchID)
        #expect(matches[0].matchID != matches[1].matchID)
        #expect(try await devices[0].matchmaker.queryPlayerGroupActivity(7) == 2)
        #expect(try await devices[0].matchmaker.queryPlayerGroupActivity(8) == 0)
        #expect(try await devices[0].matchmaker.queryActivity() == 4)

        // A hosted request and a relayed one of the same group never meet.
        let hosted = Task { try await devices[4].matchmaker.findPlayersForHostedMatch(for: Self.request(2, 2)) }
        let relayed = Self.find(devices[5], Self.request(2, 2))
        try await Self.sent(devices[4], "the server has the hosted request")
        try await Self.sent(devices[5], "the server has the relayed request")
        #expect(try await isStillRunning(relayed, after: .milliseconds(1500), because: Self.unmatchedBecause))
        devices[4].matchmaker.cancel()
        devices[5].matchmaker.cancel()
        await #expect(throws: GKError.self) { try await value(of: hosted, "the cancelled hosted request") }
        await #expect(throws: GKError.self) { try await value(of: relayed, "the cancelled relayed request") }
        try await server.stop()
    }

    /// The seed caps peer-to-peer matches at 4: a relayed match is at most the game's `matchmaking.maxRelayedPlayers`
    /// (default 4, up to 16), and a request above it gets `matchRequestInvalid` saying the cap.
    @Test func relayedMatchSizeIsCappedByTheGamesManifest() async throws {
        let server = try await Self.server()
        let alice = try await Self.player(server, "Alice")
        let refused = await #expect(throws: GKError.self) { try await alice.matchmaker.findMatch(for: Self.request(2, 5)) }
        #expect(refused?.code == .matchRequestInvalid)
        #expect(refused?.message.contains("at most 4 players") == true)
        #expect(refused?.message.contains("maxRelayedPlayers") == true)

        let crowd = try await Self.player(server, "Carol", game: Self.crowd)
        let big = Self.find(crowd, Self.request(2, 16))
        try await Self.sent(crowd, "the server has the 16-player relayed request")
        crowd.matchmaker.cancel()
        let cancelled = await #expect(throws: GKError.self) { try await value(of: big, "the cancelled 16-player request") }
        #expect(cancelled?.code == .cancelled)
        try await server.stop()
    }

    @Test func badRequestsAreRefusedWithAClearError() async throws {
        let server = try await Self.server()
        let alice = try await Self.player(server, "Alice"), stranger = try await Self.player(server, "Stranger")
        for (min, max, says) in [(1, 2, "2 to 16"), (2, 17, "2 to 16"), (5, 4, "more than"), (0, 0, "2 to 16")] {
            let error = await #expect(throws: GKError.self) { try await alice.matchmaker.findMatch(for: Self.request(min, max)) }
            #expect(error?.code == .matchRequestInvalid)
            #expect(error?.message.contains(says) == true)
        }
        let selfInvite = await #expect(throws: GKError.self) {
            try await alice.matchmaker.findMatch(for: Self.request(2, 2, invite: [alice.localPlayer.playerID]))
        }
        #expect(selfInvite?.code == .invalidParameter)
        let unknown = await #expect(throws: GKError.self) { try await alice.matchmaker.findMatch(for: Self.request(2, 2, invite: ["p_nobody"])) }
        #expect(unknown?.code == .invalidPlayer)
        let notFriend = await #expect(throws: GKError.self) {
            try await alice.matchmaker.findMatch(for: Self.request(2, 2, invite: [stranger.localPlayer.playerID]))
        }
        #expect(notFriend?.code == .invalidPlayer)
        #expect(notFriend?.message.contains(stranger.localPlayer.playerID) == true)
        let tooMany = await #expect(throws: GKError.self) {
            try await alice.matchmaker.findMatch(for: Self.request(2, 2, invite: [stranger.localPlayer.playerID, "p_other"]))
        }
        #expect(tooMany?.code == .matchRequestInvalid)

        // Signed out: notAuthenticated before anything is sent.
        await alice.localPlayer.signOut()
        let signedOut = await #expect(throws: GKError.self) { try await alice.matchmaker.findMatch(for: Self.request(2, 2)) }
        #expect(signedOut?.code == .notAuthenticated)
        try await server.stop()
    }

    @Test func cancelLeavesTheQueueAtOnceAndAThousandCancelsLeaveNothingBehind() async throws {
        let server = try await Self.server()
        let alice = try await Self.player(server, "Alice"), bob = try await Self.player(server, "Bob")
        for round in 0..<1000 {
            let task = Self.find(alice, Self.request(2, 2))
            // Every other round cancels while the request is still on its way to the server. A device whose realtime
            // channel dropped on a loaded machine sends its request once the channel is back: hence the longer wait.
            try await waitUntil("round \(round)'s request got going", within: .seconds(30)) {
                let waiting = alice.matchmaker.waitingRequests
                return round % 2 == 0 ? waiting.sent == 1 : waiting.registered == 1
            }
            alice.matchmaker.cancel()
            let error = await #expect(throws: GKError.self) { try await value(of: task, "round \(round)'s cancelled request") }
            #expect(error?.code == .cancelled)
            alice.matchmaker.cancel()  // nothing waits: nothing happens
        }
        // Bob's request finds nobody left from Alice's thousand cancelled ones…
        let bobTask = Self.find(bob, Self.request(2, 2))
        try await Self.sent(bob, "the server has Bob's request")
        #expect(try await isStillRunning(bobTask, after: .milliseconds(1500), because: Self.unmatchedBecause))
        // …and the queue still works.
        let aliceTask = Self.find(alice, Self.request(2, 2))
        #expect(try await value(of: aliceTask, "Alice's match").matchID == (try await value(of: bobTask, "Bob's match")).matchID)
        try await server.stop()
    }

    @Test func aDeviceWhoseChannelDropsLeavesTheQueueAndIsNeverMatched() async throws {
        let server = try await Self.server()
        let gone = try await Self.player(server, "Gone")
        let bob = try await Self.player(server, "Bob"), carol = try await Self.player(server, "Carol")
        let goneTask = Self.find(gone, Self.request(2, 2))
        try await waitUntil("the request is waiting") { try await bob.matchmaker.queryActivity() == 1 }
        await gone.close()
        let error = await #expect(throws: GKError.self) { try await value(of: goneTask, "the request of the device that closed") }
        #expect(error?.code == .cancelled || error?.code == .communicationsFailure)

        let bobTask = Self.find(bob, Self.request(2, 2))
        try await Self.sent(bob, "the server has Bob's request")
        #expect(try await isStillRunning(bobTask, after: .milliseconds(1500), because: Self.unmatchedBecause))
        let carolMatch = try await value(of: Self.find(carol, Self.request(2, 2)), "Carol's match")
        #expect(try await allConnected(carolMatch) == [bob.localPlayer.playerID])
        #expect(try await allConnected(try await value(of: bobTask, "Bob's match")) == [carol.localPlayer.playerID])
        try await server.stop()
    }

    @Test(arguments: LiveServer.engines)
    func anInviteeWhoSignsInLaterStillGetsTheInvitationAndJoins(engine: String) async throws {
        let server = try await Self.server(engine)
        let alice = try await Self.player(server, "Alice")
        let bobFirstDevice = Devices.make(server, bundleID: Self.arena)
        let bobAccount = "bob-\(UUID().uuidString.prefix(8).lowercased())"
        try await bobFirstDevice.localPlayer.authenticate(.signUp(account: bobAccount, password: "password-Bob", alias: "Bob", underage: false))
        try await Self.befriend(alice, bobFirstDevice)
        let bobID = bobFirstDevice.localPlayer.playerID
        await bobFirstDevice.localPlayer.signOut()

        let responses = ResponseLog()
        let request = Self.request(2, 2, invite: [bobID])
        request.inviteMessage = "join me"
        request.inviteeResponseHandler = { player, state in responses.record(player, state) }
        let aliceTask = Self.find(alice, request)
        try await Self.sent(alice, "the server has Alice's request (and so the invitation)")

        // Bob starts the game later, on another device: the invitation is waiting for his answer. The seed's
        // inviteHandler is called with an invitation the player accepted, so an unanswered one is only received
        // (an event and `receivedInvites`, for the game to show), never handed to the handler.
        let bob = Devices.make(server, bundleID: Self.arena)
        let invites = InviteInbox()
        try await bob.localPlayer.authenticate(.signIn(account: bobAccount, password: "password-Bob"))
        try await waitUntil("Bob's device received the invitation") { bob.matchmaker.receivedInvites.count == 1 }
        let received = try #require(bob.matchmaker.receivedInvites.first)
        #expect(!received.isAccepted)
        #expect(bob.matchmaker.heldForInviteHandler == 0)
        // Bob accepts before the game set its handler: the accepted invitation is kept until it is set.
        bob.matchmaker.accept(received)
        #expect(bob.matchmaker.receivedInvites.isEmpty)
        #expect(bob.matchmaker.heldForInviteHandler == 1)
        invites.watch(bob)
        let invite = try await invites.next()
        #expect(invite.isAccepted && invite.invitationID == received.invitationID)
        #expect(invite.inviter == alice.localPlayer.playerID)
        #expect(invite.inviterAlias == "Alice")
        #expect(invite.message == "join me")
        #expect(!invite.isHosted)
        let bobMatch = try await bob.matchmaker.match(for: invite)
        let aliceMatch = try await value(of: aliceTask, "Alice's match")
        #expect(bobMatch.matchID == aliceMatch.matchID)
        #expect(try await allConnected(aliceMatch) == [bobID])
        try await waitUntil("the inviter saw accepted then connected") { responses.states(of: bobID) == [.accepted, .connected] }

        // The invitation was answered: accepting it again is refused.
        let again = await #expect(throws: GKError.self) { try await bob.matchmaker.match(for: invite) }
        #expect(again?.code == .invalidParameter)
        try await server.stop()
    }

    @Test func aDeclinedSeatIsFilledByAutoMatchAndAnExpiredInvitationCannotBeAnswered() async throws {
        let server = try await Self.server()
        let alice = try await Self.player(server, "Alice"), bob = try await Self.player(server, "Bob")
        let carol = try await Self.player(server, "Carol"), dave = try await Self.player(server, "Dave")
        try await Self.befriend(alice, bob)
        try await Self.befriend(alice, carol)
        let bobInvites = InviteInbox(), carolInvites = InviteInbox()
        bobInvites.watch(bob)
        carolInvites.watch(carol)

        let responses = ResponseLog()
        let request = Self.request(3, 3, invite: [bob.localPlayer.playerID, carol.localPlayer.playerID])
        request.inviteeResponseHandler = { player, state in responses.record(player, state) }
        let aliceTask = Self.find(alice, request)

        // Bob declines; the inviter sees it; the seat goes to auto-match.
        let bobInvite = try await bobInvites.next()
        try await bobInvite.decline()
        try await waitUntil("the inviter saw the decline") { responses.states(of: bob.localPlayer.playerID) == [.declined] }
        let declinedAgain = await #expect(throws: GKError.self) { try await bobInvite.decline() }
        #expect(declinedAgain?.code == .invalidParameter)

        // Carol's invitation expires (the server's clock moves past its 30 s): she can no longer join.
        let carolInvite = try await carolInvites.next()
        try await LeaderboardsLiveTests.advanceClock(server, hours: 31.0 / 3600)
        try await waitUntil("the inviter saw the expiry") { responses.states(of: carol.localPlayer.playerID) == [.declined] }
        let expired = await #expect(throws: GKError.self) { try await carol.matchmaker.match(for: carolInvite) }
        #expect(expired?.code == .invalidParameter)

        // Two auto-matched players fill the seats.
        let daveTask = Self.find(dave, Self.request(3, 3))
        let bobTask = Self.find(bob, Self.request(2, 3))
        let aliceMatch = try await value(of: aliceTask, "Alice's match")
        #expect(Set(try await allConnected(aliceMatch)) == [dave.localPlayer.playerID, bob.localPlayer.playerID])
        #expect(try await value(of: daveTask, "Dave's match").matchID == aliceMatch.matchID)
        #expect(try await value(of: bobTask, "Bob's match").matchID == aliceMatch.matchID)
        try await server.stop()
    }

    @Test func aHostedMatchOfSixteenGivesEveryoneTheSameSixteenPlayers() async throws {
        let server = try await Self.server()
        let devices = try await (0..<16).asyncMap { try await Self.player(server, "Host\($0)") }
        let tasks = devices.map { device in Task { try await device.matchmaker.findPlayersForHostedMatch(for: Self.request(16, 16)) } }
        let lists = try await tasks.asyncMap { try await value(of: $0, "a hosted player list") }
        let everyone = Set(devices.map(\.localPlayer.playerID))
        for list in lists { #expect(Set(list) == everyone && list.count == 16) }
        #expect(Set(lists.map { $0 }).count == 1)
        try await server.stop()
    }

    @Test func theMatchmakingScreenModelShowsInviteesAndHandsOverTheMatch() async throws {
        let server = try await Self.server()
        let alice = try await Self.player(server, "Alice"), bob = try await Self.player(server, "Bob")
        try await Self.befriend(alice, bob)
        let bobInvites = InviteInbox()
        bobInvites.watch(bob)

        let screen = GKMatchmakerViewController(matchRequest: Self.request(2, 2, invite: [bob.localPlayer.playerID]), in: alice)
        let outcome = ScreenOutcome()
        screen.matchmakerDelegate = outcome
        #expect(screen.lobby.slots == [.localPlayer, .invitee(playerID: bob.localPlayer.playerID, state: .pending)])
        screen.present()
        let invite = try await bobInvites.next()
        let bobScreen = GKMatchmakerViewController(invite: invite)
        let bobOutcome = ScreenOutcome()
        bobScreen.matchmakerDelegate = bobOutcome
        bobScreen.present()
        let match = try await outcome.match()
        #expect(try await allConnected(match) == [bob.localPlayer.playerID])
        #expect(try await bobOutcome.match().matchID == match.matchID)
        #expect(screen.lobby.phase == .found)
        #expect(screen.lobby.slots.contains(.invitee(playerID: bob.localPlayer.playerID, state: .connected)))

        // Cancelling a screen tells its delegate and leaves the queue.
        let lonely = GKMatchmakerViewController(matchRequest: Self.request(2, 2), in: alice)
        let lonelyOutcome = ScreenOutcome()
        lonely.matchmakerDelegate = lonelyOutcome
        lonely.present()
        try await waitUntil("the screen's request waits") { try await alice.matchmaker.queryActivity() > 0 && lonely.lobby.phase == .searching }
        lonely.cancel()
        try await waitUntil("the delegate heard the cancel") { lonelyOutcome.wasCancelled }
        #expect(lonely.lobby.phase == .cancelled)

        // Hosted: the delegate hears didFindPlayers once every player is ready on the game's own server.
        let hostedA = GKMatchmakerViewController(matchRequest: Self.request(2, 2), in: alice)
        let hostedB = GKMatchmakerViewController(matchRequest: Self.request(2, 2), in: bob)
        let outcomeA = ScreenOutcome(), outcomeB = ScreenOutcome()
        for (screen, outcome) in [(hostedA, outcomeA), (hostedB, outcomeB)] {
            screen.hosted = true
            screen.matchmakerDelegate = outcome
            screen.present()
        }
        try await waitUntil("both screens wait for hosted players") {
            hostedA.lobby.phase == .waitingForHostedPlayers && hostedB.lobby.phase == .waitingForHostedPlayers
        }
        #expect(outcomeA.players == nil)
        // The local player is ready only when the game says so (the seed: each device calls setHostedPlayerReady for
        // every player that connected to its server), not when the match is made.
        alice.matchmaker.setHostedPlayerReady(bob.localPlayer.playerID)
        bob.matchmaker.setHostedPlayerReady(alice.localPlayer.playerID)
        #expect(hostedA.lobby.readyPlayers == [bob.localPlayer.playerID] && hostedA.lobby.phase == .waitingForHostedPlayers)
        #expect(outcomeA.players == nil && outcomeB.players == nil)
        alice.matchmaker.setHostedPlayerReady(alice.localPlayer.playerID)
        bob.matchmaker.setHostedPlayerReady(bob.localPlayer.playerID)
        try await waitUntil("both delegates got the players") { outcomeA.players != nil && outcomeB.players != nil }
        #expect(Set(outcomeA.players ?? []) == [alice.localPlayer.playerID, bob.localPlayer.playerID])
        try await server.stop()
    }

    @Test func theServerRefusesRequestsItCouldNotKeepAndAnswersOnlyTheInvitee() async throws {
        let server = try await Self.server()
        let account = "dana-\(UUID().uuidString.prefix(8).lowercased())"
        let dana = Devices.make(server, bundleID: Self.arena)
        try await dana.localPlayer.authenticate(.signUp(account: account, password: "password-Dana", alias: "Dana", underage: false))
        let token = try await Self.signIn(server, account: account, password: "password-Dana")

        // A session without an open realtime channel could not be told of its match: refused, nothing queued.
        let offline = try await Self.send(
            server, "POST", "/v1/matchmaking/requests", token: token,
            body: """
                {"requestID": "r1", "minPlayers": 2, "maxPlayers": 2, "playerGroup": 0, "playerAttributes": 0, "hosted": false, "playersToInvite": []}
                """)
        #expect(offline.status == 409 && offline.code == "matchmaking.offline")
        // The server checks sizes itself (the SDK checks first, so only a raw request reaches this rule).
        for (min, max) in [(1, 2), (2, 17), (3, 2)] {
            let invalid = try await Self.send(
                server, "POST", "/v1/matchmaking/requests", token: token,
                body: """
                    {"requestID": "r0", "minPlayers": \(min), "maxPlayers": \(max), "playerGroup": 0, "playerAttributes": 0, "hosted": false, "playersToInvite": []}
                    """)
            #expect(invalid.status == 400 && invalid.code == "matchmaking.invalid_request")
        }
        // Cancelling what does not wait is a clear error, every time.
        for _ in 0..<2 {
            let cancel = try await Self.send(server, "DELETE", "/v1/matchmaking/requests/r1", token: token)
            #expect(cancel.status == 404 && cancel.code == "matchmaking.no_such_request")
        }
        #expect(try await Self.send(server, "GET", "/v1/matchmaking/requests/r1", token: token).status == 200)
        let badID = try await Self.send(server, "GET", "/v1/matchmaking/requests/not%20an%20id", token: token)
        #expect(badID.status == 400)

        // Someone else's invitation cannot be answered.
        let alice = try await Self.player(server, "Alice"), bob = try await Self.player(server, "Bob")
        try await Self.befriend(alice, bob)
        let bobInvites = InviteInbox()
        bobInvites.watch(bob)
        let aliceTask = Self.find(alice, Self.request(2, 2, invite: [bob.localPlayer.playerID]))
        let invite = try await bobInvites.next()
        for verb in ["accept", "decline"] {
            let answer = try await Self.send(
                server, "POST", "/v1/invitations/\(invite.invitationID)/\(verb)", token: token,
                body: verb == "accept" ? #"{"requestID": "r2"}"# : nil)
            #expect(answer.status == 404 && answer.code == "matchmaking.no_such_invitation")
        }
        // The inviter leaving cancels the invitation: Bob can no longer join.
        alice.matchmaker.cancel()
        await #expect(throws: GKError.self) { try await value(of: aliceTask, "Alice's cancelled request") }
        let late = await #expect(throws: GKError.self) { try await bob.matchmaker.match(for: invite) }
        #expect(late?.serverCode == "matchmaking.invitation_closed")
        try await server.stop()
    }

    @Test func playersAddedToARunningMatchAreAnnouncedToItsMembers() async throws {
        let server = try await Self.server()
        let alice = try await Self.player(server, "Alice"), bob = try await Self.player(server, "Bob")
        let carol = try await Self.player(server, "Carol")
        let aliceTask = Self.find(alice, Self.request(2, 2)), bobTask = Self.find(bob, Self.request(2, 2))
        let aliceMatch = try await value(of: aliceTask, "Alice's match"), bobMatch = try await value(of: bobTask, "Bob's match")
        #expect(aliceMatch.matchID == bobMatch.matchID)

        // Carol already waits when Alice asks for a third player: her request is pulled into Alice's match.
        _ = try await allConnected(bobMatch)
        let bobEvents = bobMatch.events
        let carolTask = Self.find(carol, Self.request(3, 3))
        try await waitUntil("Carol's request waits") { carol.matchmaker.waitingRequests.sent == 1 }
        try await alice.matchmaker.addPlayers(to: aliceMatch, matchRequest: Self.request(3, 3))
        let carolMatch = try await value(of: carolTask, "Carol's match")
        #expect(carolMatch.matchID == aliceMatch.matchID)
        #expect(Set(try await allConnected(carolMatch)) == [alice.localPlayer.playerID, bob.localPlayer.playerID])
        #expect(Set(try await allConnected(aliceMatch)) == [bob.localPlayer.playerID, carol.localPlayer.playerID])
        let joined = try await nextEvent(bobEvents) { event -> String? in
            if case .playerStateChanged(let player, .connected) = event { player } else { nil }
        }
        #expect(joined == carol.localPlayer.playerID)
        try await server.stop()
    }

    @Test func playWithFriendsFromTheGameCenterAppReachesTheGameAsPlayerIDs() async throws {
        let server = try await Self.server()
        let account = "alice-\(UUID().uuidString.prefix(8).lowercased())"
        let alice = Devices.make(server, bundleID: Self.arena)
        try await alice.localPlayer.authenticate(.signUp(account: account, password: "password-Alice", alias: "Alice", underage: false))
        let bob = try await Self.player(server, "Bob")
        try await Self.befriend(alice, bob)
        let inbox = InviteInbox()
        inbox.watch(alice)

        // The Game Center app (here: plain HTTP with the player's own session) picks Bob.
        let token = try await Self.signIn(server, account: account, password: "password-Alice")
        let status = try await Self.post(
            server, "/v1/matchmaking/play-with-friends", token: token,
            body: #"{"playerIDs": ["\#(bob.localPlayer.playerID)"]}"#)
        #expect(status == 204)
        let players = try await inbox.nextPlayers()
        #expect(players == [bob.localPlayer.playerID])
        // Strangers cannot be chosen.
        let stranger = try await Self.player(server, "Stranger")
        #expect(
            try await Self.post(
                server, "/v1/matchmaking/play-with-friends", token: token,
                body: #"{"playerIDs": ["\#(stranger.localPlayer.playerID)"]}"#) == 403)
        try await server.stop()
    }

    static func signIn(_ server: LiveServer, account: String, password: String) async throws -> String {
        var request = URLRequest(url: server.url.appendingPathComponent("v1/sessions"))
        request.httpMethod = "POST"
        request.setValue(arena, forHTTPHeaderField: "X-GameCenter-Bundle-ID")
        request.setValue("sandbox", forHTTPHeaderField: "X-GameCenter-Environment")
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.httpBody = Data(#"{"account": "\#(account)", "password": "\#(password)"}"#.utf8)
        let (data, _) = try await URLSession.shared.data(for: request)
        let object = try JSONSerialization.jsonObject(with: data) as? [String: Any]
        return try #require(object?["token"] as? String)
    }

    /// Sends a raw request with a session token; returns the HTTP status and the error's `code` (if any).
    static func send(_ server: LiveServer, _ method: String, _ path: String, token: String, body: String? = nil) async throws -> (status: Int, code: String?) {
        var request = URLRequest(url: URL(string: server.url.absoluteString + path)!)
        request.httpMethod = method
        request.setValue(arena, forHTTPHeaderField: "X-GameCenter-Bundle-ID")
        request.setValue("sandbox", forHTTPHeaderField: "X-GameCenter-Environment")
        request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization")
        if let body {
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
            request.httpBody = Data(body.utf8)
        }
        let (data, response) = try await URLSession.shared.data(for: request)
        let code = (try? JSONSerialization.jsonObject(with: data) as? [String: Any])?["code"] as? String
        return ((response as? HTTPURLResponse)?.statusCode ?? 0, code)
    }

    static func post(_ server: LiveServer, _ path: String, token: String, body: String) async throws -> Int {
        try await send(server, "POST", path, token: token, body: body).status
    }
}

/// Invitations and friend lists handed to an `inviteHandler`, and (``watch(_:)``) invitations received unanswered.
final class InviteInbox: @unchecked Sendable {
    private let lock = NSLock()
    private var invites: [GKInvite] = []
    private var playerLists: [[String]] = []

    /// Records what `device`'s invite handler gets (accepted invitations, friend lists) and the invitations it
    /// receives unanswered (``GKGameCenterEvent/invitationReceived(_:)``) from now on.
    func watch(_ device: GKGameCenter) {
        let events = device.events
        Task { [self] in
            for await event in events {
                if case .invitationReceived(let invite) = event { record(invite, nil) }
            }
        }
        device.matchmaker.inviteHandler = { [self] invite, players in record(invite, players) }
    }

    func record(_ invite: GKInvite?, _ players: [String]?) {
        lock.withLock {
            if let invite { invites.append(invite) }
            if let players { playerLists.append(players) }
        }
    }

    func next() async throws -> GKInvite {
        try await waitUntil("an invitation arrives") { lock.withLock { !invites.isEmpty } }
        return lock.withLock { invites.removeFirst() }
    }

    func nextPlayers() async throws -> [String] {
        try await waitUntil("a friend list arrives") { lock.withLock { !playerLists.isEmpty } }
        return lock.withLock { playerLists.removeFirst() }
    }

    /// Invitations and friend lists that arrived and were not taken yet.
    var count: Int { lock.withLock { invites.count + playerLists.count } }
}

/// Invitee answers the inviting device heard.
final class ResponseLog: @unchecked Sendable {
    private let lock = NSLock()
    private var log: [(String, GKInviteeState)] = []

    func record(_ player: String, _ state: GKInviteeState) { lock.withLock { log.append((player, state)) } }
    func states(of player: String) -> [GKInviteeState] { lock.withLock { log.filter { $0.0 == player }.map(\.1) } }
}

/// What a matchmaking screen's delegate heard.
final class ScreenOutcome: GKMatchmakerViewControllerDelegate, @unchecked Sendable {
    private let lock = NSLock()
    private var found: GKMatch?
    private var foundPlayers: [String]?
    private var cancelled = false
    private var error: (any Error)?

    func matchmakerViewControllerWasCancelled(_ viewController: GKMatchmakerViewController) { lock.withLock { cancelled = true } }
    func matchmakerViewController(_ viewController: GKMatchmakerViewController, didFailWithError error: any Error) {
        lock.withLock { self.error = error }
    }
    func matchmakerViewController(_ viewController: GKMatchmakerViewController, didFind match: GKMatch) { lock.withLock { found = match } }
    func matchmakerViewController(_ viewController: GKMatchmakerViewController, didFindPlayers playerIDs: [String]) {
        lock.withLock { foundPlayers = playerIDs }
    }

    var wasCancelled: Bool { lock.withLock { cancelled } }
    var players: [String]? { lock.withLock { foundPlayers } }

    func match() async throws -> GKMatch {
        try await waitUntil("the delegate got a match") { lock.withLock { found != nil || error != nil } }
        if let error = lock.withLock({ self.error }) { throw error }
        return try #require(lock.withLock { found })
    }
}

extension Sequence where Element: Sendable {
    /// Maps in order, awaiting each element.
    func asyncMap<T>(_ transform: (Element) async throws -> T) async rethrows -> [T] {
        var results: [T] = []
        for element in self { results.append(try await transform(element)) }
        return results
    }
}
