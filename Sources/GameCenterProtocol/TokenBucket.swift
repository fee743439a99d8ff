/// A send-rate limit: `rate` tokens per second, at most `burst` saved up; each message takes one.
///
/// The relay enforces it per member, and the SDK applies the same limit before sending, so a game that sends too
/// fast gets an error from its own call instead of being disconnected by the server.
public struct TokenBucket: Sendable {
    /// Tokens added per second.
    public let rate: Double
    /// Most tokens held at once.
    public let burst: Double
    private var tokens: Double
    private var updatedAt: Double

    /// A full bucket at time `now` (seconds on any monotonic clock).
    public init(rate: Double, burst: Double, now: Double) {
        self.rate = rate
        self.burst = burst
        self.tokens = burst
        self.updatedAt = now
    }

    /// Takes one token if there is one; false when the sender is over the limit.
    public mutating func take(now: Double) -> Bool {
        tokens = min(burst, tokens + max(0, now - updatedAt) * rate)
        updatedAt = max(updatedAt, now)
        guard tokens >= 1 else { return false }
        tokens -= 1
        return true
    }
}
