/// A match being formed: ticket members (auto-matched requests and the creator), accepted invitees
/// and base members, plus the derived range, role mask and age that matchmaking reads.
struct Lobby: Sendable {
    /// The mask of a role lobby whose roles are all filled.
    static let completeMask: UInt32 = 0xFFFF_FFFF

    /// One member as the lobby stores it.
    enum Member: Sendable {
        case ticket(WaitingTicket)
        case invited(String)
        case base(String)
    }

    /// One invitation and whether it was answered.
    struct Invitation: Sendable {
        enum State: Sendable { case pending, accepted, declined }
        let playerID: String
        var state: State
    }

    /// What the start rules say about the lobby right now.
    enum Verdict: Sendable {
        case wait
        case start(StartReason)
        case fail(FailureReason)
    }

    let id: LobbyID
    let key: QueueKey
    let creator: TicketID
    /// Set by the creator: role lobbies take only role tickets, no-role lobbies only no-role tickets.
    let hasRoles: Bool
    let fillTime: Int64
    let openToAutoMatch: Bool
    /// Set for lobbies with invitations: the creator hosts them, and leaving dissolves them.
    private(set) var isInvitationLobby: Bool
    private(set) var members: [Member]
    private(set) var invitations: [Invitation]
    private(set) var pending: Int
    private(set) var minPlayers: Int
    private(set) var maxPlayers: Int
    private(set) var mask: UInt32
    private(set) var age: Int64
    private(set) var fillDeadline: Int64?

    /// An auto-match lobby opened by `creator`.
    init(id: LobbyID, creator: WaitingTicket) {
        self.init(id: id, creator: creator, invited: [], baseMembers: [], openToAutoMatch: true, isInvitationLobby: false)
    }

    /// A lobby opened by `creator`, optionally inviting players and adding to `baseMembers`' running match.
    init(
        id: LobbyID, creator: WaitingTicket, invited: [String], baseMembers: [String],
        openToAutoMatch: Bool, isInvitationLobby: Bool
    ) {
        let ticket = creator.ticket
        self.id = id
        self.key = ticket.key
        self.creator = ticket.id
        self.hasRoles = ticket.playerAttributes != 0
        self.fillTime = ticket.fillTime
        self.openToAutoMatch = openToAutoMatch
        self.isInvitationLobby = isInvitationLobby
        self.members = [.ticket(creator)] + baseMembers.map(Member.base)
        self.invitations = invited.map { Invitation(playerID: $0, state: .pending) }
        self.pending = invited.count
        self.minPlayers = ticket.minPlayers
        self.maxPlayers = ticket.maxPlayers
        self.mask = ticket.playerAttributes
        self.age = creator.arrival
        precondition(members.count + pending <= maxPlayers, "more players than the creator's maxPlayers")
    }

    /// Members present (tickets, accepted invitees, base members).
    var count: Int { members.count }

    /// Seats taken, counting unanswered invitations.
    var seats: Int { count + pending }

    /// The join-relevant state, or nil when no auto-matched ticket can join.
    var shape: LobbyShape? {
        guard openToAutoMatch, seats < maxPlayers else { return nil }
        return LobbyShape(
            mask: mask, minPlayers: UInt8(minPlayers), maxPlayers: UInt8(maxPlayers),
            count: UInt8(count), pending: UInt8(pending), hasRoles: hasRoles)
    }

    /// Ticket members in the order they joined.
    var ticketMembers: [WaitingTicket] {
        members.compactMap { if case .ticket(let waiting) = $0 { waiting } else { nil } }
    }

    /// The ticket of an auto-match lobby whose only member it is (an invitation lobby opened open to
    /// auto-match may absorb it), else nil.
    var loneTicket: WaitingTicket? {
        guard !isInvitationLobby, members.count == 1, invitations.isEmpty, case .ticket(let waiting) = members[0] else {
            return nil
        }
        return waiting
    }

    /// Adds an auto-matched ticket; the caller has checked `shape.accepts`.
    mutating func add(_ waiting: WaitingTicket) {
        members.append(.ticket(waiting))
        minPlayers = max(minPlayers, waiting.ticket.minPlayers)
        maxPlayers = min(maxPlayers, waiting.ticket.maxPlayers)
        mask |= waiting.ticket.playerAttributes
        age = min(age, waiting.arrival)
    }

    /// Records an invited player's answer; an acceptance makes them a member.
    mutating func answer(player: String, accepted: Bool) throws(MatchmakingError) {
        guard let index = invitations.firstIndex(where: { $0.playerID == player }) else {
            throw .notInvited(playerID: player)
        }
        guard invitations[index].state == .pending else { throw .alreadyAnswered(playerID: player) }
        invitations[index].state = accepted ? .accepted : .declined
        pending -= 1
        if accepted { members.append(.invited(player)) }
    }

    /// Takes back a pending invitation that was never delivered (it could not be stored): the player is no longer
    /// invited, and may be invited again.
    mutating func withdraw(player: String) throws(MatchmakingError) {
        guard let index = invitations.firstIndex(where: { $0.playerID == player }) else { throw .notInvited(playerID: player) }
        guard invitations[index].state == .pending else { throw .alreadyAnswered(playerID: player) }
        invitations.remove(at: index)
        pending -= 1
    }

    /// Adds pending invitations for `players`, asked by the creator's ticket; throws, leaving the lobby unchanged,
    /// when another ticket asks, a player is already in the lobby or was invited to it, or the seats run out.
    mutating func invite(_ players: [String], by ticket: TicketID) throws(MatchmakingError) {
        guard ticket == creator else { throw .notLobbyCreator(ticket) }
        let present = Set(reportedMembers.map(\.playerID)).union(invitations.map(\.playerID))
        if let player = players.first(where: present.contains) { throw .alreadyInLobby(playerID: player) }
        guard seats + players.count <= maxPlayers else { throw .noOpenSeats(open: maxPlayers - seats) }
        invitations += players.map { Invitation(playerID: $0, state: .pending) }
        pending += players.count
        isInvitationLobby = true
    }

    /// Removes an accepted invitee who left before the start.
    mutating func removeInvited(player: String) throws(MatchmakingError) {
        guard let index = members.firstIndex(where: { if case .invited(player) = $0 { true } else { false } }) else {
            throw .notAnInvitedMember(playerID: player)
        }
        members.remove(at: index)
    }

    /// Removes a ticket member and recomputes range, mask and age from the remaining tickets.
    /// Returns false when no ticket member is left (the lobby is gone).
    mutating func removeTicket(_ id: TicketID) -> Bool {
        members.removeAll { if case .ticket(let waiting) = $0 { waiting.ticket.id == id } else { false } }
        let remaining = ticketMembers
        guard let first = remaining.first else { return false }
        minPlayers = remaining.lazy.map(\.ticket.minPlayers).max()!
        maxPlayers = remaining.lazy.map(\.ticket.maxPlayers).min()!
        mask = remaining.reduce(0) { $0 | $1.ticket.playerAttributes }
        age = remaining.reduce(first.arrival) { min($0, $1.arrival) }
        return true
    }

    /// Applies the start rules, setting or clearing the fill deadline on the way.
    mutating func evaluate(now: Int64) -> Verdict {
        guard pending == 0 else {
            // Invitations can be added to a lobby whose fill time runs: it waits for their answers instead.
            fillDeadline = nil
            return .wait
        }
        if count >= maxPlayers { return .start(.full) }
        guard count >= minPlayers else {
            fillDeadline = nil
            return openToAutoMatch ? .wait : .fail(.tooFewPlayers)
        }
        if hasRoles {
            if mask == Lobby.completeMask { return .start(.rolesComplete) }
            return openToAutoMatch ? .wait : .start(.closed)
        }
        guard openToAutoMatch else { return .start(.closed) }
        let deadline = fillDeadline ?? now + fillTime
        fillDeadline = deadline
        return deadline <= now ? .start(.fillDeadline) : .wait
    }

    /// Members as reported to the caller.
    var reportedMembers: [LobbyMember] {
        members.map {
            switch $0 {
            case .ticket(let waiting): .ticket(waiting.ticket.id, playerID: waiting.ticket.playerID)
            case .invited(let player): .invited(playerID: player)
            case .base(let player): .base(playerID: player)
            }
        }
    }

    /// Invited players with the given answer state, in invitation order.
    func invitedPlayers(_ state: Invitation.State) -> [String] {
        invitations.filter { $0.state == state }.map(\.playerID)
    }

    /// A read-only copy for queries.
    var snapshot: LobbySnapshot {
        LobbySnapshot(
            id: id, key: key, members: reportedMembers, pendingInvitations: invitedPlayers(.pending),
            minPlayers: minPlayers, maxPlayers: maxPlayers, mask: mask, openToAutoMatch: openToAutoMatch,
            fillDeadline: fillDeadline, age: age)
    }
}
