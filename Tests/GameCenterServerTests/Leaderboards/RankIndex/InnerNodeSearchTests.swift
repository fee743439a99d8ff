import Testing
@testable import GameCenterServer
import NetworkFaultProxy

/// The unrolled search of 64-slot internal nodes against the general loop.
@Suite struct InnerNodeSearchTests {
    @Test func unrolledSearchAgreesWithTheLoopForEveryFillAndProbe() {
        let base = UnsafeMutableRawPointer.allocate(byteCount: InnerNode.byteCount(capacity: 64), alignment: 16)
        defer { base.deallocate() }
        let node = InnerNode.initialize(at: base, capacity: 64)
        var generator = SplitMix64(seed: 64)
        for round in 0..<2_000 {
            // Sorted separators in slots 1..<count (with runs of equal orders), unused slots UInt64.max.
            let count = Int(generator.next() % 64) + 1
            let spread = round % 2 == 0 ? UInt64(50) : UInt64.max
            let orders = (1..<count).map { _ in generator.next() % spread }.sorted()
            node.count = 64
            node.count = count
            for (slot, order) in zip(1..., orders) { node.separatorOrders[slot] = order }
            var probes: [UInt64] = [0, 1, .max, .max - 1] + orders + orders.map { $0 &+ 1 } + orders.map { $0 &- 1 }
            probes += (0..<20).map { _ in generator.next() % spread }
            for probe in probes {
                let unrolled = node.separatorsBelow(probe)
                #expect(unrolled == node.separatorsBelowByLoop(probe), "round \(round), probe \(probe)")
                #expect(unrolled == orders.count { $0 < probe }, "round \(round), probe \(probe)")
            }
        }
    }
}
