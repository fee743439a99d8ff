import JMESPath

/// Identifies a lobby; assigned by the queue in creation order (lower id = created earlier).
struct LobbyID: Hashable, Comparable, Sendable, CustomStringConvertible {
    let rawValue: UInt64

    init(_ rawValue: UInt64) { self.rawValue = rawValue }

    static func < (lhs: LobbyID, rhs: LobbyID) -> Bool { lhs.rawValue < rhs.rawValue }

    var description: String { "L\(rawValue)" }
}

/// A member of a lobby as reported to the caller.
enum LobbyMember: Hashable, Sendable {
    /// An auto-matched request (or the creator of an invitation lobby).
    case ticket(TicketID, playerID: String)
    /// An invited player who accepted.
    case invited(playerID: String)
    /// A player already in the running match that the lobby adds players to.
    case base(playerID: String)

    /// The player behind this member.
    var playerID: String {
        switch self {
        case .ticket(_, let playerID), .invited(let playerID), .base(let playerID): playerID
        }
    }
}

/// A read-only view of a waiting lobby.
struct LobbySnapshot: Hashable, Sendable {
    let id: LobbyID
    let key: QueueKey
    /// Members in the order they entered the lobby (creator first, then base members).
    let members: [LobbyMember]
    /// Invited players who have not answered yet, in invitation order.
    let pendingInvitations: [String]
    /// The lobby's range: max of its tickets' minimums, min of their maximums.
    let minPlayers: Int
    let maxPlayers: Int
    let mask: UInt32
    let openToAutoMatch: Bool
    let fillDeadline: Int64?
    /// Arrival of the oldest ticket member; fair order serves the smallest first.
    let age: Int64
}

/// Where a ticket was placed, with the lobby's members right after it joined.
struct Placement: Hashable, Sendable {
    let ticket: TicketID
    let lobby: LobbyID
    let members: [LobbyMember]
    /// True when the ticket opened a new lobby rather than joining one.
    let openedLobby: Bool
}

/// Why a lobby started.
enum StartReason: Hashable, Sendable {
    /// Every seat is taken.
    case full
    /// A role lobby's mask became 0xFFFFFFFF with enough players.
    case rolesComplete
    /// A no-role lobby's fill time ran out.
    case fillDeadline
    /// Enough players and the lobby cannot take any more.
    case closed
}

/// A lobby that left the queue as a match to start.
package struct StartedMatch: Hashable, Sendable {
    let lobby: LobbyID
    let key: QueueKey
    let members: [LobbyMember]
    let mask: UInt32
    let reason: StartReason
    /// A rule-based match: each member's properties as the rules saw them, with Game Center's under `gc`.
    var playerProperties: [String: [String: JSONValue]]? = nil

    var hosted: Bool { key.hosted }
}

/// Why a lobby failed.
enum FailureReason: Hashable, Sendable {
    /// Fewer than the minimum players, nothing pending, closed to auto-match.
    case tooFewPlayers
}

/// A lobby that left the queue without starting; its members must be told.
struct FailedLobby: Hashable, Sendable {
    let lobby: LobbyID
    let key: QueueKey
    let members: [LobbyMember]
    let reason: FailureReason
}

/// An invitation lobby whose creator left.
struct DissolvedLobby: Hashable, Sendable {
    let lobby: LobbyID
    /// Invitations still unanswered: the caller cancels them.
    let cancelledInvitations: [String]
    /// Invited players who had accepted: the caller tells them the lobby is gone.
    let releasedInvitees: [String]
    /// Other ticket members, put back into the queue with their original arrival (see `placements`).
    let requeued: [TicketID]
}

/// Everything one mutating call did, in the order it happened.
package struct MatchmakingOutcome: Hashable, Sendable {
    var placements: [Placement] = []
    package var started: [StartedMatch] = []
    var failed: [FailedLobby] = []
    var dissolved: [DissolvedLobby] = []
}

/// Rejected calls; the queue is left unchanged.
enum MatchmakingError: Error, Hashable, Sendable {
    case unknownTicket(TicketID)
    case unknownLobby(LobbyID)
    case notInvited(playerID: String)
    case alreadyAnswered(playerID: String)
    case notAnInvitedMember(playerID: String)
    /// Only the lobby's creator invites into it.
    case notLobbyCreator(TicketID)
    /// The player is a member of the lobby or was invited to it already.
    case alreadyInLobby(playerID: String)
    /// The invitations would take more seats than are free; `open` seats are.
    case noOpenSeats(open: Int)
}
