import Testing
@testable import GameCenterServer
import NetworkFaultProxy

/// Named scenarios from the spec and the Game Kit guide.
@Suite struct RoleScenarioTests {
    @Test func fourRolesFormOneMatchOfDistinctRolesEvenAfterThreeFighters() {
        var queue = MatchmakingQueue()
        var tickets = TicketFactory()
        let fighters = (0..<3).map { _ in tickets.make(min: 4, max: 4, role: Role.fighter) }
        let lobbies = fighters.enumerated().map { queue.enqueue($1, now: Int64($0)).lobby! }
        #expect(Set(lobbies).count == 3, "each Fighter waits in its own lobby")
        var started: [StartedMatch] = []
        for (offset, role) in [Role.cleric, Role.wizard, Role.thief].enumerated() {
            started += queue.enqueue(tickets.make(min: 4, max: 4, role: role), now: 10 + Int64(offset)).started
        }
        #expect(started.count == 1)
        #expect(started.first?.lobby == lobbies[0])
        #expect(started.first?.tickets == [fighters[0].id, TicketID(4), TicketID(5), TicketID(6)])
        #expect(started.first?.mask == 0xFFFF_FFFF)
        #expect(started.first?.reason == .full, "full is checked before the role mask")
        #expect(queue.lobby(containing: fighters[1].id)?.members.count == 1)
        #expect(queue.lobby(containing: fighters[2].id)?.members.count == 1)
        #expect(queue.waitingCount == 2)
    }

    @Test func randomRoleArrivalsNeverPutTwoOfARoleInAMatch() {
        var rng = SplitMix64(seed: 42)
        var queue = MatchmakingQueue()
        var tickets = TicketFactory()
        var roleOf: [TicketID: UInt32] = [:]
        var matches: [StartedMatch] = []
        for now in 0..<2_000 {
            let ticket = tickets.make(min: 4, max: 4, role: [Role.fighter, Role.cleric, Role.wizard, Role.thief].randomElement(using: &rng)!)
            roleOf[ticket.id] = ticket.playerAttributes
            matches += queue.enqueue(ticket, now: Int64(now)).started
        }
        #expect(matches.count > 400)
        for match in matches {
            #expect(Set(match.tickets.map { roleOf[$0]! }).count == 4)
        }
    }

    @Test func aRoleTicketNeverTakesTheLastSeatWithoutCompletingTheMask() {
        var queue = MatchmakingQueue()
        var tickets = TicketFactory()
        let lobby = queue.enqueue(tickets.make(min: 2, max: 3, role: Role.fighter), now: 0).lobby
        #expect(queue.enqueue(tickets.make(min: 2, max: 3, role: Role.cleric), now: 1).lobby == lobby)
        // A Wizard would fill the third and last seat with the Thief role still open: it waits alone.
        #expect(queue.enqueue(tickets.make(min: 2, max: 3, role: Role.wizard), now: 2).lobby != lobby)
        #expect(queue.enqueue(tickets.make(min: 2, max: 3, role: Role.wizard | Role.thief), now: 3).started.first?.lobby == lobby)
    }

    @Test func aLeavingMemberShrinksTheLobbyAndFreesItsRole() throws {
        var queue = MatchmakingQueue()
        var tickets = TicketFactory()
        let fighter = tickets.make(min: 4, max: 4, role: Role.fighter)
        let lobby = queue.enqueue(fighter, now: 0).lobby!
        let cleric = tickets.make(min: 4, max: 4, role: Role.cleric)
        _ = queue.enqueue(cleric, now: 1)
        _ = try queue.remove(ticket: cleric.id, now: 2)
        #expect(queue.lobby(lobby)?.mask == Role.fighter)
        #expect(queue.lobby(lobby)?.members.count == 1)
        var started: [StartedMatch] = []
        for role in [Role.cleric, Role.wizard, Role.thief] {
            started += queue.enqueue(tickets.make(min: 4, max: 4, role: role), now: 3).started
        }
        #expect(started.map(\.lobby) == [lobby])
    }
}

@Suite struct SizeAndKeyScenarioTests {
    @Test func groupsNeverMix() {
        var queue = MatchmakingQueue()
        var tickets = TicketFactory()
        let first = queue.enqueue(tickets.make(min: 2, max: 2, group: 1), now: 0).lobby
        let second = queue.enqueue(tickets.make(min: 2, max: 2, group: 2), now: 1).lobby
        let zero = queue.enqueue(tickets.make(min: 2, max: 2, group: 0), now: 2).lobby
        #expect(Set([first, second, zero]).count == 3)
        #expect(queue.enqueue(tickets.make(min: 2, max: 2, group: 2), now: 3).started.map(\.lobby) == [second!])
    }

    @Test func hostedNeverMixesWithNonHosted() {
        var queue = MatchmakingQueue()
        var tickets = TicketFactory()
        let peer = queue.enqueue(tickets.make(min: 2, max: 2, hosted: false), now: 0).lobby
        #expect(queue.enqueue(tickets.make(min: 2, max: 2, hosted: true), now: 1).started.isEmpty)
        #expect(queue.lobbyCount == 2)
        let started = queue.enqueue(tickets.make(min: 2, max: 2, hosted: false), now: 2).started
        #expect(started.map(\.lobby) == [peer!])
        #expect(started.first?.hosted == false)
    }

    @Test func twoOfATwoToFourWaitTheFillTimeThenStart() {
        var queue = MatchmakingQueue()
        var tickets = TicketFactory()
        _ = queue.enqueue(tickets.make(min: 2, max: 4, fillTime: 5_000), now: 0)
        #expect(queue.nextDeadline == nil)
        #expect(queue.enqueue(tickets.make(min: 2, max: 4, fillTime: 5_000), now: 1_000).started.isEmpty)
        #expect(queue.nextDeadline == 6_000)
        #expect(queue.tick(now: 5_999).started.isEmpty)
        let started = queue.tick(now: 6_000).started
        #expect(started.map(\.tickets) == [[TicketID(1), TicketID(2)]])
        #expect(started.first?.reason == .fillDeadline)
        #expect(queue.nextDeadline == nil)
    }

    @Test func aLaterJoinDoesNotPushTheDeadlineBack() {
        var queue = MatchmakingQueue()
        var tickets = TicketFactory()
        _ = queue.enqueue(tickets.make(min: 2, max: 4, fillTime: 5_000), now: 0)
        _ = queue.enqueue(tickets.make(min: 2, max: 4, fillTime: 5_000), now: 0)
        _ = queue.enqueue(tickets.make(min: 2, max: 4, fillTime: 5_000), now: 3_000)
        #expect(queue.nextDeadline == 5_000)
        #expect(queue.tick(now: 5_000).started.first?.members.count == 3)
    }

    @Test func fourOfATwoToFourStartAtOnce() {
        var queue = MatchmakingQueue()
        var tickets = TicketFactory()
        var started: [StartedMatch] = []
        for now in 0..<4 { started += queue.enqueue(tickets.make(min: 2, max: 4), now: Int64(now)).started }
        #expect(started.count == 1)
        #expect(started.first?.members.count == 4)
        #expect(started.first?.reason == .full)
        #expect(queue.waitingCount == 0)
        #expect(queue.nextDeadline == nil)
    }

    @Test func twoToTwoAndThreeToFourNeverMatch() {
        var queue = MatchmakingQueue()
        var tickets = TicketFactory()
        let pair = queue.enqueue(tickets.make(min: 2, max: 2), now: 0).lobby
        let trio = queue.enqueue(tickets.make(min: 3, max: 4), now: 1).lobby
        #expect(pair != trio)
        #expect(queue.tick(now: 1_000_000).started.isEmpty)
    }

    @Test func dropsBelowTheMinimumClearTheDeadline() throws {
        var queue = MatchmakingQueue()
        var tickets = TicketFactory()
        let first = tickets.make(min: 2, max: 4, fillTime: 5_000)
        _ = queue.enqueue(first, now: 0)
        _ = queue.enqueue(tickets.make(min: 2, max: 4, fillTime: 5_000), now: 0)
        #expect(queue.nextDeadline == 5_000)
        _ = try queue.remove(ticket: first.id, now: 1_000)
        #expect(queue.nextDeadline == nil)
        _ = queue.enqueue(tickets.make(min: 2, max: 4, fillTime: 5_000), now: 2_000)
        #expect(queue.nextDeadline == 7_000)
    }
}

@Suite struct FairOrderScenarioTests {
    @Test func theOldestCompatibleLobbyIsChosen() {
        var queue = MatchmakingQueue()
        var tickets = TicketFactory()
        let trio = queue.enqueue(tickets.make(min: 3, max: 3), now: 0).lobby
        let pair = queue.enqueue(tickets.make(min: 2, max: 2), now: 1).lobby
        // A 2..3 fits both; the 3..3 lobby has waited longer.
        #expect(queue.enqueue(tickets.make(min: 2, max: 3), now: 2).lobby == trio)
        #expect(queue.lobby(pair!)?.members.count == 1)
    }

    @Test func equalAgesAreServedByLobbyID() {
        var queue = MatchmakingQueue()
        var tickets = TicketFactory()
        let pair = queue.enqueue(tickets.make(min: 2, max: 2), now: 0).lobby
        let trio = queue.enqueue(tickets.make(min: 3, max: 3), now: 0).lobby
        #expect(pair! < trio!)
        #expect(queue.enqueue(tickets.make(min: 2, max: 3), now: 1).started.first?.lobby == pair)
    }

    @Test func aLobbyAgesFromItsOldestRemainingMember() throws {
        var queue = MatchmakingQueue()
        var tickets = TicketFactory()
        let oldest = tickets.make(min: 4, max: 4)
        let first = queue.enqueue(oldest, now: 0).lobby
        _ = queue.enqueue(tickets.make(min: 4, max: 4), now: 50)
        let second = queue.enqueue(tickets.make(min: 3, max: 3), now: 10).lobby
        _ = try queue.remove(ticket: oldest.id, now: 60)
        #expect(queue.lobby(first!)?.age == 50)
        // Both fit a 3..4 ticket; the 3..3 lobby (age 10) is now older than the 4..4 one (age 50).
        #expect(queue.enqueue(tickets.make(min: 3, max: 4), now: 70).lobby == second)
    }
}

@Suite struct CleanupScenarioTests {
    @Test func thousandCancelledRequestsLeaveNothingBehind() throws {
        var rng = SplitMix64(seed: 7)
        var queue = MatchmakingQueue()
        var tickets = TicketFactory()
        var waiting: [TicketID] = []
        for now in 0..<1_000 {
            let (min, max) = RandomDriver.ranges.randomElement(using: &rng)!
            let role: UInt32 = Bool.random(using: &rng) ? 0 : Role.fighter
            let ticket = tickets.make(min: min, max: max, role: role, group: UInt32.random(in: 0..<5, using: &rng))
            let outcome = queue.enqueue(ticket, now: Int64(now))
            waiting.append(ticket.id)
            for match in outcome.started { waiting.removeAll { match.tickets.contains($0) } }
        }
        #expect(queue.nextDeadline != nil)
        for ticket in waiting.shuffled(using: &rng) { _ = try queue.remove(ticket: ticket, now: 2_000) }
        #expect(queue.waitingCount == 0)
        #expect(queue.lobbyCount == 0)
        #expect(queue.nextDeadline == nil)
        #expect(queue.indexEntryCount == 0)
    }
}

@Suite struct InvitationScenarioTests {
    @Test func pendingInvitationsBlockTheStart() throws {
        var queue = MatchmakingQueue()
        var tickets = TicketFactory()
        let lobby = queue.openInvitationLobby(
            creator: tickets.make(min: 2, max: 2), invited: ["ann"], baseMembers: [], openToAutoMatch: false, now: 0
        ).lobby!
        #expect(queue.tick(now: 1_000_000).started.isEmpty)
        let started = try queue.answer(lobby: lobby, player: "ann", accepted: true, now: 10).started
        #expect(started.first?.members == [.ticket(TicketID(1), playerID: "p1"), .invited(playerID: "ann")])
    }

    @Test func allDeclinedAndClosedFailsWithTooFewPlayers() throws {
        var queue = MatchmakingQueue()
        var tickets = TicketFactory()
        let lobby = queue.openInvitationLobby(
            creator: tickets.make(min: 3, max: 4), invited: ["ann", "bob"], baseMembers: [], openToAutoMatch: false, now: 0
        ).lobby!
        #expect(try queue.answer(lobby: lobby, player: "ann", accepted: false, now: 1).failed.isEmpty)
        let failed = try queue.answer(lobby: lobby, player: "bob", accepted: false, now: 2).failed
        #expect(failed.map(\.reason) == [.tooFewPlayers])
        #expect(queue.lobbyCount == 0)
    }

    @Test func badAnswersAreTypedErrors() throws {
        var queue = MatchmakingQueue()
        var tickets = TicketFactory()
        let lobby = queue.openInvitationLobby(
            creator: tickets.make(min: 2, max: 4), invited: ["ann", "bob"], baseMembers: [], openToAutoMatch: false, now: 0
        ).lobby!
        _ = try queue.answer(lobby: lobby, player: "ann", accepted: true, now: 1)
        #expect(throws: MatchmakingError.alreadyAnswered(playerID: "ann")) { try queue.answer(lobby: lobby, player: "ann", accepted: true, now: 2) }
        #expect(throws: MatchmakingError.notInvited(playerID: "eve")) { try queue.answer(lobby: lobby, player: "eve", accepted: true, now: 2) }
        #expect(throws: MatchmakingError.unknownLobby(LobbyID(99))) { try queue.answer(lobby: LobbyID(99), player: "bob", accepted: true, now: 2) }
        #expect(throws: MatchmakingError.unknownTicket(TicketID(99))) { try queue.remove(ticket: TicketID(99), now: 2) }
        #expect(queue.lobby(lobby)?.pendingInvitations == ["bob"])
    }

    @Test func openSlotsAreFilledByAutoMatch() throws {
        var queue = MatchmakingQueue()
        var tickets = TicketFactory()
        let lobby = queue.openInvitationLobby(
            creator: tickets.make(min: 2, max: 4), invited: ["ann", "bob"], baseMembers: [], openToAutoMatch: true, now: 0
        ).lobby!
        #expect(queue.enqueue(tickets.make(min: 2, max: 4), now: 1).lobby == lobby)
        // All four seats are taken (two by pending invitations): the next ticket opens its own lobby.
        #expect(queue.enqueue(tickets.make(min: 2, max: 4), now: 2).lobby != lobby)
        _ = try queue.answer(lobby: lobby, player: "ann", accepted: true, now: 3)
        _ = try queue.answer(lobby: lobby, player: "bob", accepted: false, now: 4)
        let deadline = queue.lobby(lobby)?.fillDeadline
        #expect(deadline == 5_004)
        let started = queue.enqueue(tickets.make(min: 2, max: 4), now: 5).started
        #expect(started.first?.lobby == lobby)
        #expect(started.first?.members.map(\.playerID) == ["p1", "p2", "ann", "p4"])
    }

    @Test func creatorCancelDissolvesAndRequeuesTheOthers() throws {
        var queue = MatchmakingQueue()
        var tickets = TicketFactory()
        let creator = tickets.make(min: 2, max: 4)
        let lobby = queue.openInvitationLobby(
            creator: creator, invited: ["ann", "bob"], baseMembers: [], openToAutoMatch: true, now: 5
        ).lobby!
        _ = try queue.answer(lobby: lobby, player: "ann", accepted: true, now: 6)
        let second = tickets.make(min: 2, max: 4)
        #expect(queue.enqueue(second, now: 8).lobby == lobby)
        // Every seat of the invitation lobby is taken: a 4..4 opens its own, younger lobby.
        let younger = queue.enqueue(tickets.make(min: 4, max: 4), now: 9).lobby!
        #expect(younger != lobby)
        let outcome = try queue.remove(ticket: creator.id, now: 10)
        #expect(
            outcome.dissolved == [
                DissolvedLobby(lobby: lobby, cancelledInvitations: ["bob"], releasedInvitees: ["ann"], requeued: [second.id])
            ])
        #expect(outcome.placements.map(\.lobby) == [younger])
        #expect(queue.lobby(younger)?.age == 8, "re-queued tickets keep their arrival")
        #expect(queue.lobby(lobby) == nil)
    }

    @Test func addPlayersBaseMembersCountAndSkipRoles() throws {
        var queue = MatchmakingQueue()
        var tickets = TicketFactory()
        let lobby = queue.openInvitationLobby(
            creator: tickets.make(min: 4, max: 4, role: Role.fighter), invited: [], baseMembers: ["host", "guest"],
            openToAutoMatch: true, now: 0
        ).lobby!
        #expect(queue.lobby(lobby)?.mask == Role.fighter)
        // Two of four seats are base members: only a ticket that completes the mask may take the last seat.
        #expect(queue.enqueue(tickets.make(min: 4, max: 4, role: Role.cleric), now: 1).lobby != lobby)
        let started = queue.enqueue(tickets.make(min: 4, max: 4, role: Role.cleric | Role.wizard | Role.thief), now: 2).started
        #expect(started.first?.members.map(\.playerID) == ["p1", "host", "guest", "p3"])
        #expect(started.first?.members[1] == .base(playerID: "host"))
    }

    @Test func anInviteeLeavingAClosedLobbyBelowItsMinimumFailsIt() throws {
        var queue = MatchmakingQueue()
        var tickets = TicketFactory()
        let lobby = queue.openInvitationLobby(
            creator: tickets.make(min: 3, max: 3), invited: ["ann", "bob"], baseMembers: [], openToAutoMatch: false, now: 0
        ).lobby!
        _ = try queue.answer(lobby: lobby, player: "ann", accepted: true, now: 1)
        #expect(throws: MatchmakingError.notAnInvitedMember(playerID: "bob")) { try queue.removeInvited(lobby: lobby, player: "bob", now: 2) }
        #expect(try queue.removeInvited(lobby: lobby, player: "ann", now: 2).failed.isEmpty, "bob may still accept")
        #expect(try queue.answer(lobby: lobby, player: "bob", accepted: true, now: 3).failed.map(\.lobby) == [lobby])
    }
}

@Suite struct ActivityScenarioTests {
    @Test func activityCountsDistinctRecentPlayersPerGameAndGroup() throws {
        var queue = MatchmakingQueue(activityWindow: 120_000)
        var tickets = TicketFactory()
        let first = tickets.make(min: 4, max: 4, group: 1)
        _ = queue.enqueue(first, now: 0)
        _ = try queue.remove(ticket: first.id, now: 1)
        _ = queue.enqueue(Ticket(id: TicketID(50), playerID: first.playerID, key: first.key, minPlayers: 4, maxPlayers: 4, fillTime: 0), now: 2)
        _ = queue.enqueue(tickets.make(min: 4, max: 4, group: 2), now: 3)
        _ = queue.enqueue(tickets.make(min: 4, max: 4, game: "other"), now: 4)
        #expect(queue.activity(game: "game", playerGroup: nil, since: 0) == 2)
        #expect(queue.activity(game: "game", playerGroup: 1, since: 0) == 1)
        #expect(queue.activity(game: "game", playerGroup: nil, since: 3) == 1)
        _ = queue.tick(now: 200_000)
        #expect(queue.activity(game: "game", playerGroup: nil, since: 80_000) == 0)
    }
}

/// An invitation lobby open to auto-match absorbs tickets that wait alone in their own lobby.
@Suite struct AbsorptionScenarioTests {
    @Test func addingAPlayerToARunningMatchPullsInALoneWaitingTicket() {
        var queue = MatchmakingQueue()
        var tickets = TicketFactory()
        let carol = tickets.make(min: 3, max: 3)
        let carolsLobby = queue.enqueue(carol, now: 0).lobby!
        let alice = tickets.make(min: 3, max: 3)
        let outcome = queue.openInvitationLobby(creator: alice, invited: [], baseMembers: ["bob"], openToAutoMatch: true, now: 10)
        let lobby = outcome.placements[0].lobby
        let members: [LobbyMember] = [
            .ticket(alice.id, playerID: alice.playerID), .base(playerID: "bob"), .ticket(carol.id, playerID: carol.playerID),
        ]
        #expect(
            outcome.placements == [
                Placement(ticket: alice.id, lobby: lobby, members: Array(members.prefix(2)), openedLobby: true),
                Placement(ticket: carol.id, lobby: lobby, members: members, openedLobby: false),
            ])
        #expect(outcome.started == [StartedMatch(lobby: lobby, key: alice.key, members: members, mask: 0, reason: .full)])
        #expect(queue.lobby(carolsLobby) == nil, "Carol's own lobby is gone")
        #expect(queue.lobbyCount == 0 && queue.waitingCount == 0 && queue.indexEntryCount == 0)
    }

    @Test func anInvitationLobbyAbsorbsSeveralLoneTicketsOldestFirstAndWaitsForItsInvitee() throws {
        var queue = MatchmakingQueue()
        var tickets = TicketFactory()
        // Two compatible no-role tickets never wait alone side by side (the second joins the first),
        // unless a leave splits them: B joins Z's 3..3 lobby, A (4..4) cannot, then Z leaves.
        let z = tickets.make(min: 3, max: 3)
        let first = queue.enqueue(z, now: 0).lobby!
        let b = tickets.make(min: 2, max: 4)
        #expect(queue.enqueue(b, now: 1).lobby == first)
        let a = tickets.make(min: 4, max: 4)
        let second = queue.enqueue(a, now: 2).lobby!
        _ = try queue.remove(ticket: z.id, now: 3)
        let creator = tickets.make(min: 2, max: 4)
        let outcome = queue.openInvitationLobby(creator: creator, invited: ["ann"], baseMembers: [], openToAutoMatch: true, now: 4)
        let lobby = outcome.placements[0].lobby
        // Seats: creator + ann (pending) + B + A = 4.
        #expect(outcome.placements.map(\.ticket) == [creator.id, b.id, a.id], "oldest first: B arrived at 1, A at 2")
        #expect(outcome.placements.dropFirst().allSatisfy { $0.lobby == lobby && !$0.openedLobby })
        #expect(outcome.started.isEmpty, "ann has not answered")
        #expect(queue.lobby(first) == nil && queue.lobby(second) == nil)
        #expect(queue.lobby(lobby)?.age == 1, "the lobby ages from its oldest absorbed ticket")
        #expect(queue.lobby(lobby)?.maxPlayers == 4 && queue.lobby(lobby)?.minPlayers == 4)
        #expect(queue.lobbyCount == 1 && queue.waitingCount == 3)
        let started = try queue.answer(lobby: lobby, player: "ann", accepted: true, now: 5).started
        #expect(started.first?.members.map(\.playerID) == [creator.playerID, b.playerID, a.playerID, "ann"])
    }

    @Test func equalArrivalsAreAbsorbedByTicketID() {
        var queue = MatchmakingQueue()
        var tickets = TicketFactory()
        let threes = tickets.make(min: 3, max: 3)
        let fours = tickets.make(min: 4, max: 4)
        // Same arrival; the 4..4 opens the older lobby but the 3..3 has the smaller ticket id.
        let foursLobby = queue.enqueue(fours, now: 0).lobby!
        _ = queue.enqueue(threes, now: 0)
        let outcome = queue.openInvitationLobby(
            creator: tickets.make(min: 2, max: 4), invited: [], baseMembers: [], openToAutoMatch: true, now: 1)
        #expect(outcome.placements.map(\.ticket) == [TicketID(3), threes.id], "the 3..3 absorbed; the 4..4 no longer fits")
        #expect(queue.lobby(foursLobby)?.members.count == 1)
        #expect(queue.lobby(outcome.placements[0].lobby)?.age == 0)
    }

    @Test func onlyTicketsWaitingAloneInAnAutoMatchLobbyAreAbsorbed() throws {
        var queue = MatchmakingQueue()
        var tickets = TicketFactory()
        // Lone creators of invitation lobbies (one never invited anyone, one was declined) stay put.
        let quietCreator = tickets.make(min: 3, max: 3)
        let quiet = queue.openInvitationLobby(creator: quietCreator, invited: [], baseMembers: [], openToAutoMatch: true, now: 0).lobby!
        let declinedCreator = tickets.make(min: 3, max: 3)
        let declined = queue.openInvitationLobby(
            creator: declinedCreator, invited: ["ann"], baseMembers: [], openToAutoMatch: true, now: 1
        ).lobby!
        _ = try queue.answer(lobby: declined, player: "ann", accepted: false, now: 2)
        // A ticket waiting with another one stays put too.
        let pair = queue.enqueue(tickets.make(min: 4, max: 4), now: 3).lobby!
        #expect(queue.enqueue(tickets.make(min: 4, max: 4), now: 4).lobby == pair)
        let outcome = queue.openInvitationLobby(
            creator: tickets.make(min: 3, max: 4), invited: [], baseMembers: ["bob"], openToAutoMatch: true, now: 5)
        #expect(outcome.placements.count == 1, "nothing absorbed")
        #expect(outcome.started.isEmpty)
        #expect(queue.lobby(containing: quietCreator.id)?.id == quiet)
        #expect(queue.lobby(containing: declinedCreator.id)?.id == declined)
        #expect(queue.lobby(pair)?.members.count == 2)
    }

    @Test func aLobbyClosedToAutoMatchAbsorbsNothing() {
        var queue = MatchmakingQueue()
        var tickets = TicketFactory()
        let lone = queue.enqueue(tickets.make(min: 2, max: 2), now: 0).lobby!
        let outcome = queue.openInvitationLobby(
            creator: tickets.make(min: 2, max: 2), invited: ["ann"], baseMembers: [], openToAutoMatch: false, now: 1)
        #expect(outcome.placements.count == 1)
        #expect(queue.lobby(lone)?.members.count == 1)
    }

    @Test func aRoleLobbyAbsorbsOnlyDisjointRolesAndNeverADeadEnd() {
        var queue = MatchmakingQueue()
        var tickets = TicketFactory()
        let fighters = (0..<2).map { _ in tickets.make(min: 4, max: 4, role: Role.fighter) }
        let noRole = tickets.make(min: 4, max: 4)
        let allButWizard = tickets.make(min: 4, max: 4, role: Role.fighter | Role.cleric | Role.thief)
        for (now, ticket) in (fighters + [noRole, allButWizard]).enumerated() { _ = queue.enqueue(ticket, now: Int64(now)) }
        #expect(queue.lobbyCount == 4, "all four wait alone")
        // Two base members: a Fighter would take the last seat without completing the mask.
        let wizard = tickets.make(min: 4, max: 4, role: Role.wizard)
        let full = queue.openInvitationLobby(creator: wizard, invited: [], baseMembers: ["h1", "h2"], openToAutoMatch: true, now: 10)
        #expect(full.placements.map(\.ticket) == [wizard.id, allButWizard.id])
        #expect(full.started.map(\.members.count) == [4])
        #expect(full.started.first?.mask == Lobby.completeMask)
        // One base member: the oldest Fighter joins; the second Fighter's role is then taken.
        let wizard2 = tickets.make(min: 4, max: 4, role: Role.wizard)
        let partial = queue.openInvitationLobby(creator: wizard2, invited: [], baseMembers: ["h3"], openToAutoMatch: true, now: 11)
        #expect(partial.placements.map(\.ticket) == [wizard2.id, fighters[0].id])
        #expect(partial.started.isEmpty)
        #expect(queue.lobby(partial.placements[0].lobby)?.mask == Role.wizard | Role.fighter)
        #expect(queue.lobby(containing: fighters[1].id)?.members.count == 1)
        #expect(queue.lobby(containing: noRole.id)?.members.count == 1)
    }

    @Test func aRoleLobbyDoesNotAbsorbATicketThatCompletesItsMaskTooEarly() {
        var queue = MatchmakingQueue()
        var tickets = TicketFactory()
        let allButWizard = tickets.make(min: 4, max: 4, role: Role.fighter | Role.cleric | Role.thief)
        let lone = queue.enqueue(allButWizard, now: 0).lobby!
        // Creator + pending ann + this ticket: the mask would be complete with only 2 of 4 members.
        let outcome = queue.openInvitationLobby(
            creator: tickets.make(min: 4, max: 4, role: Role.wizard), invited: ["ann"], baseMembers: [], openToAutoMatch: true, now: 1)
        #expect(outcome.placements.count == 1)
        #expect(queue.lobby(lone)?.members.count == 1)
    }

    @Test func absorptionRespectsGroupsAndHosting() {
        var queue = MatchmakingQueue()
        var tickets = TicketFactory()
        let group1 = tickets.make(min: 3, max: 3, group: 1)
        let group2 = tickets.make(min: 3, max: 3, group: 2)
        let hosted = tickets.make(min: 3, max: 3, group: 1, hosted: true)
        let otherGame = tickets.make(min: 3, max: 3, group: 1, game: "other")
        for ticket in [group2, hosted, otherGame, group1] { _ = queue.enqueue(ticket, now: 0) }
        #expect(queue.lobbyCount == 4)
        let creator = tickets.make(min: 3, max: 3, group: 1)
        let started = queue.openInvitationLobby(creator: creator, invited: [], baseMembers: ["bob"], openToAutoMatch: true, now: 1).started
        #expect(started.map(\.tickets) == [[creator.id, group1.id]])
        let hostedCreator = tickets.make(min: 3, max: 3, group: 1, hosted: true)
        let hostedStart = queue.openInvitationLobby(
            creator: hostedCreator, invited: [], baseMembers: ["eve"], openToAutoMatch: true, now: 2
        ).started
        #expect(hostedStart.map(\.tickets) == [[hostedCreator.id, hosted.id]])
        #expect(hostedStart.first?.hosted == true)
        #expect(queue.lobby(containing: group2.id)?.members.count == 1)
        #expect(queue.lobby(containing: otherGame.id)?.members.count == 1)
    }
}
