import Foundation

/// What a rule-based queue did during one fifteen-minute bucket, as Apple's queue metrics count it: requests that left
/// the queue by result (seconds in queue; counted in requests and in players), the queue's size at each pass, the
/// matches it made (players in each), each rule's answers, and what the experiment rule set, run in shadow on the same
/// requests, would have matched. Buckets merge (a node's flush into the stored one; quarters into hours and days).
struct QueueMetricsBucket: Sendable, Equatable, Codable {
    /// How a request left the queue.
    enum Result: String, Sendable, Codable, CaseIterable {
        /// Matched with others.
        case matched = "MATCHED"
        /// Cancelled by its player, or its device's realtime channel closed.
        case canceled = "CANCELED"
    }

    /// Requests that left, by result.
    struct Requests: Sendable, Equatable, Codable {
        /// Seconds each request waited.
        var secondsInQueue = QuantileSketch()
        /// The players those requests brought.
        var players: Int64 = 0
    }

    /// A rule's answers during the bucket's passes.
    struct RuleResults: Sendable, Equatable, Codable {
        var trueCount: Int64 = 0
        var falseCount: Int64 = 0
        var numberCount: Int64 = 0
        var numberSum: Double = 0
        var errors: Int64 = 0

        mutating func merge(_ other: RuleResults) {
            trueCount += other.trueCount
            falseCount += other.falseCount
            numberCount += other.numberCount
            numberSum += other.numberSum
            errors += other.errors
        }
    }

    /// Requests that left the queue, by ``Result`` raw value.
    var requests: [String: Requests] = [:]
    /// Requests waiting when each pass began.
    var queueSizes = QuantileSketch()
    /// Players in each match the queue made.
    var matchSizes = QuantileSketch()
    /// Each rule's answers, by rule name.
    var rules: [String: RuleResults] = [:]
    /// Players in each match the experiment rule set would have made (none is made).
    var experimentMatchSizes = QuantileSketch()

    /// A request of `players` players left after `seconds` in the queue.
    mutating func left(_ result: Result, seconds: Double, players: Int) {
        requests[result.rawValue, default: Requests()].secondsInQueue.add(seconds)
        requests[result.rawValue, default: Requests()].players += Int64(players)
    }

    /// Adds `other`'s figures to these.
    mutating func merge(_ other: QueueMetricsBucket) {
        for (result, figures) in other.requests {
            requests[result, default: Requests()].secondsInQueue.merge(figures.secondsInQueue)
            requests[result, default: Requests()].players += figures.players
        }
        queueSizes.merge(other.queueSizes)
        matchSizes.merge(other.matchSizes)
        for (rule, results) in other.rules { rules[rule, default: RuleResults()].merge(results) }
        experimentMatchSizes.merge(other.experimentMatchSizes)
    }

    /// Whether nothing was counted.
    var isEmpty: Bool { self == QueueMetricsBucket() }
}
