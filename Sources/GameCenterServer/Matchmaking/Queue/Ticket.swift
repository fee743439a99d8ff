/// Identifies one match request (ticket); assigned by the caller, unique while the ticket waits.
package struct TicketID: Hashable, Comparable, Sendable, CustomStringConvertible {
    let rawValue: UInt64

    package init(_ rawValue: UInt64) { self.rawValue = rawValue }

    package static func < (lhs: TicketID, rhs: TicketID) -> Bool { lhs.rawValue < rhs.rawValue }

    package var description: String { "t\(rawValue)" }
}

/// Only lobbies and tickets with equal keys ever interact.
package struct QueueKey: Hashable, Sendable {
    let game: String
    let hosted: Bool
    let playerGroup: UInt32

    /// The key of a game (bundle id and environment), relayed or hosted, and player group.
    package init(game: String, hosted: Bool, playerGroup: UInt32) {
        self.game = game
        self.hosted = hosted
        self.playerGroup = playerGroup
    }
}

/// One auto-matched match request. `minPlayers`/`maxPlayers` are validated (2...16) before the queue.
package struct Ticket: Hashable, Sendable {
    let id: TicketID
    let playerID: String
    let key: QueueKey
    let minPlayers: Int
    let maxPlayers: Int
    /// Role bits; 0 means "no role".
    let playerAttributes: UInt32
    /// How long (ms) a lobby this ticket creates waits for more players once it could start.
    let fillTime: Int64
    /// A party member's request: matched only with its party (``PartyQueue``).
    let party: PartySeat?

    package init(
        id: TicketID, playerID: String, key: QueueKey,
        minPlayers: Int, maxPlayers: Int, playerAttributes: UInt32 = 0, fillTime: Int64, party: PartySeat? = nil
    ) {
        self.party = party
        precondition(2 <= minPlayers && minPlayers <= maxPlayers && maxPlayers <= 16, "invalid player range")
        precondition(fillTime >= 0, "negative fill time")
        self.id = id
        self.playerID = playerID
        self.key = key
        self.minPlayers = minPlayers
        self.maxPlayers = maxPlayers
        self.playerAttributes = playerAttributes
        self.fillTime = fillTime
    }
}

/// Where a party member's request stands in its party (a party shares a code; see ``PartyQueue``).
package struct PartySeat: Hashable, Sendable {
    /// Who the member is to the party's host.
    package enum Role: Hashable, Sendable {
        case host
        /// A friend of the host: kept in the host's match.
        case hostFriend
        case guest
    }

    let code: String
    let role: Role
    /// How long (ms) the member waits for the host's match before playing without the host; for the host, how long
    /// its match holds seats for ``friends`` who are not waiting yet.
    let hostWait: Int64
    /// The host's friends in the party when the host asked (the host's seat only).
    let friends: Set<String>

    package init(code: String, role: Role, hostWait: Int64, friends: Set<String> = []) {
        self.code = code
        self.role = role
        self.hostWait = hostWait
        self.friends = friends
    }
}

/// A ticket inside the queue together with the moment it first arrived (kept across re-queues).
struct WaitingTicket: Hashable, Sendable {
    let ticket: Ticket
    let arrival: Int64
}

extension WaitingTicket {
    /// The ticket's place in arrival order.
    var arrivalRank: ArrivalRank { ArrivalRank(arrival: arrival, ticket: ticket.id) }
}

/// Arrival order of waiting tickets: earlier arrival first, ties by ticket id.
struct ArrivalRank: Comparable, Sendable {
    let arrival: Int64
    let ticket: TicketID

    static func < (lhs: ArrivalRank, rhs: ArrivalRank) -> Bool {
        lhs.arrival != rhs.arrival ? lhs.arrival < rhs.arrival : lhs.ticket < rhs.ticket
    }
}
