@testable import NetworkFaultProxy
import Testing

/// The seed every randomized test draws from, and its override.
struct TestSeedTests {
    @Test func theDefaultHoldsUnlessTheEnvironmentSetsASeed() {
        #expect(TestSeed(default: 42, environment: nil).value == 42)
        #expect(TestSeed(default: 42, environment: "7").value == 7)
        #expect(TestSeed(default: 42, environment: "0x5eed").value == 0x5EED)
        #expect(TestSeed(default: 42, environment: " 0XFFFFFFFFFFFFFFFF ").value == .max)
    }

    @Test func itsDescriptionSaysHowToReplayIt() {
        #expect(TestSeed(default: 0x5EED, environment: nil).description == "seed 0x5EED (replay: OPENGAMEKIT_FUZZ_SEED=0x5EED)")
    }

    @Test func itsGeneratorDrawsTheSeedsSequence() {
        var seeded = TestSeed(default: 99, environment: nil).generator
        var plain = SplitMix64(seed: 99)
        #expect(seeded.next() == plain.next())
    }
}
