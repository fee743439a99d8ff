/// Everything the join test reads about a lobby that is open to auto-match and has a free seat.
/// Lobbies with equal shapes accept exactly the same tickets.
struct LobbyShape: Hashable, Sendable {
    let mask: UInt32
    let minPlayers: UInt8
    let maxPlayers: UInt8
    let count: UInt8
    let pending: UInt8
    let hasRoles: Bool

    /// Whether `ticket` may join a lobby of this shape: role rules, free seat, compatible ranges,
    /// and no dead end (a role ticket neither takes the last seat without completing the mask nor
    /// completes the mask before the lobby has its minimum).
    func accepts(_ ticket: Ticket) -> Bool {
        accepts(attributes: ticket.playerAttributes, minPlayers: ticket.minPlayers, maxPlayers: ticket.maxPlayers)
    }

    /// Whether the lone ticket of a lobby of shape `alone` (one ticket member, nothing pending, so its
    /// mask and range are that ticket's) may join a lobby of this shape.
    func accepts(loneTicketOf alone: LobbyShape) -> Bool {
        accepts(attributes: alone.mask, minPlayers: Int(alone.minPlayers), maxPlayers: Int(alone.maxPlayers))
    }

    /// The join test for a ticket with these attributes and this range.
    private func accepts(attributes: UInt32, minPlayers ticketMin: Int, maxPlayers ticketMax: Int) -> Bool {
        guard hasRoles ? (attributes != 0 && mask & attributes == 0) : attributes == 0 else { return false }
        let newMax = min(Int(maxPlayers), ticketMax)
        let newMin = max(Int(minPlayers), ticketMin)
        let newSeats = Int(count) + Int(pending) + 1
        guard newSeats <= newMax, newMin <= newMax else { return false }
        guard hasRoles else { return true }
        let completes = mask | attributes == Lobby.completeMask
        if newSeats == newMax && !completes { return false }
        if completes && Int(count) + 1 < newMin { return false }
        return true
    }
}
