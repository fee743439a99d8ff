/// A small seeded random number generator (SplitMix64), so a failing run of a proxy or a random test can be repeated
/// with its seed. The one definition: every test target (and the benchmarks) uses this one.
///
/// Not cryptographically secure; the same seed always yields the same sequence.
public struct SplitMix64: RandomNumberGenerator, Sendable {
    /// The generator's whole state; advanced by a fixed odd constant on every draw.
    private var state: UInt64

    /// Creates a generator whose sequence is fully determined by `seed`.
    public init(seed: UInt64) {
        state = seed
    }

    /// Returns the next 64 random bits.
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// Returns true with probability `probability` (values outside 0…1 are clamped).
    mutating func chance(_ probability: Double) -> Bool {
        if probability <= 0 { return false }
        if probability >= 1 { return true }
        return Double.random(in: 0..<1, using: &self) < probability
    }
}
