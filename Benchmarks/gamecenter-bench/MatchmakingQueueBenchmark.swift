import GameCenterServer
import Histogram

/// The matchmaking queue alone, in process, for `gamecenter-bench matchmaking`: `waiting` role requests that
/// cannot complete each other (one role per group: the seed's four roles), then `arrivals` more — a quarter of
/// the group's waiting role, the rest other roles that fill lobbies, every lobby's fourth role starting a match.
enum MatchmakingQueueBenchmark {
    /// What one run measured.
    struct Figures: Sendable {
        var waiting: Int
        var arrivals: Int
        var operationsPerSecond: Double
        var p50Nanoseconds: Int64
        var p99Nanoseconds: Int64
        var matches: Int
    }

    static let roles: [UInt32] = [0xFF00_0000, 0x00FF_0000, 0x0000_FF00, 0x0000_00FF]

    /// Fills a queue with `waiting` requests over `groups` groups, then times `arrivals` placements one by one.
    static func run(waiting: Int, groups: Int, arrivals: Int) -> Figures {
        var queue = MatchmakingQueue()
        for id in 0..<waiting {
            let group = id % groups
            _ = queue.enqueue(ticket(id, group: group, role: roles[group % 4]), now: Int64(id))
        }
        var generator = SystemRandomNumberGenerator()
        var latencies = Histogram<UInt64>(numberOfSignificantValueDigits: .three)
        var matches = 0
        let clock = ContinuousClock()
        let start = clock.now
        for offset in 0..<arrivals {
            let group = Int.random(in: 0..<groups, using: &generator)
            let dominant = group % 4
            let role =
                Int.random(in: 0..<4, using: &generator) == 0
                ? roles[dominant] : roles[(dominant + Int.random(in: 1...3, using: &generator)) % 4]
            let arrival = ticket(waiting + offset, group: group, role: role)
            let before = clock.now
            matches += queue.enqueue(arrival, now: Int64(waiting + offset)).started.count
            _ = latencies.record(UInt64(nanoseconds(clock.now - before)))
        }
        let total = nanoseconds(clock.now - start)
        return Figures(
            waiting: waiting, arrivals: arrivals, operationsPerSecond: Double(arrivals) / (Double(total) / 1e9),
            p50Nanoseconds: Int64(latencies.valueAtPercentile(50)), p99Nanoseconds: Int64(latencies.valueAtPercentile(99)),
            matches: matches)
    }

    private static func ticket(_ id: Int, group: Int, role: UInt32) -> Ticket {
        Ticket(
            id: TicketID(UInt64(id)), playerID: "p\(id)", key: QueueKey(game: "bench", hosted: false, playerGroup: UInt32(group)),
            minPlayers: 4, maxPlayers: 4, playerAttributes: role, fillTime: 10_000)
    }

    private static func nanoseconds(_ duration: Duration) -> Int64 {
        duration.components.seconds * 1_000_000_000 + duration.components.attoseconds / 1_000_000_000
    }
}
