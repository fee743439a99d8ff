@testable import NetworkFaultProxy
import Testing

/// The seeded generator behind every random fault.
struct SplitMix64Tests {
    @Test func matchesTheReferenceSequence() {
        var generator = SplitMix64(seed: 0)
        #expect(generator.next() == 0xE220_A839_7B1D_CDAF)
        #expect(generator.next() == 0x6E78_9E6A_A1B9_65F4)
        #expect(generator.next() == 0x06C4_5D18_8009_454F)
    }

    @Test func chanceHonoursItsBounds() {
        var generator = SplitMix64(seed: 99)
        let draws = (0..<10_000).map { _ in generator.chance(0.25) }
        #expect(!(0..<100).contains { _ in generator.chance(0) })
        #expect((0..<100).allSatisfy { _ in generator.chance(1) })
        let hits = draws.filter { $0 }.count
        #expect((2_000...3_000).contains(hits))
    }
}
