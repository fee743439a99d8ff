import Testing
@testable import GameCenterServer
import NetworkFaultProxy

/// Drives a `RankIndex` and a `NaiveRankModel` with the same random operations and
/// compares every answer.
struct Harness {
    /// Which operations `randomStep` favours.
    enum Bias {
        case grow, shrink, churn
    }

    /// The index under test.
    let index: RankIndex
    /// The reference model.
    var model: NaiveRankModel
    /// Source of all random choices.
    var generator: SplitMix64
    /// Ordinary players are drawn from `0..<universe`.
    let universe: UInt32
    /// When set, keys come from Int64 scores (extremes included) mapped in this direction.
    var scoreDirection: Bool?
    /// Players present, for uniform picks.
    private var present: [UInt32] = []
    /// Position of each present player in `present`.
    private var presentSlot: [UInt32: Int] = [:]
    /// Report sequence for tiebreaks, so every generated key is unique.
    private var sequence: UInt64 = 0

    /// Players beyond the universe that exercise the hash table's reserved marker.
    static let specialPlayers: [UInt32] = [.max, .max - 1]

    /// Starts from `index` whose contents equal `model`.
    init(index: RankIndex, model: NaiveRankModel = NaiveRankModel(), seed: UInt64, universe: UInt32) {
        self.index = index
        self.model = model
        self.generator = SplitMix64(seed: seed)
        self.universe = max(universe, 4)
        for (player, key) in model.sorted {
            presentSlot[player] = present.count
            present.append(player)
            sequence = max(sequence, key.tiebreak & 0xFFFF_FFFF)
        }
        sequence += 1_000_000
    }

    /// Sets `player` in both and checks the returned previous keys agree.
    mutating func set(player: UInt32, key: RankKey) {
        let expected = model.set(player: player, key: key)
        let actual = index.set(player: player, key: key)
        #expect(actual == expected, "set(\(player)) returned \(String(describing: actual))")
        if presentSlot[player] == nil {
            presentSlot[player] = present.count
            present.append(player)
        }
    }

    /// Removes `player` from both and checks the returned keys agree.
    mutating func remove(player: UInt32) {
        let expected = model.remove(player: player)
        let actual = index.remove(player: player)
        #expect(actual == expected, "remove(\(player)) returned \(String(describing: actual))")
        if let slot = presentSlot.removeValue(forKey: player) {
            let last = present.removeLast()
            if slot < present.count {
                present[slot] = last
                presentSlot[last] = slot
            }
        }
    }

    /// Performs one random insert, move, removal or no-op, favouring `bias`.
    mutating func randomStep(bias: Bias) {
        let (insertShare, moveShare, removeShare): (UInt64, UInt64, UInt64) =
            switch bias {
            case .grow: (70, 15, 10)
            case .shrink: (10, 15, 70)
            case .churn: (20, 60, 18)
            }
        let roll = generator.next() % 100
        if roll < insertShare || present.isEmpty {
            if let player = absentPlayer() {
                set(player: player, key: randomKey(near: nil))
            } else if let player = present.randomElement(using: &generator) {
                set(player: player, key: randomKey(near: model.keys[player]))
            }
        } else if roll < insertShare + moveShare {
            let player = present.randomElement(using: &generator)!
            set(player: player, key: randomKey(near: model.keys[player]))
        } else if roll < insertShare + moveShare + removeShare {
            remove(player: present.randomElement(using: &generator)!)
        } else if generator.next() % 2 == 0, let player = absentPlayer() {
            remove(player: player)
        } else if let player = present.randomElement(using: &generator) {
            set(player: player, key: model.keys[player]!)
        }
    }

    /// A random player not present, or nil when none was found quickly.
    private mutating func absentPlayer() -> UInt32? {
        for _ in 0..<32 {
            let player =
                generator.next() % 50 == 0
                ? Harness.specialPlayers[Int(generator.next() % 2)]
                : UInt32(generator.next() % UInt64(universe))
            if presentSlot[player] == nil { return player }
        }
        return nil
    }

    /// A fresh unique key: many ties, extremes, uniform values, and values near `old`
    /// (which keeps moves inside one leaf).
    private mutating func randomKey(near old: RankKey?) -> RankKey {
        sequence += 1
        let tiebreak = generator.next() % 8 == 0 ? UInt64.max - sequence : sequence
        if let higherIsBetter = scoreDirection {
            let value: Int64 =
                switch generator.next() % 6 {
                case 0: .min
                case 1: .max
                case 2: Int64.random(in: -3...3, using: &generator)
                case 3: Int64.min + Int64.random(in: 0...5, using: &generator)
                case 4: Int64.max - Int64.random(in: 0...5, using: &generator)
                default: Int64(bitPattern: generator.next())
                }
            return RankKey(value: value, higherIsBetter: higherIsBetter, tiebreak: tiebreak)
        }
        let roll = generator.next() % 100
        let order: UInt64
        if roll < 35 {
            order = generator.next() % 20
        } else if roll < 60 {
            order = generator.next()
        } else if roll < 70 {
            order = generator.next() % 2 == 0 ? 0 : .max
        } else if let old {
            let delta = generator.next() % 4
            order = generator.next() % 2 == 0 ? old.order &+ delta : old.order &- delta
        } else {
            order = generator.next() % 20
        }
        return RankKey(order: order, tiebreak: tiebreak)
    }

    /// Compares every query against the model; throws after the first kind of mismatch.
    mutating func verify(_ context: String) throws {
        try #require(index.count == model.count, "count, \(context)")
        let violation = index.invariantViolation()
        try #require(violation == nil, "\(violation ?? ""), \(context)")

        // Plain comparisons keep debug runs fast; one #require reports the first mismatch.
        // Large trees get a sample of per-player queries: the full `entries(in:)` comparison
        // below and the invariant walk (which checks the map against every leaf entry) cover the rest.
        var mismatch: String?
        let sample =
            model.count <= 400
            ? Array(model.sorted.indices)
            : (0..<400).map { _ in Int(generator.next() % UInt64(model.count)) }
        for rank in sample where mismatch == nil {
            let entry = model.sorted[rank]
            if index.key(of: entry.player) != entry.key {
                mismatch = "key(of: \(entry.player))"
            } else if index.rank(of: entry.player) != rank + 1 {
                mismatch = "rank(of: \(entry.player)) = \(String(describing: index.rank(of: entry.player))), expected \(rank + 1)"
            } else if index.rank(of: entry.key) != rank + 1 {
                mismatch = "rank(of: \(entry.key))"
            } else if entry.key.tiebreak < .max {
                let after = RankKey(order: entry.key.order, tiebreak: entry.key.tiebreak + 1)
                if index.rank(of: after) != model.rank(of: after) { mismatch = "rank(of: \(after))" }
            }
        }
        try #require(mismatch == nil, "\(mismatch ?? ""), \(context)")
        for _ in 0..<20 {
            if let player = absentPlayer() {
                try #require(index.rank(of: player) == nil && index.key(of: player) == nil, "absent \(player), \(context)")
            }
            let key = RankKey(
                order: generator.next() % 2 == 0 ? generator.next() % 25 : generator.next(),
                tiebreak: generator.next())
            try #require(index.rank(of: key) == model.rank(of: key), "rank(of: \(key)), \(context)")
        }
        for key in [RankKey(order: 0, tiebreak: 0), RankKey(order: .max, tiebreak: .max)] {
            try #require(index.rank(of: key) == model.rank(of: key), "rank(of: \(key)), \(context)")
        }

        let count = model.count
        var ranges: [ClosedRange<Int>] = [
            1...max(count, 1), -5...3, 0...0, 1...1, max(count - 2, 1)...(count + 10), count...count,
            (count + 1)...(count + 5), Int.min...0, Int.min...Int.max, (count / 2)...(count / 2 + 99),
        ]
        for _ in 0..<10 {
            let start = Int(generator.next() % UInt64(count + 3)) - 1
            ranges.append(start...(start + Int(generator.next() % 150)))
        }
        for range in ranges {
            try #require(same(index.entries(in: range), model.entries(in: range)), "entries(in: \(range)), \(context)")
        }
    }
}
