import Testing
@testable import GameCenterServer

/// The host's matchmaking screen inviting more friends into the open seats of its waiting lobby.
@Suite struct InviteMoreScenarioTests {
    @Test func playersInvitedWhileWaitingTakeOpenSeatsAndHoldTheStart() throws {
        var queue = MatchmakingQueue()
        var tickets = TicketFactory()
        let creator = tickets.make(min: 2, max: 3, fillTime: 5_000)
        let lobby = queue.openInvitationLobby(creator: creator, invited: ["ann"], baseMembers: [], openToAutoMatch: true, now: 0).lobby!
        _ = try queue.answer(lobby: lobby, player: "ann", accepted: true, now: 1)
        #expect(queue.lobby(lobby)?.fillDeadline == 5_001, "two of 2...3 players: the fill time runs")

        let invited = try queue.invite(["cat"], by: creator.id, now: 2)
        #expect(invited == MatchmakingOutcome())
        #expect(queue.lobby(lobby)?.pendingInvitations == ["cat"])
        #expect(queue.lobby(lobby)?.fillDeadline == nil, "the lobby waits for the answer instead of its fill time")
        #expect(queue.nextDeadline == nil)
        #expect(queue.tick(now: 10_000).started.isEmpty)

        let started = try queue.answer(lobby: lobby, player: "cat", accepted: true, now: 10_001).started
        #expect(started.map(\.reason) == [.full])
        #expect(started.first?.members == [.ticket(creator.id, playerID: "p1"), .invited(playerID: "ann"), .invited(playerID: "cat")])
    }

    @Test func aDeclineStartsTheFillTimeAgain() throws {
        var queue = MatchmakingQueue()
        var tickets = TicketFactory()
        let creator = tickets.make(min: 2, max: 4, fillTime: 5_000)
        let lobby = queue.openInvitationLobby(creator: creator, invited: ["ann"], baseMembers: [], openToAutoMatch: true, now: 0).lobby!
        _ = try queue.answer(lobby: lobby, player: "ann", accepted: true, now: 1)
        _ = try queue.invite(["cat"], by: creator.id, now: 2)
        _ = try queue.answer(lobby: lobby, player: "cat", accepted: false, now: 3)
        #expect(queue.lobby(lobby)?.fillDeadline == 5_003)
        #expect(queue.tick(now: 5_003).started.map(\.members.count) == [2])
    }

    @Test func autoMatchFillsSeatsMeanwhileAndInvitationsTakeOnlyWhatIsLeft() throws {
        var queue = MatchmakingQueue()
        var tickets = TicketFactory()
        let creator = tickets.make(min: 2, max: 4)
        let lobby = queue.openInvitationLobby(creator: creator, invited: ["ann"], baseMembers: [], openToAutoMatch: true, now: 0).lobby!
        #expect(queue.enqueue(tickets.make(min: 2, max: 4), now: 1).lobby == lobby)
        let before = queue.snapshots()
        #expect(throws: MatchmakingError.noOpenSeats(open: 1)) { try queue.invite(["cat", "dan"], by: creator.id, now: 2) }
        #expect(queue.snapshots() == before, "a refused invitation changes nothing")
        _ = try queue.invite(["cat"], by: creator.id, now: 2)
        #expect(queue.enqueue(tickets.make(min: 2, max: 4), now: 3).lobby != lobby, "every seat is taken or invited")
        #expect(throws: MatchmakingError.noOpenSeats(open: 0)) { try queue.invite(["dan"], by: creator.id, now: 4) }
    }

    @Test func onlyTheCreatorInvitesAndNobodyTwice() throws {
        var queue = MatchmakingQueue()
        var tickets = TicketFactory()
        let creator = tickets.make(min: 2, max: 8)
        let lobby = queue.openInvitationLobby(creator: creator, invited: ["ann", "bob"], baseMembers: ["host"], openToAutoMatch: true, now: 0)
            .lobby!
        let joiner = tickets.make(min: 2, max: 8)
        #expect(queue.enqueue(joiner, now: 1).lobby == lobby)
        _ = try queue.answer(lobby: lobby, player: "bob", accepted: false, now: 2)
        let before = queue.snapshots()
        #expect(throws: MatchmakingError.notLobbyCreator(joiner.id)) { try queue.invite(["cat"], by: joiner.id, now: 3) }
        #expect(throws: MatchmakingError.unknownTicket(TicketID(99))) { try queue.invite(["cat"], by: TicketID(99), now: 3) }
        for present in ["ann", "bob", "host", "p1", "p2"] {
            #expect(throws: MatchmakingError.alreadyInLobby(playerID: present)) { try queue.invite(["cat", present], by: creator.id, now: 3) }
        }
        #expect(queue.snapshots() == before)
    }

    @Test func anAutoMatchLobbyThatInvitesIsDissolvedWhenItsCreatorLeaves() throws {
        var queue = MatchmakingQueue()
        var tickets = TicketFactory()
        let creator = tickets.make(min: 3, max: 4)
        let lobby = queue.enqueue(creator, now: 0).lobby!
        let joiner = tickets.make(min: 3, max: 4)
        #expect(queue.enqueue(joiner, now: 1).lobby == lobby)
        _ = try queue.invite(["ann"], by: creator.id, now: 2)
        let outcome = try queue.remove(ticket: creator.id, now: 3)
        #expect(outcome.dissolved == [DissolvedLobby(lobby: lobby, cancelledInvitations: ["ann"], releasedInvitees: [], requeued: [joiner.id])])
        #expect(queue.lobby(containing: joiner.id)?.members == [.ticket(joiner.id, playerID: "p2")])
    }
}
