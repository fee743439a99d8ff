import Testing
@testable import GameCenterServer
import NetworkFaultProxy

/// Randomized differential tests of `RankIndex` against `NaiveRankModel`.
@Suite struct RankIndexDifferentialTests {
    /// Node sizes under test: the minimum, odd and even sizes, lopsided pairs, and the default.
    static let shapes: [(leaf: Int, inner: Int)] = [(4, 4), (5, 4), (6, 5), (7, 8), (16, 6), (64, 64)]

    /// One scenario per (shape, seed).
    static let scenarios: [(shape: Int, seed: UInt64)] = shapes.indices.flatMap { shape in
        (1...3).map { (shape: shape, seed: UInt64(shape * 100 + $0)) }
    }

    @Test("grow through split boundaries, churn, shrink to empty", arguments: scenarios.indices)
    func growChurnShrink(scenario: Int) throws {
        let (shapeIndex, seed) = RankIndexDifferentialTests.scenarios[scenario]
        let shape = RankIndexDifferentialTests.shapes[shapeIndex]
        let leaf = shape.leaf, inner = shape.inner
        // Sizes at and around one leaf, a full two-level tree, and several levels.
        let deep = shape.leaf == 64 ? 6_000 : min(1_500, leaf * inner * inner + leaf * inner)
        let targets = [
            1, leaf - 1, leaf, leaf + 1, 2 * leaf + 1, leaf * inner - 1, leaf * inner + 1, deep,
            leaf * inner, leaf + 1, leaf, 1, 0,
        ]
        var harness = Harness(
            index: RankIndex(leafCapacity: leaf, innerCapacity: inner), seed: seed, universe: UInt32(deep * 2)
        )
        for target in targets {
            // Full checks cost O(n) each, so they get rarer as the tree grows; the
            // invariant walk still catches any structural damage done in between.
            var sinceCheck = 0
            var steps = 0
            while harness.model.count != target {
                let grow = harness.model.count < target
                harness.randomStep(bias: grow ? .grow : .shrink)
                steps += 1
                sinceCheck += 1
                if sinceCheck >= max(25, harness.model.count / 2) {
                    sinceCheck = 0
                    try harness.verify("toward \(target), step \(steps)")
                }
            }
            try harness.verify("at \(target)")
            let churnSteps = min(400, 4 * target + 20)
            for step in 0..<churnSteps {
                harness.randomStep(bias: .churn)
                if step % max(25, churnSteps / 4) == 0 { try harness.verify("churn at \(target), step \(step)") }
            }
            // Churn may drift the size; only its end state must match the model.
            try harness.verify("after churn at \(target)")
        }
    }

    @Test("Int64 extremes as scores, both directions", arguments: [true, false])
    func extremeScores(higherIsBetter: Bool) throws {
        var harness = Harness(
            index: RankIndex(leafCapacity: 4, innerCapacity: 4), seed: higherIsBetter ? 11 : 12, universe: 200
        )
        harness.scoreDirection = higherIsBetter
        for step in 0..<1_500 {
            harness.randomStep(bias: step < 700 ? .grow : .churn)
            if step % 50 == 0 { try harness.verify("step \(step)") }
        }
        try harness.verify("end")
        let best: Int64 = higherIsBetter ? .max : .min
        let worst: Int64 = higherIsBetter ? .min : .max
        harness.set(player: 9_000, key: RankKey(value: best, higherIsBetter: higherIsBetter, tiebreak: 0))
        harness.set(player: 9_001, key: RankKey(value: worst, higherIsBetter: higherIsBetter, tiebreak: .max))
        try harness.verify("with extremes")
        #expect(harness.index.rank(of: 9_000) == 1)
        #expect(harness.index.rank(of: 9_001) == harness.index.count)
    }

    @Test("bulk build equals incremental build, then both stay equal under updates", arguments: shapes.indices)
    func bulkMatchesIncremental(shapeIndex: Int) throws {
        let shape = RankIndexDifferentialTests.shapes[shapeIndex]
        let leaf = shape.leaf, inner = shape.inner
        let probe = RankIndex(leafCapacity: leaf, innerCapacity: inner)
        let sizes = Set([
            0, 1, 2, 3, leaf - 1, leaf, leaf + 1, probe.bulkLeafCount - 1, probe.bulkLeafCount,
            probe.bulkLeafCount + 1, 2 * probe.bulkLeafCount + 1,
            probe.bulkLeafCount * probe.bulkInnerCount,
            probe.bulkLeafCount * probe.bulkInnerCount + 1, 1_234, 4_000,
        ]).sorted()
        for size in sizes {
            var generator = SplitMix64(seed: UInt64(shapeIndex * 10_000 + size))
            var entries: [(player: UInt32, key: RankKey)] = []
            var players = Set<UInt32>()
            while entries.count < size {
                let player = UInt32(generator.next() % UInt64(size * 3 + 10))
                guard players.insert(player).inserted else { continue }
                let order = generator.next() % 4 == 0 ? generator.next() : generator.next() % 50
                entries.append((player, RankKey(order: order, tiebreak: UInt64(entries.count))))
            }
            let bulk = RankIndex(entries: entries, leafCapacity: leaf, innerCapacity: inner)
            let incremental = RankIndex(leafCapacity: leaf, innerCapacity: inner)
            var model = NaiveRankModel()
            for entry in entries.shuffled(using: &generator) {
                incremental.set(player: entry.player, key: entry.key)
                model.set(player: entry.player, key: entry.key)
            }
            #expect(bulk.invariantViolation() == nil, "bulk size \(size)")
            #expect(bulk.count == size)
            #expect(same(bulk.entries(in: 0...size), incremental.entries(in: 0...size)), "size \(size)")
            #expect(same(bulk.entries(in: 0...size), model.entries(in: 0...size)), "size \(size)")

            var bulkHarness = Harness(index: bulk, model: model, seed: UInt64(size), universe: UInt32(size * 3 + 10))
            var incrementalHarness = Harness(
                index: incremental, model: model, seed: UInt64(size), universe: UInt32(size * 3 + 10)
            )
            try bulkHarness.verify("bulk \(size)")
            try incrementalHarness.verify("incremental \(size)")
            for step in 0..<300 {
                bulkHarness.randomStep(bias: .churn)
                incrementalHarness.randomStep(bias: .churn)
                if step % 100 == 99 {
                    try bulkHarness.verify("bulk \(size) after \(step) updates")
                    try incrementalHarness.verify("incremental \(size) after \(step) updates")
                }
            }
            let count = bulkHarness.model.count
            #expect(same(bulk.entries(in: 0...count), incremental.entries(in: 0...count)))
        }
    }

    @Test("default node sizes: bulk and incremental at several thousand entries")
    func defaultSizes() throws {
        var generator = SplitMix64(seed: 77)
        let entries = (0..<UInt32(8_000)).map {
            (player: $0 * 3, key: RankKey(order: generator.next() % 1_000, tiebreak: UInt64($0)))
        }
        var model = NaiveRankModel()
        for entry in entries { model.set(player: entry.player, key: entry.key) }
        var harness = Harness(index: RankIndex(entries: entries), model: model, seed: 78, universe: 30_000)
        #expect(harness.index.height == 2)
        try harness.verify("bulk")
        for step in 0..<4_000 {
            harness.randomStep(bias: step < 2_000 ? .grow : .churn)
            if step % 1_000 == 999 { try harness.verify("step \(step)") }
        }
        let incremental = RankIndex()
        for (player, key) in harness.model.sorted { incremental.set(player: player, key: key) }
        #expect(incremental.invariantViolation() == nil)
        #expect(same(incremental.entries(in: 1...incremental.count), harness.model.entries(in: 1...incremental.count)))
    }

    @Test("empty index and simple API results")
    func emptyAndBasics() {
        let index = RankIndex()
        #expect(index.count == 0)
        #expect(index.rank(of: 5) == nil)
        #expect(index.rank(of: RankKey(order: 3, tiebreak: 3)) == 1)
        #expect(index.entries(in: 1...10).isEmpty)
        #expect(index.entries(in: Int.min...Int.max).isEmpty)
        #expect(index.remove(player: 5) == nil)
        #expect(index.key(of: 5) == nil)
        #expect(index.invariantViolation() == nil)
        let emptyBytes = index.allocatedBytes

        let a = RankKey(order: 10, tiebreak: 1), b = RankKey(order: 10, tiebreak: 2), c = RankKey(order: 4, tiebreak: 3)
        #expect(index.set(player: 1, key: a) == nil)
        #expect(index.set(player: 2, key: b) == nil)
        #expect(index.rank(of: 1) == 1 && index.rank(of: 2) == 2)
        #expect(index.set(player: 2, key: c) == b)
        #expect(index.set(player: 2, key: c) == c)
        #expect(index.rank(of: 2) == 1 && index.rank(of: 1) == 2)
        #expect(index.rank(of: RankKey(order: 10, tiebreak: 0)) == 2)
        #expect(index.rank(of: RankKey(order: 10, tiebreak: 2)) == 3)
        #expect(index.allocatedBytes > emptyBytes)
        #expect(index.remove(player: 2) == c)
        #expect(index.remove(player: 1) == a)
        #expect(index.count == 0 && index.root == nil && index.height == 0)
        #expect(index.allocatedBytes == emptyBytes)
        #expect(index.invariantViolation() == nil)
    }

    @Test("a key owned by another player is rejected")
    func duplicateKeyTraps() async {
        await #expect(processExitsWith: .failure) {
            let index = RankIndex()
            index.set(player: 1, key: RankKey(order: 1, tiebreak: 1))
            index.set(player: 2, key: RankKey(order: 1, tiebreak: 1))
        }
        await #expect(processExitsWith: .failure) {
            _ = RankIndex(entries: [(1, RankKey(order: 1, tiebreak: 1)), (1, RankKey(order: 2, tiebreak: 2))])
        }
    }
}

/// Compares two entry lists element by element.
func same(
    _ lhs: [(rank: Int, player: UInt32, key: RankKey)], _ rhs: [(rank: Int, player: UInt32, key: RankKey)]
) -> Bool {
    lhs.count == rhs.count && zip(lhs, rhs).allSatisfy { $0.rank == $1.rank && $0.player == $1.player && $0.key == $1.key }
}
