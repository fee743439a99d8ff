import Testing
@testable import GameCenterServer
import NetworkFaultProxy

/// Score ↔ order mapping and key ordering.
@Suite struct RankKeyTests {
    /// Values that stress the mapping: extremes, zero, sign boundary neighbours.
    static let edgeValues: [Int64] = [
        .min, .min + 1, -1_000_000_007, -2, -1, 0, 1, 2, 1_000_000_007, .max - 1, .max,
    ]

    @Test("extremes map to the ends of the order range", arguments: [true, false])
    func extremes(higherIsBetter: Bool) {
        let best: Int64 = higherIsBetter ? .max : .min
        let worst: Int64 = higherIsBetter ? .min : .max
        #expect(RankKey.order(value: best, higherIsBetter: higherIsBetter) == 0)
        #expect(RankKey.order(value: worst, higherIsBetter: higherIsBetter) == .max)
        #expect(RankKey.value(order: 0, higherIsBetter: higherIsBetter) == best)
        #expect(RankKey.value(order: .max, higherIsBetter: higherIsBetter) == worst)
    }

    @Test("better scores get strictly smaller orders", arguments: [true, false])
    func monotonic(higherIsBetter: Bool) {
        var generator = SplitMix64(seed: higherIsBetter ? 1 : 2)
        var values = RankKeyTests.edgeValues
        for _ in 0..<2_000 {
            values.append(Int64(bitPattern: generator.next()))
            values.append(Int64.random(in: -300...300, using: &generator))
        }
        values = Array(Set(values)).sorted()
        for (lower, higher) in zip(values, values.dropFirst()) {
            let lowerOrder = RankKey.order(value: lower, higherIsBetter: higherIsBetter)
            let higherOrder = RankKey.order(value: higher, higherIsBetter: higherIsBetter)
            if higherIsBetter {
                #expect(higherOrder < lowerOrder, "\(higher) should sort before \(lower)")
            } else {
                #expect(lowerOrder < higherOrder, "\(lower) should sort before \(higher)")
            }
        }
    }

    @Test("value(order:) inverts order(value:) exactly, both ways", arguments: [true, false])
    func inverse(higherIsBetter: Bool) {
        var generator = SplitMix64(seed: higherIsBetter ? 3 : 4)
        var values = RankKeyTests.edgeValues
        var orders: [UInt64] = [0, 1, 1 << 63 - 1, 1 << 63, 1 << 63 + 1, .max - 1, .max]
        for _ in 0..<2_000 {
            values.append(Int64(bitPattern: generator.next()))
            orders.append(generator.next())
        }
        for value in values {
            let order = RankKey.order(value: value, higherIsBetter: higherIsBetter)
            #expect(RankKey.value(order: order, higherIsBetter: higherIsBetter) == value)
            let key = RankKey(value: value, higherIsBetter: higherIsBetter, tiebreak: 7)
            #expect(key.value(higherIsBetter: higherIsBetter) == value)
        }
        for order in orders {
            let value = RankKey.value(order: order, higherIsBetter: higherIsBetter)
            #expect(RankKey.order(value: value, higherIsBetter: higherIsBetter) == order)
        }
    }

    @Test("keys compare by order, then by tiebreak")
    func comparison() {
        let a = RankKey(order: 5, tiebreak: 9)
        let b = RankKey(order: 5, tiebreak: 10)
        let c = RankKey(order: 6, tiebreak: 0)
        #expect(a < b && b < c && a < c)
        #expect(!(b < a) && !(a < a))
        #expect(RankKey(order: .max, tiebreak: 0) < RankKey(order: .max, tiebreak: .max))
        #expect(RankKey(order: 0, tiebreak: .max) < RankKey(order: 1, tiebreak: 0))
        #expect(a == RankKey(order: 5, tiebreak: 9))
    }
}
