/// The requests of party members (tickets with a ``PartySeat``), kept apart from auto-match: only players of one party
/// are matched together. Pure, like ``MatchmakingQueue`` (which owns it): time comes in as `now` (ms).
///
/// The host's match forms first: the host, then the host's friends in the party in arrival order, then the other
/// members in arrival order, up to the party's `maxPlayers`, so the host's friends are never split across matches
/// while they fit in one (Apple's party codes split them by chance). It holds seats for the host's friends in the party
/// who are not waiting yet (for at most the host's `hostWait`), then starts when full, or with `minPlayers` once the
/// fill time has passed since the host came and it had them. Until then the other members wait for the host, each for
/// at most its seat's `hostWait`; after the host's match (or that wait), the members left form matches among
/// themselves the same way, in arrival order.
struct PartyQueue: Sendable {
    /// Members to start as one match.
    struct Group: Sendable {
        let key: QueueKey
        let members: [WaitingTicket]
        let reason: StartReason
    }

    private struct PartyKey: Hashable, Sendable {
        let key: QueueKey
        let code: String
    }

    private struct Party: Sendable {
        /// Names the party's waiting members in status answers.
        let lobby: LobbyID
        /// In arrival order.
        var waiting: [WaitingTicket] = []
        /// When the host's match started (nil: not yet, as far as this queue remembers).
        var hostMatchedAt: Int64?
        /// When an empty party whose host plays is forgotten (members arriving until then need not wait for the host).
        var forgetAt: Int64?
        /// When the party's next change is due (a fill time, a member done waiting for the host, forgetting it).
        var deadline: Int64?
    }

    private var parties: [PartyKey: Party] = [:]
    private var partyOfTicket: [TicketID: PartyKey] = [:]
    private var partyOfLobby: [LobbyID: PartyKey] = [:]

    /// Party members waiting.
    var waitingCount: Int { partyOfTicket.count }

    /// Parties with members waiting.
    var partyCount: Int { parties.values.filter { !$0.waiting.isEmpty }.count }

    /// The earliest change due: call ``tick(now:)`` then.
    var nextDeadline: Int64? { parties.values.compactMap(\.deadline).min() }

    func contains(_ ticket: TicketID) -> Bool { partyOfTicket[ticket] != nil }

    /// The waiting members of the party `ticket` waits in, as a lobby.
    func lobby(containing ticket: TicketID) -> LobbySnapshot? { partyOfTicket[ticket].flatMap(snapshot) }

    func lobby(_ id: LobbyID) -> LobbySnapshot? { partyOfLobby[id].flatMap(snapshot) }

    private func snapshot(_ key: PartyKey) -> LobbySnapshot? {
        guard let party = parties[key], let first = party.waiting.first?.ticket else { return nil }
        return LobbySnapshot(
            id: party.lobby, key: key.key, members: party.waiting.map { .ticket($0.ticket.id, playerID: $0.ticket.playerID) }, pendingInvitations: [],
            minPlayers: first.minPlayers, maxPlayers: first.maxPlayers, mask: 0, openToAutoMatch: false, fillDeadline: party.deadline,
            age: party.waiting.map(\.arrival).min() ?? 0)
    }

    /// Adds a member's request (`newLobby` names the party if it is seen for the first time) and answers the matches
    /// that start.
    mutating func enqueue(_ waiting: WaitingTicket, newLobby: LobbyID, now: Int64) -> [Group] {
        let seat = waiting.ticket.party!
        let key = PartyKey(key: waiting.ticket.key, code: seat.code)
        if parties[key] == nil {
            parties[key] = Party(lobby: newLobby)
            partyOfLobby[newLobby] = key
        }
        parties[key]!.waiting.append(waiting)
        partyOfTicket[waiting.ticket.id] = key
        return settle(key, now: now)
    }

    /// Takes a member's request out (cancelled, or its device dropped); nil when it is not a party request.
    mutating func remove(_ ticket: TicketID, now: Int64) -> [Group]? {
        guard let key = partyOfTicket.removeValue(forKey: ticket) else { return nil }
        parties[key]!.waiting.removeAll { $0.ticket.id == ticket }
        return settle(key, now: now)
    }

    /// Starts what is due at `now`, and forgets parties with nobody waiting.
    mutating func tick(now: Int64) -> [Group] {
        let due = parties.filter { $0.value.deadline.map { $0 <= now } ?? false }.map(\.key)
        return due.flatMap { settle($0, now: now) }
    }

    /// Applies the rules to one party: the matches that start, and its next deadline.
    private mutating func settle(_ key: PartyKey, now: Int64) -> [Group] {
        var party = parties[key]!
        var groups: [Group] = []
        func start(_ members: [WaitingTicket], _ reason: StartReason) {
            let ids = Set(members.map(\.ticket.id))
            party.waiting.removeAll { ids.contains($0.ticket.id) }
            for id in ids { partyOfTicket.removeValue(forKey: id) }
            groups.append(Group(key: key.key, members: members, reason: reason))
        }
        party.deadline = nil
        while let sample = party.waiting.first?.ticket {
            let (least, most, fill) = (sample.minPlayers, sample.maxPlayers, sample.fillTime)
            if party.hostMatchedAt == nil, let host = party.waiting.first(where: { $0.ticket.party?.role == .host }) {
                let seat = host.ticket.party!
                let friends = party.waiting.filter { $0.ticket.party?.role == .hostFriend }
                let guests = party.waiting.filter { $0.ticket.party?.role == .guest }
                // Seats held for the host's friends who have not asked yet (when they all fit), while the host's wait lasts.
                let missing = seat.friends.subtracting(party.waiting.map(\.ticket.playerID)).count
                if missing > 0, 1 + friends.count + missing <= most, now < host.arrival + seat.hostWait {
                    party.deadline = host.arrival + seat.hostWait
                    break
                }
                let group = Array(([host] + friends + guests).prefix(most))
                let due = group.count >= least ? max(host.arrival, group.map(\.arrival).sorted()[least - 1]) + fill : nil
                if group.count == most || (due.map { now >= $0 } ?? false) {
                    start(group, group.count == most ? .full : .fillDeadline)
                    party.hostMatchedAt = now
                    party.forgetAt = now + host.ticket.party!.hostWait
                    continue
                }
                party.deadline = due
                break
            }
            // Without the host: those done waiting for it (everyone, once the host's match started).
            let pool = party.waiting.filter { party.hostMatchedAt != nil || now - $0.arrival >= $0.ticket.party!.hostWait }
            if pool.count >= most {
                start(Array(pool.prefix(most)), .full)
                continue
            }
            let due = pool.count >= least ? pool[least - 1].arrival + fill : nil
            if let due, now >= due {
                start(pool, .fillDeadline)
                continue
            }
            let doneWaiting =
                party.hostMatchedAt == nil
                ? party.waiting.filter { now - $0.arrival < $0.ticket.party!.hostWait }.map { $0.arrival + $0.ticket.party!.hostWait }.min() : nil
            party.deadline = [due, doneWaiting].compactMap { $0 }.min()
            break
        }
        if party.waiting.isEmpty {
            // Remembers for a while that the host plays, so that late members need not wait for the host.
            if let forgetAt = party.forgetAt, forgetAt > now {
                party.deadline = forgetAt
            } else {
                parties.removeValue(forKey: key)
                partyOfLobby.removeValue(forKey: party.lobby)
                return groups
            }
        }
        parties[key] = party
        return groups
    }
}
