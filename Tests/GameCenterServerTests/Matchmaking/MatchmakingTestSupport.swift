@testable import GameCenterServer

/// The seed's four role masks.
enum Role {
    static let fighter: UInt32 = 0xFF00_0000
    static let cleric: UInt32 = 0x00FF_0000
    static let wizard: UInt32 = 0x0000_FF00
    static let thief: UInt32 = 0x0000_00FF
}

/// Makes tickets with fresh ids (`t1`, `t2`, ...) and player ids (`p1`, `p2`, ...).
struct TicketFactory {
    /// Ids permuted within blocks of four (`t2`, `t1`, `t0`, `t7`, ...), so ticket-id order differs
    /// from arrival and lobby order and ties broken by the wrong one show.
    let idsOutOfOrder: Bool
    private var nextID: UInt64 = 1

    init(idsOutOfOrder: Bool = false) { self.idsOutOfOrder = idsOutOfOrder }

    mutating func make(
        min: Int, max: Int, role: UInt32 = 0, group: UInt32 = 0, hosted: Bool = false,
        game: String = "game", fillTime: Int64 = 5_000
    ) -> Ticket {
        defer { nextID += 1 }
        return Ticket(
            id: TicketID(idsOutOfOrder ? nextID ^ 3 : nextID), playerID: "p\(nextID)", key: QueueKey(game: game, hosted: hosted, playerGroup: group),
            minPlayers: min, maxPlayers: max, playerAttributes: role, fillTime: fillTime)
    }
}

extension MatchmakingOutcome {
    /// The lobby the (single) placed ticket ended up in.
    var lobby: LobbyID? { placements.last?.lobby }
}

extension StartedMatch {
    /// Ticket ids of the ticket members, in member order.
    var tickets: [TicketID] {
        members.compactMap { if case .ticket(let id, _) = $0 { id } else { nil } }
    }
}
