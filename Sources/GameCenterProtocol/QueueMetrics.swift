import Foundation

/// `GET /admin/v1/games/{bundleID}/matchmaking/queues/{queueName}/metrics`: what a rule-based queue did, bucket by
/// bucket, with the figures of Apple's queue metrics (requests by result with their seconds in queue, queue sizes,
/// sessions, rule results) and the experiment rule set's shadow matches.
public struct QueueMetricsSeries: Codable, Sendable, Equatable {
    public var queueName: String
    public var environment: String
    /// `PT15M` (the last 8 hours), `PT1H` (the last 24 hours) or `P1D` (the last 30 days).
    public var granularity: String
    /// Oldest first, every bucket of the window (empty ones with zeros).
    public var dataPoints: [QueueMetricsDataPoint]

    public init(queueName: String, environment: String, granularity: String, dataPoints: [QueueMetricsDataPoint]) {
        self.queueName = queueName
        self.environment = environment
        self.granularity = granularity
        self.dataPoints = dataPoints
    }
}

/// One bucket of ``QueueMetricsSeries``.
public struct QueueMetricsDataPoint: Codable, Sendable, Equatable {
    public var start: Date
    public var end: Date
    /// Requests that left the queue in the bucket, by result (`MATCHED`, `CANCELED`).
    public var requests: [String: QueueRequestValues]
    /// Requests waiting when each of the bucket's matching passes began.
    public var queueSizes: QueueSizeValues
    /// Matches made (Apple's sessions), by their players.
    public var sessions: QueueSessionValues
    /// Each rule's answers, by rule name.
    public var rules: [String: QueueRuleValues]
    /// Matches the queue's experiment rule set would have made on the same requests (none is made).
    public var experimentSessions: QueueSessionValues

    public init(
        start: Date, end: Date, requests: [String: QueueRequestValues], queueSizes: QueueSizeValues, sessions: QueueSessionValues,
        rules: [String: QueueRuleValues], experimentSessions: QueueSessionValues
    ) {
        self.start = start
        self.end = end
        self.requests = requests
        self.queueSizes = queueSizes
        self.sessions = sessions
        self.rules = rules
        self.experimentSessions = experimentSessions
    }
}

/// Requests that left a queue with one result: how many (requests and players) and their seconds in the queue
/// (quantiles within 1 %).
public struct QueueRequestValues: Codable, Sendable, Equatable {
    public var count: Int64
    public var playerCount: Int64
    public var averageSecondsInQueue: Double
    public var p50SecondsInQueue: Double
    public var p95SecondsInQueue: Double

    public init(count: Int64, playerCount: Int64, averageSecondsInQueue: Double, p50SecondsInQueue: Double, p95SecondsInQueue: Double) {
        self.count = count
        self.playerCount = playerCount
        self.averageSecondsInQueue = averageSecondsInQueue
        self.p50SecondsInQueue = p50SecondsInQueue
        self.p95SecondsInQueue = p95SecondsInQueue
    }
}

/// A queue's size, sampled at each matching pass.
public struct QueueSizeValues: Codable, Sendable, Equatable {
    /// Passes sampled.
    public var count: Int64
    public var averageNumberOfRequests: Double
    public var p50NumberOfRequests: Double
    public var p95NumberOfRequests: Double

    public init(count: Int64, averageNumberOfRequests: Double, p50NumberOfRequests: Double, p95NumberOfRequests: Double) {
        self.count = count
        self.averageNumberOfRequests = averageNumberOfRequests
        self.p50NumberOfRequests = p50NumberOfRequests
        self.p95NumberOfRequests = p95NumberOfRequests
    }
}

/// Matches made, by their players.
public struct QueueSessionValues: Codable, Sendable, Equatable {
    public var count: Int64
    public var averagePlayerCount: Double
    public var p50PlayerCount: Double
    public var p95PlayerCount: Double

    public init(count: Int64, averagePlayerCount: Double, p50PlayerCount: Double, p95PlayerCount: Double) {
        self.count = count
        self.averagePlayerCount = averagePlayerCount
        self.p50PlayerCount = p50PlayerCount
        self.p95PlayerCount = p95PlayerCount
    }
}

/// What one rule answered: true and false (COMPATIBLE, MATCH, TEAM rules), numbers (DISTANCE rules) and errors.
public struct QueueRuleValues: Codable, Sendable, Equatable {
    public var trueCount: Int64
    public var falseCount: Int64
    public var numberCount: Int64
    /// The average of the numbers (0 when none).
    public var averageNumber: Double
    public var errorCount: Int64

    public init(trueCount: Int64, falseCount: Int64, numberCount: Int64, averageNumber: Double, errorCount: Int64) {
        self.trueCount = trueCount
        self.falseCount = falseCount
        self.numberCount = numberCount
        self.averageNumber = averageNumber
        self.errorCount = errorCount
    }
}
