import HeapModule

/// A leaderboard over a rolling time window (the last 24 hours, the last 7 days): a player's entry is their best
/// report made inside the window, and when that report ages out, their best remaining one takes its place.
///
/// For each player it keeps the reports that can still become their best: a report is dropped once a later one
/// is strictly better (it would expire first and never be the best again). Kept reports, in time order, are
/// never better than the ones before them, so the first is the entry. Reports are added in any order and at
/// most once (by score id). Not thread-safe: ``Board`` guards it.
struct WindowBoard {
    /// A report inside the window.
    struct Report: Equatable {
        var value: Int64
        var scoreID: Int64
        var reportedAt: Int64
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
    private var reports: [UInt32: [Report]] = [:]
    private var expiries = Heap<Expiry>()
    private var horizon: Int64 = .min

    init(length: Int64, higherIsBetter: Bool) {
        self.length = length
        self.higherIsBetter = higherIsBetter
    }

    /// A window built at once from stored reports (each player's in report order), as of `now`: the same state
    /// as adding them one by one, without a million single updates.
    init(length: Int64, higherIsBetter: Bool, reportsByPlayer: [UInt32: [Report]], now: Int64) {
        self.init(length: length, higherIsBetter: higherIsBetter)
        horizon = now
        var entries: [(player: UInt32, key: RankKey)] = []
        var expiries: [Expiry] = []
        for (player, inOrder) in reportsByPlayer {
            var kept: [Report] = []
            for report in inOrder where report.reportedAt + length > now {
                while let last = kept.last, isStrictlyBetter(report, last) { kept.removeLast() }
                kept.append(report)
            }
            guard let first = kept.first else { continue }
            reports[player] = kept
            entries.append((player, RankKey(value: first.value, scoreID: first.scoreID, higherIsBetter: higherIsBetter)))
            expiries.append(Expiry(at: first.reportedAt + length, player: player))
        }
        index = RankIndex(entries: entries)
        self.expiries = Heap(expiries)
    }

    /// Adds a report (ignored when it is outside the window, already known, or can never be the player's best).
    mutating func add(_ report: Report, player: UInt32) {
        guard report.reportedAt + length > horizon else { return }
        var kept = reports[player] ?? []
        if kept.contains(where: { $0.scoreID == report.scoreID }) { return }
        // Dominated: a report at the same time or later that is strictly better.
        if kept.contains(where: { $0.reportedAt >= report.reportedAt && isStrictlyBetter($0, report) }) { return }
        kept.removeAll { $0.reportedAt <= report.reportedAt && isStrictlyBetter(report, $0) }
        let position = kept.firstIndex { ($0.reportedAt, $0.scoreID) > (report.reportedAt, report.scoreID) } ?? kept.endIndex
        kept.insert(report, at: position)
        let previousFirst = reports[player]?.first
        reports[player] = kept
        if kept.first != previousFirst { entryChanged(player: player, to: kept.first) }
    }

    /// Lets reports made at or before `now - length` age out.
    mutating func advance(to now: Int64) {
        horizon = max(horizon, now)
        while let next = expiries.min, next.at <= horizon {
            _ = expiries.removeMin()
            guard var kept = reports[next.player] else { continue }
            let before = kept.first
            kept.removeAll { $0.reportedAt + length <= horizon }
            reports[next.player] = kept.isEmpty ? nil : kept
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

    private mutating func entryChanged(player: UInt32, to first: Report?) {
        guard let first else {
            index.remove(player: player)
            return
        }
        index.set(player: player, key: RankKey(value: first.value, scoreID: first.scoreID, higherIsBetter: higherIsBetter))
        expiries.insert(Expiry(at: first.reportedAt + length, player: player))
    }

    private func isStrictlyBetter(_ a: Report, _ b: Report) -> Bool {
        higherIsBetter ? a.value > b.value : a.value < b.value
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
