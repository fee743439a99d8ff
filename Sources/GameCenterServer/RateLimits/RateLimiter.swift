import Foundation
import GameCenterProtocol
import Synchronization

/// Holds one token bucket per limit and subject (a player, a session, a client address) and refuses what is over
/// its ``RateLimits``.
///
/// The table is bounded: past ``capacity`` subjects, buckets that have refilled are dropped (they hold nothing a
/// fresh bucket would not), and if that is not enough, the least recently used ones. Counts are this node's own.
final class RateLimiter: Sendable {
    /// Most buckets kept at once.
    static let capacity = 100_000

    private struct Key: Hashable {
        let name: RateLimits.Name
        let subject: String
    }

    private struct Entry {
        var bucket: TokenBucket
        var lastUsed: Double
    }

    let limits: RateLimits
    private let clock: ServerClock
    private let metrics: ServerMetrics
    private let buckets = Mutex<[Key: Entry]>([:])

    init(limits: RateLimits, metrics: ServerMetrics, clock: ServerClock) {
        self.limits = limits
        self.metrics = metrics
        self.clock = clock
    }

    /// One action counted against a limit: `cost` actions of `name` by `subject`.
    struct Charge {
        let name: RateLimits.Name
        let subject: String
        var cost = 1
    }

    /// Counts `cost` actions of `name` for `subject`, or throws `request.rate_limited` (counting nothing) when they
    /// are over the limit. A cost larger than the whole burst needs a full bucket and empties it.
    func take(_ name: RateLimits.Name, for subject: String, cost: Int = 1) throws(APIError) {
        try take([Charge(name: name, subject: subject, cost: cost)])
    }

    /// Counts every charge, or none: throws `request.rate_limited` for the first one over its limit.
    func take(_ charges: [Charge]) throws(APIError) {
        let active = charges.filter { limits[$0.name].isOn && $0.cost > 0 }
        guard !active.isEmpty else { return }
        let now = clock.now().timeIntervalSince1970
        let refusal: (name: RateLimits.Name, wait: Double)? = buckets.withLock { table in
            var entries: [(Key, Entry)] = []
            for charge in active {
                let limit = limits[charge.name]
                let key = Key(name: charge.name, subject: charge.subject)
                var entry =
                    table[key]
                    ?? Entry(
                        bucket: TokenBucket(rate: Double(limit.count) / limit.periodSeconds, burst: Double(limit.count), now: now), lastUsed: now)
                entry.lastUsed = now
                // Two charges on one bucket take from the same entry.
                if let earlier = entries.lastIndex(where: { $0.0 == key }) { entry = entries[earlier].1 }
                guard entry.bucket.take(Double(charge.cost), now: now) else {
                    return (charge.name, entry.bucket.secondsUntil(Double(charge.cost), now: now))
                }
                entries.append((key, entry))
            }
            for (key, entry) in entries { table[key] = entry }
            if table.count > Self.capacity { Self.shrink(&table, now: now) }
            return nil
        }
        if let refusal {
            metrics.rateLimitRefused(refusal.name)
            throw APIError.rateLimited(refusal.name, limit: limits[refusal.name], retryAfterSeconds: max(1, Int(refusal.wait.rounded(.up))))
        }
    }

    /// Subjects with a bucket now (for tests of the bound).
    var count: Int { buckets.withLock { $0.count } }

    private static func shrink(_ table: inout [Key: Entry], now: Double) {
        table = table.filter { !$0.value.bucket.isFull(now: now) }
        let target = capacity * 9 / 10
        guard table.count > target else { return }
        let oldest = table.sorted { $0.value.lastUsed < $1.value.lastUsed }.prefix(table.count - target).map(\.key)
        for key in oldest { table[key] = nil }
    }
}
