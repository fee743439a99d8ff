import Foundation
import GameCenterProtocol
import GameCenterStorage
import Synchronization

/// Each rule-based queue's metrics in fifteen-minute buckets on the server's clock: counted in memory by the node that
/// runs the queue's passes, merged into the database at most every ``flushInterval`` (``flush(into:)``), kept
/// ``keptMillis``, and read back at Apple's granularities (``series(_:granularity:now:from:)``),
/// the buckets not yet flushed included.
final class QueueMetrics: Sendable {
    /// A queue of one game and environment.
    struct Queue: Hashable, Sendable {
        var bundleID: String
        var environment: String
        var queue: String

        init(bundleID: String, environment: String, queue: String) {
            self.bundleID = bundleID
            self.environment = environment
            self.queue = queue
        }

        /// The queue the matchmaker keys `key` (its game key is the bundle id and the environment).
        init(_ key: RuleQueues.Key) {
            let parts = key.game.split(separator: "\n", omittingEmptySubsequences: false)
            self.init(bundleID: String(parts.first ?? ""), environment: MatchmakingService.environment(ofGameKey: key.game), queue: key.queue)
        }
    }

    /// Apple's granularities: the bucket each data point spans and how many points a series has.
    enum Granularity: String, Sendable, CaseIterable {
        case quarterHour = "PT15M"
        case hour = "PT1H"
        case day = "P1D"

        var millis: Int64 {
            switch self {
            case .quarterHour: QueueMetrics.bucketMillis
            case .hour: 3_600_000
            case .day: 86_400_000
            }
        }

        /// The last 8 hours, 24 hours, 30 days.
        var points: Int {
            switch self {
            case .quarterHour: 32
            case .hour: 24
            case .day: 30
            }
        }
    }

    static let bucketMillis: Int64 = 15 * 60_000
    /// How long buckets are kept.
    static let keptMillis: Int64 = 30 * 86_400_000
    /// How often the matchmaker flushes.
    static let flushInterval = Duration.seconds(15)

    private struct Slot: Hashable {
        var queue: Queue
        var start: Int64
    }

    private let pending = Mutex<[Slot: QueueMetricsBucket]>([:])

    /// The bucket that holds `millis`.
    static func bucketStart(_ millis: Int64) -> Int64 { millis - ((millis % bucketMillis) + bucketMillis) % bucketMillis }

    /// Counts into `queue`'s bucket of `millis`.
    func record(_ queue: Queue, at millis: Int64, _ change: (inout QueueMetricsBucket) -> Void) {
        pending.withLock { change(&$0[Slot(queue: queue, start: Self.bucketStart(millis)), default: QueueMetricsBucket()]) }
    }

    /// Counts requests that left their queues; those taken out (no `leftAt`) left at `now`.
    func count(_ departures: [RuleQueues.Departure], now: Int64) {
        for departure in departures {
            let left = departure.leftAt ?? now
            record(Queue(departure.key), at: left) { bucket in
                bucket.left(departure.result, seconds: Double(max(0, left - departure.arrival)) / 1000, players: departure.players)
            }
        }
    }

    /// Merges what was counted since the last flush into the stored buckets, and forgets buckets older than
    /// ``keptMillis`` before `now`. What could not be stored is counted again at the next flush.
    func flush(into database: Database, now: Int64) async throws {
        let taken = pending.withLock { pending in
            defer { pending = [:] }
            return pending
        }
        guard !taken.isEmpty else { return }
        do {
            try await database.write { storage in
                for (slot, bucket) in taken where !bucket.isEmpty {
                    try await storage.mergeQueueMetrics(
                        bundleID: slot.queue.bundleID, environment: slot.queue.environment, queue: slot.queue.queue, start: slot.start
                    ) { stored in
                        var merged = try stored.map { try JSONDecoder().decode(QueueMetricsBucket.self, from: Data($0.utf8)) } ?? QueueMetricsBucket()
                        merged.merge(bucket)
                        return String(decoding: try JSONEncoder().encode(merged), as: UTF8.self)
                    }
                }
                try await storage.deleteQueueMetrics(before: now - Self.keptMillis)
            }
        } catch {
            pending.withLock { pending in pending.merge(taken) { later, earlier in Self.merged(earlier, later) } }
            throw error
        }
    }

    private static func merged(_ first: QueueMetricsBucket, _ second: QueueMetricsBucket) -> QueueMetricsBucket {
        var merged = first
        merged.merge(second)
        return merged
    }

    /// `queue`'s series at `granularity` ending with the bucket that holds `now`: the stored buckets (`database`) and
    /// this node's not yet flushed ones.
    func series(_ queue: Queue, granularity: Granularity, now: Int64, from database: Database) async throws -> QueueMetricsSeries {
        let step = granularity.millis
        let last = now - ((now % step) + step) % step
        let first = last - Int64(granularity.points - 1) * step
        let rows = try await database.read { storage in
            try await storage.queueMetrics(bundleID: queue.bundleID, environment: queue.environment, queue: queue.queue, from: first, to: last + step)
        }
        var points = [QueueMetricsBucket](repeating: QueueMetricsBucket(), count: granularity.points)
        for row in rows {
            points[Int((row.start - first) / step)].merge(try JSONDecoder().decode(QueueMetricsBucket.self, from: Data(row.figures.utf8)))
        }
        for (slot, bucket) in pending.withLock({ $0 }) where slot.queue == queue && slot.start >= first && slot.start < last + step {
            points[Int((slot.start - first) / step)].merge(bucket)
        }
        return QueueMetricsSeries(
            queueName: queue.queue, environment: queue.environment, granularity: granularity.rawValue,
            dataPoints: points.enumerated().map { index, bucket in
                let start = first + Int64(index) * step
                return Self.dataPoint(bucket, start: start, end: start + step)
            })
    }

    private static func dataPoint(_ bucket: QueueMetricsBucket, start: Int64, end: Int64) -> QueueMetricsDataPoint {
        func sessions(_ sketch: QuantileSketch) -> QueueSessionValues {
            QueueSessionValues(
                count: sketch.count, averagePlayerCount: sketch.average, p50PlayerCount: sketch.quantile(0.5), p95PlayerCount: sketch.quantile(0.95))
        }
        return QueueMetricsDataPoint(
            start: StoredTime.date(start), end: StoredTime.date(end),
            requests: bucket.requests.mapValues { figures in
                QueueRequestValues(
                    count: figures.secondsInQueue.count, playerCount: figures.players, averageSecondsInQueue: figures.secondsInQueue.average,
                    p50SecondsInQueue: figures.secondsInQueue.quantile(0.5), p95SecondsInQueue: figures.secondsInQueue.quantile(0.95))
            },
            queueSizes: QueueSizeValues(
                count: bucket.queueSizes.count, averageNumberOfRequests: bucket.queueSizes.average,
                p50NumberOfRequests: bucket.queueSizes.quantile(0.5), p95NumberOfRequests: bucket.queueSizes.quantile(0.95)),
            sessions: sessions(bucket.matchSizes),
            rules: bucket.rules.mapValues { results in
                QueueRuleValues(
                    trueCount: results.trueCount, falseCount: results.falseCount, numberCount: results.numberCount,
                    averageNumber: results.numberCount == 0 ? 0 : results.numberSum / Double(results.numberCount), errorCount: results.errors)
            },
            experimentSessions: sessions(bucket.experimentMatchSizes))
    }
}
