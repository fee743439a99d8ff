import Foundation

/// A mergeable summary of non-negative values (seconds in a queue, requests waiting, players in a match) whose
/// quantiles are exact to within 1 % of the value: each value counts in a logarithmic bucket (a DDSketch with relative
/// accuracy ``accuracy``), values at or below ``floor`` in a bucket of their own. Buckets of several sketches add up,
/// so fifteen-minute sketches merge into hours and days without keeping a value.
struct QuantileSketch: Sendable, Equatable, Codable {
    /// The largest relative error of a quantile (on values above ``floor``).
    static let accuracy = 0.01
    /// Values at or below this count as zero (a millisecond, in seconds).
    static let floor = 0.001
    private static let gamma = (1 + accuracy) / (1 - accuracy)
    private static let logGamma = log(gamma)

    /// Values counted.
    private(set) var count: Int64 = 0
    /// Their sum, for the average.
    private(set) var sum: Double = 0
    /// Values at or below ``floor``.
    private(set) var zeros: Int64 = 0
    /// Values above ``floor``, by bucket index: bucket `i` holds values in (γ^(i-1), γ^i].
    private(set) var buckets: [Int: Int64] = [:]

    /// Counts `value` (negative values count as zero).
    mutating func add(_ value: Double) {
        count += 1
        sum += max(0, value)
        if value <= Self.floor {
            zeros += 1
        } else {
            buckets[Int((log(value) / Self.logGamma).rounded(.up)), default: 0] += 1
        }
    }

    /// Adds `other`'s values to these.
    mutating func merge(_ other: QuantileSketch) {
        count += other.count
        sum += other.sum
        zeros += other.zeros
        buckets.merge(other.buckets, uniquingKeysWith: +)
    }

    /// The average of the values (0 when none).
    var average: Double { count == 0 ? 0 : sum / Double(count) }

    /// The value at quantile `q` (0…1) by nearest rank: the smallest value with at least `q` of the values at or below
    /// it, within ``accuracy`` of it (0 when none).
    func quantile(_ q: Double) -> Double {
        guard count > 0 else { return 0 }
        let rank = max(1, Int64((q * Double(count)).rounded(.up)))
        if rank <= zeros { return 0 }
        var seen = zeros
        for index in buckets.keys.sorted() {
            seen += buckets[index]!
            if seen >= rank { return 2 * pow(Self.gamma, Double(index)) / (Self.gamma + 1) }
        }
        return 0
    }
}
