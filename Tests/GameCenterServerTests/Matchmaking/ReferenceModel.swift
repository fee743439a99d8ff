@testable import GameCenterServer

/// A brute-force reference model of `MatchmakingQueue`: lobbies in a flat array, every join scans
/// every lobby in age order and every derived value (range, mask, seats, age) is recomputed.
/// Slow on purpose; the differential test and the bench compare the real queue against it.
struct ReferenceQueue {
    /// A lobby as the model stores it: just its members and invitations.
    struct ModelLobby {
        let id: LobbyID
        let key: QueueKey
        let creator: TicketID
        let roleLobby: Bool
        let fillTime: Int64
        let open: Bool
        var invitationLobby: Bool
        var members: [LobbyMember]
        var tickets: [WaitingTicket]
        var invitations: [(player: String, answer: Bool?)]
        var deadline: Int64?

        var minPlayers: Int { tickets.map(\.ticket.minPlayers).max()! }
        var maxPlayers: Int { tickets.map(\.ticket.maxPlayers).min()! }
        var mask: UInt32 { tickets.reduce(0) { $0 | $1.ticket.playerAttributes } }
        var pending: Int { invitations.filter { $0.answer == nil }.count }
        var age: Int64 { tickets.map(\.arrival).min()! }
    }

    private(set) var lobbies: [ModelLobby] = []
    private var arrivals: [(time: Int64, player: String, game: String, group: UInt32)] = []
    private var nextLobby: UInt64 = 1

    var waitingCount: Int { lobbies.reduce(0) { $0 + $1.tickets.count } }

    var nextDeadline: Int64? { lobbies.compactMap(\.deadline).min() }

    func snapshots() -> [LobbySnapshot] {
        lobbies.sorted { $0.id < $1.id }.map { lobby in
            LobbySnapshot(
                id: lobby.id, key: lobby.key, members: lobby.members,
                pendingInvitations: lobby.invitations.filter { $0.answer == nil }.map(\.player),
                minPlayers: lobby.minPlayers, maxPlayers: lobby.maxPlayers, mask: lobby.mask,
                openToAutoMatch: lobby.open, fillDeadline: lobby.deadline, age: lobby.age)
        }
    }

    func activity(game: String, playerGroup: UInt32?, since: Int64) -> Int {
        Set(
            arrivals.filter { $0.game == game && $0.time >= since && (playerGroup == nil || $0.group == playerGroup) }
                .map(\.player)
        ).count
    }

    mutating func enqueue(_ ticket: Ticket, now: Int64) -> MatchmakingOutcome {
        arrivals.append((now, ticket.playerID, ticket.key.game, ticket.key.playerGroup))
        var outcome = MatchmakingOutcome()
        place(WaitingTicket(ticket: ticket, arrival: now), now: now, &outcome)
        return outcome
    }

    mutating func openInvitationLobby(
        creator: Ticket, invited: [String], baseMembers: [String], openToAutoMatch: Bool, now: Int64
    ) -> MatchmakingOutcome {
        arrivals.append((now, creator.playerID, creator.key.game, creator.key.playerGroup))
        let lobby = newLobby(
            creator: WaitingTicket(ticket: creator, arrival: now), invited: invited, base: baseMembers,
            open: openToAutoMatch, invitation: true)
        var outcome = MatchmakingOutcome()
        outcome.placements.append(Placement(ticket: creator.id, lobby: lobby.id, members: lobby.members, openedLobby: true))
        lobbies.append(lobby)
        absorbLoneTickets(by: lobby.id, &outcome)
        check(lobby.id, now: now, &outcome)
        return outcome
    }

    mutating func answer(lobby id: LobbyID, player: String, accepted: Bool, now: Int64) throws(MatchmakingError) -> MatchmakingOutcome {
        guard let index = lobbies.firstIndex(where: { $0.id == id }) else { throw .unknownLobby(id) }
        guard let invitation = lobbies[index].invitations.firstIndex(where: { $0.player == player }) else {
            throw .notInvited(playerID: player)
        }
        guard lobbies[index].invitations[invitation].answer == nil else { throw .alreadyAnswered(playerID: player) }
        lobbies[index].invitations[invitation].answer = accepted
        if accepted { lobbies[index].members.append(.invited(playerID: player)) }
        var outcome = MatchmakingOutcome()
        check(id, now: now, &outcome)
        return outcome
    }

    mutating func invite(_ players: [String], by ticket: TicketID, now: Int64) throws(MatchmakingError) -> MatchmakingOutcome {
        guard let index = lobbies.firstIndex(where: { $0.tickets.contains { $0.ticket.id == ticket } }) else {
            throw .unknownTicket(ticket)
        }
        let lobby = lobbies[index]
        guard lobby.creator == ticket else { throw .notLobbyCreator(ticket) }
        let present = lobby.members.map(\.playerID) + lobby.invitations.map(\.player)
        if let player = players.first(where: { present.contains($0) }) { throw .alreadyInLobby(playerID: player) }
        let free = lobby.maxPlayers - lobby.members.count - lobby.pending
        guard players.count <= free else { throw .noOpenSeats(open: free) }
        lobbies[index].invitations += players.map { ($0, nil) }
        lobbies[index].invitationLobby = true
        var outcome = MatchmakingOutcome()
        check(lobby.id, now: now, &outcome)
        return outcome
    }

    mutating func remove(ticket: TicketID, now: Int64) throws(MatchmakingError) -> MatchmakingOutcome {
        guard let index = lobbies.firstIndex(where: { $0.tickets.contains { $0.ticket.id == ticket } }) else {
            throw .unknownTicket(ticket)
        }
        var outcome = MatchmakingOutcome()
        let lobby = lobbies[index]
        if lobby.invitationLobby && lobby.creator == ticket {
            lobbies.remove(at: index)
            let others = lobby.tickets.filter { $0.ticket.id != ticket }
                .sorted { $0.arrival != $1.arrival ? $0.arrival < $1.arrival : $0.ticket.id < $1.ticket.id }
            outcome.dissolved.append(
                DissolvedLobby(
                    lobby: lobby.id,
                    cancelledInvitations: lobby.invitations.filter { $0.answer == nil }.map(\.player),
                    releasedInvitees: lobby.invitations.filter { $0.answer == true }.map(\.player),
                    requeued: others.map(\.ticket.id)))
            for waiting in others { place(waiting, now: now, &outcome) }
            return outcome
        }
        let player = lobby.tickets.first { $0.ticket.id == ticket }!.ticket.playerID
        lobbies[index].tickets.removeAll { $0.ticket.id == ticket }
        lobbies[index].members.removeAll { $0 == .ticket(ticket, playerID: player) }
        if lobbies[index].tickets.isEmpty {
            lobbies.remove(at: index)
        } else {
            check(lobby.id, now: now, &outcome)
        }
        return outcome
    }

    mutating func removeInvited(lobby id: LobbyID, player: String, now: Int64) throws(MatchmakingError) -> MatchmakingOutcome {
        guard let index = lobbies.firstIndex(where: { $0.id == id }) else { throw .unknownLobby(id) }
        guard let member = lobbies[index].members.firstIndex(of: .invited(playerID: player)) else {
            throw .notAnInvitedMember(playerID: player)
        }
        lobbies[index].members.remove(at: member)
        var outcome = MatchmakingOutcome()
        check(id, now: now, &outcome)
        return outcome
    }

    mutating func tick(now: Int64) -> MatchmakingOutcome {
        var outcome = MatchmakingOutcome()
        let due = lobbies.filter { $0.deadline.map { $0 <= now } ?? false }
            .sorted { $0.deadline! != $1.deadline! ? $0.deadline! < $1.deadline! : $0.id < $1.id }
        for lobby in due { check(lobby.id, now: now, &outcome) }
        return outcome
    }

    // MARK: Rules, restated by brute force

    private mutating func newLobby(creator: WaitingTicket, invited: [String], base: [String], open: Bool, invitation: Bool) -> ModelLobby {
        defer { nextLobby += 1 }
        return ModelLobby(
            id: LobbyID(nextLobby), key: creator.ticket.key, creator: creator.ticket.id,
            roleLobby: creator.ticket.playerAttributes != 0, fillTime: creator.ticket.fillTime, open: open,
            invitationLobby: invitation,
            members: [.ticket(creator.ticket.id, playerID: creator.ticket.playerID)] + base.map { .base(playerID: $0) },
            tickets: [creator], invitations: invited.map { ($0, nil) }, deadline: nil)
    }

    private func canJoin(_ lobby: ModelLobby, _ ticket: Ticket) -> Bool {
        guard lobby.open, lobby.key == ticket.key else { return false }
        let attributes = ticket.playerAttributes
        if lobby.roleLobby {
            if attributes == 0 || lobby.mask & attributes != 0 { return false }
        } else if attributes != 0 {
            return false
        }
        let seatsAfter = lobby.members.count + lobby.pending + 1
        let hiAfter = min(lobby.maxPlayers, ticket.maxPlayers)
        let loAfter = max(lobby.minPlayers, ticket.minPlayers)
        if seatsAfter > hiAfter || loAfter > hiAfter { return false }
        if lobby.roleLobby {
            let maskAfter = lobby.mask | attributes
            if seatsAfter == hiAfter && maskAfter != 0xFFFF_FFFF { return false }
            if maskAfter == 0xFFFF_FFFF && lobby.members.count + 1 < loAfter { return false }
        }
        return true
    }

    /// The invitation lobby `id` pulls in tickets that wait alone in their own auto-match lobby,
    /// oldest first (arrival, then ticket id), one at a time while any can join it.
    private mutating func absorbLoneTickets(by id: LobbyID, _ outcome: inout MatchmakingOutcome) {
        while true {
            let target = lobbies.first { $0.id == id }!
            let alone: [ModelLobby] = lobbies.filter { lobby in
                !lobby.invitationLobby && lobby.invitations.isEmpty && lobby.members.count == 1 && lobby.tickets.count == 1
            }
            let joinable: [WaitingTicket] = alone.map { $0.tickets[0] }.filter { canJoin(target, $0.ticket) }
            let oldestFirst = joinable.sorted { $0.arrival != $1.arrival ? $0.arrival < $1.arrival : $0.ticket.id < $1.ticket.id }
            guard let waiting = oldestFirst.first else { return }
            lobbies.removeAll { $0.id != id && $0.tickets.contains { $0.ticket.id == waiting.ticket.id } }
            let index = lobbies.firstIndex { $0.id == id }!
            lobbies[index].tickets.append(waiting)
            lobbies[index].members.append(.ticket(waiting.ticket.id, playerID: waiting.ticket.playerID))
            outcome.placements.append(
                Placement(ticket: waiting.ticket.id, lobby: id, members: lobbies[index].members, openedLobby: false))
        }
    }

    private mutating func place(_ waiting: WaitingTicket, now: Int64, _ outcome: inout MatchmakingOutcome) {
        let candidates = lobbies.filter { canJoin($0, waiting.ticket) }
            .sorted { $0.age != $1.age ? $0.age < $1.age : $0.id < $1.id }
        if let target = candidates.first, let index = lobbies.firstIndex(where: { $0.id == target.id }) {
            lobbies[index].tickets.append(waiting)
            lobbies[index].members.append(.ticket(waiting.ticket.id, playerID: waiting.ticket.playerID))
            outcome.placements.append(
                Placement(ticket: waiting.ticket.id, lobby: target.id, members: lobbies[index].members, openedLobby: false))
            check(target.id, now: now, &outcome)
        } else {
            let lobby = newLobby(creator: waiting, invited: [], base: [], open: true, invitation: false)
            lobbies.append(lobby)
            outcome.placements.append(
                Placement(ticket: waiting.ticket.id, lobby: lobby.id, members: lobby.members, openedLobby: true))
            check(lobby.id, now: now, &outcome)
        }
    }

    /// The start rules from the spec, applied to one lobby.
    private mutating func check(_ id: LobbyID, now: Int64, _ outcome: inout MatchmakingOutcome) {
        let index = lobbies.firstIndex { $0.id == id }!
        let lobby = lobbies[index]
        let count = lobby.members.count
        if lobby.pending > 0 {
            lobbies[index].deadline = nil
            return
        }
        var reason: StartReason?
        if count >= lobby.maxPlayers {
            reason = .full
        } else if count < lobby.minPlayers {
            lobbies[index].deadline = nil
            if !lobby.open {
                lobbies.remove(at: index)
                outcome.failed.append(FailedLobby(lobby: id, key: lobby.key, members: lobby.members, reason: .tooFewPlayers))
            }
            return
        } else if lobby.roleLobby {
            if lobby.mask == 0xFFFF_FFFF {
                reason = .rolesComplete
            } else if !lobby.open {
                reason = .closed
            }
        } else if !lobby.open {
            reason = .closed
        } else {
            if lobby.deadline == nil { lobbies[index].deadline = now + lobby.fillTime }
            if lobbies[index].deadline! <= now { reason = .fillDeadline }
        }
        if let reason {
            lobbies.remove(at: index)
            outcome.started.append(StartedMatch(lobby: id, key: lobby.key, members: lobby.members, mask: lobby.mask, reason: reason))
        }
    }
}
