import HeapModule

/// A leaderboard over a rolling time window (the last 24 hours, the last 7 days): a player's entry is their best
/// report earned inside the window (among equal values, the one stored first), and when that report ages out, their
/// best remaining one takes its place.
///
/// For each player it keeps the reports that can still become their best: a report is dropped once one earned at the
/// same time or later ranks ahead of it (it would expire first and never be the best again). Kept reports, in the
/// order they were earned, each rank behind the ones before them, so the first is the entry. Reports are added in
/// any order (a score may reach the server long after later ones) and at most once (by score id). Not thread-safe:
/// ``Board`` guards it.
struct WindowBoard {
    /// A report inside the window.
    struct Report: Equatable, Sendable {
        var value: Int64
        var scoreID: Int64
        var earnedAt: Int64
    }

    private struct Expiry: Comparable {
        var at: Int64
        var player: UInt32
        static func < (a: Expiry, b: Expiry) -> Bool { a.at < b.at }
    }

    /// Length of the window in milliseconds.
    let length: Int64
    let higherIsBetter: Bool
    /// The players' current entries.
    private(set) var index = RankIndex()
    private var reports: [UInt32: Kept] = [:]
    private var expiries = Heap<Expiry>()
    private var horizon: Int64 = .min

    init(length: Int64, higherIsBetter: Bool) {
        self.length = length
        self.higherIsBetter = higherIsBetter
    }

    /// A window built at once from stored reports, as of `now`: the same state as adding them one by one, without
    /// a million single updates.
    init(length: Int64, higherIsBetter: Bool, reports stored: RecentReports, now: Int64) {
        self.init(length: length, higherIsBetter: higherIsBetter)
        horizon = now
        var entries: [(player: UInt32, key: RankKey)] = []
        var expiries: [Expiry] = []
        entries.reserveCapacity(stored.playerCount)
        expiries.reserveCapacity(stored.playerCount)
        reports.reserveCapacity(stored.playerCount)
        stored.forEachPlayer { player, inOrder in
            let kept: Kept
            if inOrder.count == 1, let only = inOrder.first {
                // The usual case, without an array.
                guard only.earnedAt + length > now else { return }
                kept = .one(only)
            } else {
                var chain: [Report] = []
                for report in inOrder where report.earnedAt + length > now {
                    while let last = chain.last, ranksAhead(report, of: last) { chain.removeLast() }
                    chain.append(report)
                }
                guard let built = Kept(chain) else { return }
                kept = built
            }
            let first = kept.first
            reports[player] = kept
            entries.append((player, RankKey(value: first.value, scoreID: first.scoreID, higherIsBetter: higherIsBetter)))
            expiries.append(Expiry(at: first.earnedAt + length, player: player))
        }
        index = RankIndex(entries: entries)
        self.expiries = Heap(expiries)
    }

    /// Adds a report (ignored when it is outside the window, already known, or can never be the player's best).
    mutating func add(_ report: Report, player: UInt32) {
        guard report.earnedAt + length > horizon else { return }
        var kept = reports[player]?.reports ?? []
        if kept.contains(where: { $0.scoreID == report.scoreID }) { return }
        // Dominated: a report earned at the same time or later that ranks ahead.
        if kept.contains(where: { $0.earnedAt >= report.earnedAt && ranksAhead($0, of: report) }) { return }
        kept.removeAll { $0.earnedAt <= report.earnedAt && ranksAhead(report, of: $0) }
        let position = kept.firstIndex { ($0.earnedAt, $0.scoreID) > (report.earnedAt, report.scoreID) } ?? kept.endIndex
        kept.insert(report, at: position)
        let previousFirst = reports[player]?.first
        reports[player] = Kept(kept)
        if kept.first != previousFirst { entryChanged(player: player, to: kept.first) }
    }

    /// Lets reports made at or before `now - length` age out.
    mutating func advance(to now: Int64) {
        horizon = max(horizon, now)
        while let next = expiries.min, next.at <= horizon {
            _ = expiries.removeMin()
            guard var kept = reports[next.player]?.reports else { continue }
            let before = kept.first
            kept.removeAll { $0.earnedAt + length <= horizon }
            reports[next.player] = Kept(kept)
            if kept.first != before { entryChanged(player: next.player, to: kept.first) }
        }
    }

    /// Forgets a player (their scores were removed).
    mutating func remove(player: UInt32) {
        reports[player] = nil
        index.remove(player: player)
    }

    /// The report behind the player's entry.
    func entry(of player: UInt32) -> Report? { reports[player]?.first }

    /// A player's kept reports, in time order; the first is their entry. One report, the usual case, is kept inline.
    private enum Kept {
        case one(Report)
        /// Two or more.
        case many([Report])

        /// Nil for no reports.
        init?(_ reports: [Report]) {
            switch reports.count {
            case 0: return nil
            case 1: self = .one(reports[0])
            default: self = .many(reports)
            }
        }

        var reports: [Report] {
            switch self {
            case .one(let report): [report]
            case .many(let reports): reports
            }
        }

        var first: Report {
            switch self {
            case .one(let report): report
            case .many(let reports): reports[0]
            }
        }
    }

    private mutating func entryChanged(player: UInt32, to first: Report?) {
        guard let first else {
            index.remove(player: player)
            return
        }
        index.set(player: player, key: RankKey(value: first.value, scoreID: first.scoreID, higherIsBetter: higherIsBetter))
        expiries.insert(Expiry(at: first.earnedAt + length, player: player))
    }

    /// Whether `a` ranks ahead of `b`: a better value, or an equal one stored first.
    private func ranksAhead(_ a: Report, of b: Report) -> Bool {
        RankKey(value: a.value, scoreID: a.scoreID, higherIsBetter: higherIsBetter)
            < RankKey(value: b.value, scoreID: b.scoreID, higherIsBetter: higherIsBetter)
    }
}

/// Reports read from storage for the rolling windows, grouped by player and, within a player, in the order they were
/// earned (reports earned in the same millisecond in the order they were stored).
struct RecentReports: Sendable {
    private var reports: [WindowBoard.Report] = []
    /// `reports[starts[i]..<starts[i + 1]]` are the reports of `players[i]`.
    private var players: [UInt32] = []
    private var starts: [Int] = [0]

    /// Number of players with at least one report.
    var playerCount: Int { players.count }

    /// Groups `rows` (in any order) by player.
    init(_ rows: [(player: UInt32, report: WindowBoard.Report)]) {
        guard let highest = rows.lazy.map(\.player).max() else { return }
        let grouped: [(player: UInt32, report: WindowBoard.Report)]
        if Int(highest) <= 4 * rows.count {
            // Player numbers are small and dense: a counting sort groups them in linear time.
            var next = [Int](repeating: 0, count: Int(highest) + 2)
            for row in rows { next[Int(row.player) + 1] += 1 }
            for index in 1..<next.count { next[index] += next[index - 1] }
            grouped = Array(unsafeUninitializedCapacity: rows.count) { buffer, initialized in
                for row in rows {
                    buffer.initializeElement(at: next[Int(row.player)], to: row)
                    next[Int(row.player)] += 1
                }
                initialized = rows.count
            }
        } else {
            // A board with few of the server's players.
            grouped = rows.sorted { $0.player < $1.player }
        }
        reports = grouped.map(\.report)
        players.reserveCapacity(rows.count)
        for (index, row) in grouped.enumerated() where index == 0 || grouped[index - 1].player != row.player {
            if index > 0 { starts.append(index) }
            players.append(row.player)
        }
        starts.append(grouped.count)
        // A player's reports come in the order storage read them: put them in the order they were earned (a score
        // that waited in a device's outbox is stored after ones earned later).
        for index in players.indices where starts[index + 1] - starts[index] > 1 {
            reports[starts[index]..<starts[index + 1]].sort { ($0.earnedAt, $0.scoreID) < ($1.earnedAt, $1.scoreID) }
        }
    }

    /// Calls `body` with each player and their reports.
    func forEachPlayer(_ body: (UInt32, ArraySlice<WindowBoard.Report>) -> Void) {
        for (index, player) in players.enumerated() {
            body(player, reports[starts[index]..<starts[index + 1]])
        }
    }
}

extension RankKey {
    /// The key of a score: better values first, then earlier reports (smaller score ids).
    init(value: Int64, scoreID: Int64, higherIsBetter: Bool) {
        self.init(value: value, higherIsBetter: higherIsBetter, tiebreak: UInt64(bitPattern: scoreID))
    }

    /// The score id this key was made from.
    var scoreID: Int64 { Int64(bitPattern: tiebreak) }
}
