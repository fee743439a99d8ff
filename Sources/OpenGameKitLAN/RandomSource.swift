/// A type-erased, sendable random number generator, so state machines can take any injected source.
public struct RandomSource: RandomNumberGenerator, Sendable {
    private var base: any RandomNumberGenerator & Sendable

    /// Wraps `base`; every random value the owner needs is drawn from it.
    public init(_ base: some RandomNumberGenerator & Sendable) {
        self.base = base
    }

    /// A source backed by the system's cryptographically secure generator.
    public static var system: RandomSource { RandomSource(SystemRandomNumberGenerator()) }

    /// Returns the next 64 random bits from the wrapped generator.
    public mutating func next() -> UInt64 {
        base.next()
    }

    /// A random duration in `range` milliseconds.
    mutating func milliseconds(_ range: ClosedRange<Int>) -> Duration {
        .milliseconds(Int.random(in: range, using: &self))
    }
}
