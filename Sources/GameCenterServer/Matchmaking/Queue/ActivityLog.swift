import DequeModule

/// Recent ticket arrivals per game, trimmed to a retention window, for player-activity queries.
struct ActivityLog: Sendable {
    /// One arrival.
    private struct Arrival: Sendable {
        let time: Int64
        let playerID: String
        let playerGroup: UInt32
    }

    /// How long (ms) arrivals are kept.
    let retention: Int64
    private var arrivals: [String: Deque<Arrival>] = [:]

    init(retention: Int64) { self.retention = retention }

    /// Logs an arrival at `now` (times must not go backwards) and trims that game's log.
    mutating func record(game: String, playerID: String, playerGroup: UInt32, now: Int64) {
        arrivals[game, default: []].append(Arrival(time: now, playerID: playerID, playerGroup: playerGroup))
        trim(game: game, now: now)
    }

    /// Trims every game's log to the retention window ending at `now`.
    mutating func trimAll(now: Int64) {
        for game in Array(arrivals.keys) { trim(game: game, now: now) }
    }

    /// Distinct players who arrived for `game` (and `playerGroup`, when given) at or after `since`;
    /// exact while `since` lies inside the retention window.
    func activity(game: String, playerGroup: UInt32?, since: Int64) -> Int {
        guard let log = arrivals[game] else { return 0 }
        var players = Set<String>()
        for arrival in log.reversed() {
            guard arrival.time >= since else { break }
            if playerGroup == nil || playerGroup == arrival.playerGroup { players.insert(arrival.playerID) }
        }
        return players.count
    }

    private mutating func trim(game: String, now: Int64) {
        let cutoff = now - retention
        while let first = arrivals[game]?.first, first.time < cutoff { arrivals[game]!.removeFirst() }
        if arrivals[game]?.isEmpty == true { arrivals[game] = nil }
    }
}
