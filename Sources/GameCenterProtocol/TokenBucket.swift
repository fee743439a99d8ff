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
        take(1, now: now)
    }

    /// Takes `count` tokens (at most `burst`) if there are that many; false, taking none, when there are not.
    public mutating func take(_ count: Double, now: Double) -> Bool {
        refill(now: now)
        let count = min(count, burst)
        guard tokens >= count else { return false }
        tokens -= count
        return true
    }

    /// Seconds until `count` tokens (at most `burst`) are there, 0 when they are now.
    public func secondsUntil(_ count: Double, now: Double) -> Double {
        let available = min(burst, tokens + max(0, now - updatedAt) * rate)
        return max(0, min(count, burst) - available) / rate
    }

    /// Whether the bucket has refilled completely (it then holds nothing worth keeping).
    public func isFull(now: Double) -> Bool {
        tokens + max(0, now - updatedAt) * rate >= burst
    }

    private mutating func refill(now: Double) {
        tokens = min(burst, tokens + max(0, now - updatedAt) * rate)
        updatedAt = max(updatedAt, now)
    }
}
