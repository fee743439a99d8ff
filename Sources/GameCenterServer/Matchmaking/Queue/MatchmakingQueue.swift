/// The auto-match queue as a pure state machine: lobbies being formed, the tickets waiting in them,
/// invitation lobbies, fill deadlines and recent activity. Time comes in as `now` (ms); every
/// mutating call returns what happened.
package struct MatchmakingQueue: Sendable {
    private var lobbies: [LobbyID: Lobby] = [:]
    private var lobbyOfTicket: [TicketID: LobbyID] = [:]
    /// Lobbies an auto-matched ticket may join, by shape, oldest first (fair order).
    private var joinable = LobbyShapeIndex<Int64>()
    /// Auto-match lobbies holding one lone ticket, by shape, in the ticket's arrival order.
    private var loneTickets = LobbyShapeIndex<ArrivalRank>()
    private var deadlines = DeadlineSchedule()
    /// Party members' requests, matched only within their party.
    private var parties = PartyQueue()
    private var activityLog: ActivityLog
    private var nextLobbyID: UInt64 = 1

    /// `activityWindow`: how long (ms) arrivals are kept for `activity(game:playerGroup:since:)`.
    package init(activityWindow: Int64 = 120_000) {
        activityLog = ActivityLog(retention: activityWindow)
    }

    // MARK: Queries

    /// Tickets waiting in lobbies.
    var waitingCount: Int { lobbyOfTicket.count + parties.waitingCount }

    /// Lobbies waiting to start (a party with members waiting counts as one).
    var lobbyCount: Int { lobbies.count + parties.partyCount }

    /// The earliest fill deadline: call `tick(now:)` then.
    var nextDeadline: Int64? { [deadlines.next, parties.nextDeadline].compactMap { $0 }.min() }

    func lobby(_ id: LobbyID) -> LobbySnapshot? { lobbies[id]?.snapshot ?? parties.lobby(id) }

    func lobby(containing ticket: TicketID) -> LobbySnapshot? { lobbyOfTicket[ticket].flatMap(lobby) ?? parties.lobby(containing: ticket) }

    /// Every waiting lobby, by id.
    func snapshots() -> [LobbySnapshot] { lobbies.values.map(\.snapshot).sorted { $0.id < $1.id } }

    /// Distinct players who enqueued a ticket for `game` (and `playerGroup`) at or after `since`.
    func activity(game: String, playerGroup: UInt32?, since: Int64) -> Int {
        activityLog.activity(game: game, playerGroup: playerGroup, since: since)
    }

    /// Heap entries held by the internal indexes, stale ones included (tests check nothing leaks).
    var indexEntryCount: Int { joinable.entryCount + loneTickets.entryCount + deadlines.entryCount }

    // MARK: Mutations

    /// Places an auto-match request: it joins the oldest compatible lobby of its key or opens one. A party member's
    /// request waits with its party instead (``PartyQueue``).
    package mutating func enqueue(_ ticket: Ticket, now: Int64) -> MatchmakingOutcome {
        precondition(lobbyOfTicket[ticket.id] == nil && !parties.contains(ticket.id), "ticket \(ticket.id) is already waiting")
        activityLog.record(game: ticket.key.game, playerID: ticket.playerID, playerGroup: ticket.key.playerGroup, now: now)
        var outcome = MatchmakingOutcome()
        if ticket.party != nil {
            let lobby = makeLobbyID()
            let groups = parties.enqueue(WaitingTicket(ticket: ticket, arrival: now), newLobby: lobby, now: now)
            startParty(groups, into: &outcome)
            return outcome
        }
        place(WaitingTicket(ticket: ticket, arrival: now), now: now, into: &outcome)
        return outcome
    }

    /// Opens an invitation lobby: `creator` is its first member, `invited` players are pending,
    /// `baseMembers` are players of a running match the lobby adds to. Open to auto-match, it first
    /// absorbs tickets waiting alone in their own auto-match lobbies (oldest first, while one may join).
    mutating func openInvitationLobby(
        creator: Ticket, invited: [String], baseMembers: [String], openToAutoMatch: Bool, now: Int64
    ) -> MatchmakingOutcome {
        precondition(lobbyOfTicket[creator.id] == nil, "ticket \(creator.id) is already waiting")
        precondition(Set(invited).count == invited.count, "a player is invited twice")
        activityLog.record(game: creator.key.game, playerID: creator.playerID, playerGroup: creator.key.playerGroup, now: now)
        let lobby = Lobby(
            id: makeLobbyID(), creator: WaitingTicket(ticket: creator, arrival: now), invited: invited,
            baseMembers: baseMembers, openToAutoMatch: openToAutoMatch, isInvitationLobby: true)
        var outcome = MatchmakingOutcome()
        insert(lobby, placing: creator.id, into: &outcome)
        absorbLoneTickets(by: lobby.id, into: &outcome)
        settle(lobby.id, now: now, into: &outcome)
        return outcome
    }

    /// Records an invited player's answer (expired invitations are answered as declined).
    mutating func answer(lobby id: LobbyID, player: String, accepted: Bool, now: Int64) throws(MatchmakingError) -> MatchmakingOutcome {
        try change(lobby: id, now: now) { (lobby: inout Lobby) throws(MatchmakingError) in try lobby.answer(player: player, accepted: accepted) }
    }

    /// Takes back an invitation that was never delivered (storing it failed), as if it had not been sent.
    mutating func withdraw(lobby id: LobbyID, player: String, now: Int64) throws(MatchmakingError) -> MatchmakingOutcome {
        try change(lobby: id, now: now) { (lobby: inout Lobby) throws(MatchmakingError) in try lobby.withdraw(player: player) }
    }

    /// Invites more `players` into the lobby whose creator is `ticket` (the host's matchmaking screen inviting
    /// friends into open seats while it is shown). The new invitations are pending like the first ones: the lobby
    /// starts only once they are answered, and its fill time runs again from the last answer. An auto-match lobby
    /// that gets invitations becomes an invitation lobby (its creator leaving dissolves it).
    mutating func invite(_ players: [String], by ticket: TicketID, now: Int64) throws(MatchmakingError) -> MatchmakingOutcome {
        precondition(!players.isEmpty && Set(players).count == players.count, "invite one or more distinct players")
        guard let id = lobbyOfTicket[ticket] else { throw .unknownTicket(ticket) }
        try lobbies[id]!.invite(players, by: ticket)
        var outcome = MatchmakingOutcome()
        settle(id, now: now, into: &outcome)
        return outcome
    }

    /// Removes a waiting ticket (cancelled, or its device dropped). An invitation lobby's creator
    /// leaving dissolves the lobby and re-queues its other tickets with their original arrivals.
    mutating func remove(ticket: TicketID, now: Int64) throws(MatchmakingError) -> MatchmakingOutcome {
        var outcome = MatchmakingOutcome()
        if let groups = parties.remove(ticket, now: now) {
            startParty(groups, into: &outcome)
            return outcome
        }
        guard let id = lobbyOfTicket[ticket] else { throw .unknownTicket(ticket) }
        if lobbies[id]!.isInvitationLobby && lobbies[id]!.creator == ticket {
            dissolve(id, now: now, into: &outcome)
        } else {
            lobbyOfTicket[ticket] = nil
            if lobbies[id]!.removeTicket(ticket) {
                settle(id, now: now, into: &outcome)
            } else {
                _ = close(id)
            }
        }
        return outcome
    }

    /// Removes an accepted invitee who left before the lobby started.
    mutating func removeInvited(lobby id: LobbyID, player: String, now: Int64) throws(MatchmakingError) -> MatchmakingOutcome {
        try change(lobby: id, now: now) { (lobby: inout Lobby) throws(MatchmakingError) in try lobby.removeInvited(player: player) }
    }

    /// Applies `change` to lobby `id` (which must exist) and settles it: started, closed or still waiting.
    private mutating func change(
        lobby id: LobbyID, now: Int64, _ change: (inout Lobby) throws(MatchmakingError) -> Void
    ) throws(MatchmakingError) -> MatchmakingOutcome {
        guard lobbies[id] != nil else { throw .unknownLobby(id) }
        try change(&lobbies[id]!)
        var outcome = MatchmakingOutcome()
        settle(id, now: now, into: &outcome)
        return outcome
    }

    /// Starts every lobby whose fill deadline is at or before `now` (earliest first).
    mutating func tick(now: Int64) -> MatchmakingOutcome {
        activityLog.trimAll(now: now)
        var outcome = MatchmakingOutcome()
        while let id = deadlines.popDue(now: now) {
            settle(id, now: now, into: &outcome)
        }
        if let due = parties.nextDeadline, due <= now { startParty(parties.tick(now: now), into: &outcome) }
        return outcome
    }

    // MARK: Internals

    /// The next lobby id (ids grow with creation order, which breaks ties between equal ages).
    private mutating func makeLobbyID() -> LobbyID {
        defer { nextLobbyID += 1 }
        return LobbyID(nextLobbyID)
    }

    /// Joins the oldest compatible lobby of the ticket's key, or opens a new one, then settles it.
    private mutating func place(_ waiting: WaitingTicket, now: Int64, into outcome: inout MatchmakingOutcome) {
        let ticket = waiting.ticket
        if let id = joinable.firstLobby(for: ticket.key, where: { $0.accepts(ticket) }) {
            let slot = lobbies.index(forKey: id)!
            lobbies.values[slot].add(waiting)
            lobbyOfTicket[ticket.id] = id
            outcome.placements.append(
                Placement(ticket: ticket.id, lobby: id, members: lobbies.values[slot].reportedMembers, openedLobby: false))
            settle(id, now: now, into: &outcome)
        } else {
            let lobby = Lobby(id: makeLobbyID(), creator: waiting)
            insert(lobby, placing: ticket.id, into: &outcome)
            settle(lobby.id, now: now, into: &outcome)
        }
    }

    /// Moves lone tickets (see `Lobby.loneTicket`) of the lobby's key into lobby `id`, oldest first,
    /// re-testing after each join since the lobby's shape changed; each one's old lobby closes.
    /// Costs O(#lone shapes × absorbed × log n).
    private mutating func absorbLoneTickets(by id: LobbyID, into outcome: inout MatchmakingOutcome) {
        let key = lobbies[id]!.key
        while let shape = lobbies[id]!.shape,
            let source = loneTickets.firstLobby(for: key, where: { shape.accepts(loneTicketOf: $0) })
        {
            let waiting = close(source).ticketMembers[0]
            let slot = lobbies.index(forKey: id)!
            lobbies.values[slot].add(waiting)
            lobbyOfTicket[waiting.ticket.id] = id
            outcome.placements.append(
                Placement(ticket: waiting.ticket.id, lobby: id, members: lobbies.values[slot].reportedMembers, openedLobby: false))
        }
    }

    /// Adds a new lobby and reports its creator's placement.
    private mutating func insert(_ lobby: Lobby, placing creator: TicketID, into outcome: inout MatchmakingOutcome) {
        lobbies[lobby.id] = lobby
        lobbyOfTicket[creator] = lobby.id
        outcome.placements.append(
            Placement(ticket: creator, lobby: lobby.id, members: lobby.reportedMembers, openedLobby: true))
    }

    /// Applies the start rules to a touched lobby: starts or fails it, or re-indexes it.
    private mutating func settle(_ id: LobbyID, now: Int64, into outcome: inout MatchmakingOutcome) {
        let slot = lobbies.index(forKey: id)!
        let scheduled = lobbies.values[slot].fillDeadline
        switch lobbies.values[slot].evaluate(now: now) {
        case .wait:
            let lobby = lobbies.values[slot]
            joinable.place(id, key: lobby.key, shape: lobby.shape, rank: lobby.age)
            if let lone = lobby.loneTicket {
                loneTickets.place(id, key: lobby.key, shape: lobby.shape, rank: lone.arrivalRank)
            } else {
                loneTickets.remove(id)
            }
            if lobby.fillDeadline != scheduled { deadlines.set(id, deadline: lobby.fillDeadline) }
        case .start(let reason):
            let lobby = close(id)
            outcome.started.append(
                StartedMatch(lobby: id, key: lobby.key, members: lobby.reportedMembers, mask: lobby.mask, reason: reason))
        case .fail(let reason):
            let lobby = close(id)
            outcome.failed.append(FailedLobby(lobby: id, key: lobby.key, members: lobby.reportedMembers, reason: reason))
        }
    }

    /// Dissolves an invitation lobby whose creator left; its other tickets are re-queued oldest first.
    private mutating func dissolve(_ id: LobbyID, now: Int64, into outcome: inout MatchmakingOutcome) {
        let lobby = close(id)
        let others = lobby.ticketMembers
            .filter { $0.ticket.id != lobby.creator }
            .sorted { $0.arrivalRank < $1.arrivalRank }
        outcome.dissolved.append(
            DissolvedLobby(
                lobby: id, cancelledInvitations: lobby.invitedPlayers(.pending),
                releasedInvitees: lobby.invitedPlayers(.accepted), requeued: others.map(\.ticket.id)))
        for waiting in others { place(waiting, now: now, into: &outcome) }
    }

    /// Reports a party's matches as started, each under a new lobby id.
    private mutating func startParty(_ groups: [PartyQueue.Group], into outcome: inout MatchmakingOutcome) {
        for group in groups {
            outcome.started.append(
                StartedMatch(
                    lobby: makeLobbyID(), key: group.key, members: group.members.map { .ticket($0.ticket.id, playerID: $0.ticket.playerID) }, mask: 0,
                    reason: group.reason))
        }
    }

    /// Takes a lobby out of the queue and all its indexes.
    private mutating func close(_ id: LobbyID) -> Lobby {
        let lobby = lobbies.removeValue(forKey: id)!
        for waiting in lobby.ticketMembers { lobbyOfTicket[waiting.ticket.id] = nil }
        joinable.remove(id)
        loneTickets.remove(id)
        if lobby.fillDeadline != nil { deadlines.set(id, deadline: nil) }
        return lobby
    }
}
