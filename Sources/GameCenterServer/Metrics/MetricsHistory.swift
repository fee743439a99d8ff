import DequeModule

/// The last hours of a few of the server's own metrics, one sample a minute, for the studio console's charts: a
/// bounded ring (the oldest sample goes when a new one would pass ``capacity``), fed by ``MetricsSampler`` with
/// readings of the Prometheus text the server exports. A value type: its tests feed it text and times.
struct MetricsHistory: Sendable {
    /// A charted series: which exported metric it reads, and whether it charts the metric's growth per sample (a
    /// counter) or its value (a gauge).
    struct Series: Sendable, Equatable {
        /// The key the console's chart addresses name (`/console/live/charts/KEY.svg`).
        let key: String
        /// What the chart shows, for its title and its text alternative.
        let title: String
        /// The exported metric's name; samples of every label set are added up.
        let metric: String
        /// The growth since the previous sample (a counter) rather than the value (a gauge).
        let isCounter: Bool
    }

    /// One sample: when, and each series' value by key.
    struct Sample: Sendable, Equatable {
        let millis: Int64
        let values: [String: Double]
    }

    /// What the console charts.
    static let charted = [
        Series(key: "requests", title: "HTTP requests answered", metric: "http_requests", isCounter: true),
        Series(key: "realtime", title: "Realtime channels open", metric: "realtime_connections", isCounter: false),
        Series(key: "scores", title: "Scores stored", metric: "leaderboard_reports", isCounter: true),
        Series(key: "matchmaking", title: "Match requests", metric: "matchmaking_requests", isCounter: true),
        Series(key: "relay", title: "Relay messages forwarded", metric: "relay_forwarded", isCounter: true),
        Series(key: "refusals", title: "Rate-limit refusals", metric: "ratelimit_refused", isCounter: true),
    ]

    /// Samples kept: six hours at one a minute.
    let capacity: Int
    private(set) var samples: Deque<Sample> = []
    /// The counters' totals at the previous reading.
    private var previous: [String: Double]?

    init(capacity: Int = 360) {
        self.capacity = capacity
    }

    /// Records a reading of the exported metrics (Prometheus text) taken at `millis`. The first reading only sets
    /// where the counters stand; a counter that went down (the process restarted its metrics) charts its value.
    mutating func record(exposition text: String, at millis: Int64) {
        let totals = Self.totals(text, of: Set(Self.charted.map(\.metric)))
        defer { previous = totals }
        guard let previous else { return }
        var values: [String: Double] = [:]
        for series in Self.charted {
            let now = totals[series.metric] ?? 0
            values[series.key] = series.isCounter ? (now >= (previous[series.metric] ?? 0) ? now - (previous[series.metric] ?? 0) : now) : now
        }
        samples.append(Sample(millis: millis, values: values))
        while samples.count > capacity { samples.removeFirst() }
    }

    /// The sum of each of `metrics`' samples over every label set, read from Prometheus text (comment lines and
    /// other metrics skipped, as are histograms' `_bucket`, `_sum` and `_count` lines).
    static func totals(_ text: String, of metrics: Set<String>) -> [String: Double] {
        var totals: [String: Double] = [:]
        for line in text.split(separator: "\n") where !line.hasPrefix("#") {
            let name = line.prefix { $0 != "{" && $0 != " " }
            guard metrics.contains(String(name)), let value = line.split(separator: " ").last.flatMap({ Double($0) }) else { continue }
            totals[String(name), default: 0] += value
        }
        return totals
    }
}
