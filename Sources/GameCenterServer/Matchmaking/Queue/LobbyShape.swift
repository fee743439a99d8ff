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
        let attributes = ticket.playerAttributes
        guard hasRoles ? (attributes != 0 && mask & attributes == 0) : attributes == 0 else { return false }
        let newMax = min(Int(maxPlayers), ticket.maxPlayers)
        let newMin = max(Int(minPlayers), ticket.minPlayers)
        let newSeats = Int(count) + Int(pending) + 1
        guard newSeats <= newMax, newMin <= newMax else { return false }
        guard hasRoles else { return true }
        let completes = mask | attributes == Lobby.completeMask
        if newSeats == newMax && !completes { return false }
        if completes && Int(count) + 1 < newMin { return false }
        return true
    }
}
