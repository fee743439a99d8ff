import GameCenterServer
import NetworkFaultProxy

/// A matchmaking queue holding 10,000 requests that cannot complete each other (one role per player group, the
/// seed's four roles), and arrivals that mostly fill lobbies: each lobby's fourth role starts a match.
final class QueueFixture: @unchecked Sendable {
    // `@unchecked`: ordo-one runs one benchmark at a time on one thread; nothing else touches the fixture.
    /// The one fixture of the process.
    static let shared = QueueFixture(waiting: 10_000, groups: 1_000)

    private static let roles: [UInt32] = [0xFF00_0000, 0x00FF_0000, 0x0000_FF00, 0x0000_00FF]

    private var queue = MatchmakingQueue()
    private let groups: Int
    private var nextID: Int
    private var generator = SplitMix64(seed: 2)

    private init(waiting: Int, groups: Int) {
        self.groups = groups
        for id in 0..<waiting {
            _ = queue.enqueue(Self.ticket(id, group: id % groups, role: Self.roles[(id % groups) % 4]), now: Int64(id))
        }
        nextID = waiting
    }

    /// Places one more request: a quarter of them the group's waiting role, the rest other roles.
    func enqueueArrival() -> Int {
        let group = Int(generator.next() % UInt64(groups))
        let dominant = group % 4
        let role = generator.next() % 4 == 0 ? Self.roles[dominant] : Self.roles[(dominant + 1 + Int(generator.next() % 3)) % 4]
        nextID += 1
        return queue.enqueue(Self.ticket(nextID, group: group, role: role), now: Int64(nextID)).started.count
    }

    private static func ticket(_ id: Int, group: Int, role: UInt32) -> Ticket {
        Ticket(
            id: TicketID(UInt64(id)), playerID: "p\(id)", key: QueueKey(game: "bench", hosted: false, playerGroup: UInt32(group)),
            minPlayers: 4, maxPlayers: 4, playerAttributes: role, fillTime: 10_000)
    }
}
