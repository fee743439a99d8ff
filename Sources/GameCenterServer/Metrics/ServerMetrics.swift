import CoreMetrics
import Prometheus
import Synchronization

/// The server's metrics: swift-metrics instruments with dotted labels (`http.requests`, `leaderboard.reports`),
/// kept in one Prometheus registry per server and exported as Prometheus text by ``MetricsRoutes``.
///
/// Each server has its own registry (in-process tests run several servers at once), so instruments are made with
/// this factory rather than the process-wide `MetricsSystem`. Prometheus names cannot hold dots: `http.requests`
/// is exported as `http_requests`.
final class ServerMetrics: Sendable {
    let registry = PrometheusCollectorRegistry()
    let factory: PrometheusMetricsFactory

    /// Requests answered, by status class (`1xx` … `5xx`), at the class's first digit.
    let httpRequests: [CoreMetrics.Counter]
    /// Scores stored (each score of a batch counts; a replayed report counts none).
    let leaderboardReports: CoreMetrics.Counter
    /// Achievement progress reports stored.
    let achievementReports: CoreMetrics.Counter
    /// Match requests accepted into the queue.
    let matchmakingRequests: CoreMetrics.Counter
    /// Seconds a request waited in the queue before its match started.
    let matchmakingWait: CoreMetrics.Timer
    /// Seconds one pass of a rule-based queue took (``RuleMatcher``).
    let rulePassSeconds: CoreMetrics.Timer
    /// Rule expressions evaluated by rule-based passes.
    let ruleEvaluations: CoreMetrics.Counter
    /// Matches an experiment rule set would have made, run in shadow on its queue's requests.
    let experimentRuleMatches: CoreMetrics.Counter
    /// Several nodes: devices' matchmaking requests this node forwarded to the owner of their game's queue, by
    /// outcome (`answered`, or `unreachable` when the owner did not answer).
    let matchmakingForwarded: (answered: CoreMetrics.Counter, unreachable: CoreMetrics.Counter)
    /// Realtime channels open now.
    let realtimeConnections: CoreMetrics.Meter
    /// Actions refused by a rate limit, by the limit's name (`ratelimit.refused{limit="friend-requests"}`).
    private let rateLimitsRefused: [RateLimits.Name: CoreMetrics.Counter]
    /// Several nodes: seconds from another node publishing a notice (an event, a sign-out) to this node reading it.
    let busLagSeconds: CoreMetrics.Timer
    /// Seconds each SQL statement took, from sending it to its last row (``StatementCounter``).
    let storageStatementSeconds: CoreMetrics.Timer
    /// Seconds a forwarded matchmaking request took at the queue's owner, as the forwarding node saw it.
    let matchmakingForwardSeconds: CoreMetrics.Timer
    /// Seconds to answer a request, by route pattern (`/v1/leaderboards/{category}/scores`, `NotFound`), method and
    /// status class: made on first use, one per route, method and class (a bounded set: the router's routes).
    private let requestDurations = Mutex<[String: CoreMetrics.Timer]>([:])
    /// How long each of the app's page templates took to render, by template name.
    private let pageRenders = Mutex<[String: CoreMetrics.Timer]>([:])
    /// Per rule-based queue and environment (a bounded set: the loaded manifests' queues), made on first use: seconds
    /// each matched request waited (`matchmaking.queue_wait_seconds`), requests waiting after the last pass
    /// (`matchmaking.queue_requests`), and each rule's answers by result (`matchmaking.rule_results`).
    private let queueWaits = Mutex<[String: CoreMetrics.Timer]>([:])
    private let queueSizes = Mutex<[String: CoreMetrics.Meter]>([:])
    private let ruleResults = Mutex<[String: CoreMetrics.Counter]>([:])

    init() {
        var factory = PrometheusMetricsFactory(registry: registry)
        factory.nameAndLabelSanitizer = { name, labels in (name.replacingOccurrences(of: ".", with: "_"), labels) }
        factory.durationHistogramBuckets["matchmaking.rule_pass_seconds"] = [
            .microseconds(100), .milliseconds(1), .milliseconds(5), .milliseconds(20), .milliseconds(50), .milliseconds(200), .seconds(1),
        ]
        factory.durationHistogramBuckets["matchmaking.queue_wait_seconds"] = [
            .milliseconds(100), .milliseconds(500), .seconds(1), .seconds(2), .seconds(5), .seconds(10), .seconds(30), .seconds(60), .seconds(300),
        ]
        factory.durationHistogramBuckets["matchmaking.wait_seconds"] = [
            .milliseconds(100), .milliseconds(500), .seconds(1), .seconds(2), .seconds(5), .seconds(10), .seconds(30), .seconds(60), .seconds(300),
        ]
        self.factory = factory
        httpRequests = ["1xx", "2xx", "3xx", "4xx", "5xx"].map { CoreMetrics.Counter(label: "http.requests", dimensions: [("status", $0)], factory: factory) }
        leaderboardReports = CoreMetrics.Counter(label: "leaderboard.reports", factory: factory)
        achievementReports = CoreMetrics.Counter(label: "achievement.reports", factory: factory)
        matchmakingRequests = CoreMetrics.Counter(label: "matchmaking.requests", factory: factory)
        matchmakingWait = CoreMetrics.Timer(label: "matchmaking.wait_seconds", factory: factory)
        rulePassSeconds = CoreMetrics.Timer(label: "matchmaking.rule_pass_seconds", factory: factory)
        ruleEvaluations = CoreMetrics.Counter(label: "matchmaking.rule_evaluations", factory: factory)
        experimentRuleMatches = CoreMetrics.Counter(label: "matchmaking.experiment_matches", factory: factory)
        matchmakingForwarded = (
            CoreMetrics.Counter(label: "matchmaking.forwarded", dimensions: [("outcome", "answered")], factory: factory),
            CoreMetrics.Counter(label: "matchmaking.forwarded", dimensions: [("outcome", "unreachable")], factory: factory)
        )
        realtimeConnections = CoreMetrics.Meter(label: "realtime.connections", factory: factory)
        matchmakingForwardSeconds = CoreMetrics.Timer(label: "matchmaking.forward_seconds", factory: factory)
        busLagSeconds = CoreMetrics.Timer(label: "cluster.bus_lag_seconds", factory: factory)
        storageStatementSeconds = CoreMetrics.Timer(label: "storage.statement_seconds", factory: factory)
        rateLimitsRefused = Dictionary(
            uniqueKeysWithValues: RateLimits.Name.allCases.map {
                ($0, CoreMetrics.Counter(label: "ratelimit.refused", dimensions: [("limit", $0.rawValue)], factory: factory))
            })
    }

    /// Counts an answered request under its status class.
    func countRequest(status: Int) {
        httpRequests[min(max(status / 100, 1), 5) - 1].increment()
    }

    /// Records how long a request to `route` took to answer.
    func recordRequest(route: String, method: String, status: Int, nanoseconds: Int64) {
        let statusClass = "\(min(max(status / 100, 1), 5))xx"
        let key = "\(route) \(method) \(statusClass)"
        let timer = requestDurations.withLock { timers in
            if let timer = timers[key] { return timer }
            let timer = CoreMetrics.Timer(
                label: "http.request_duration_seconds", dimensions: [("route", route), ("method", method), ("status", statusClass)], factory: factory)
            timers[key] = timer
            return timer
        }
        timer.recordNanoseconds(nanoseconds)
    }

    /// Records how long the app's page `template` took to render (the server's own templates: a bounded set of names).
    func recordPageRender(template: String, nanoseconds: Int64) {
        let timer = pageRenders.withLock { timers in
            if let timer = timers[template] { return timer }
            let timer = CoreMetrics.Timer(label: "webapp.page_render_seconds", dimensions: [("template", template)], factory: factory)
            timers[template] = timer
            return timer
        }
        timer.recordNanoseconds(nanoseconds)
    }

    /// Records a pass of the rule-based queue `queue` in `environment`: how long each request it matched waited (ms),
    /// how many still wait, and what each rule answered (`true`, `false`, `number` or `error`, Apple's per-rule
    /// results).
    func recordRulePass(queue: String, environment: String, matchedWaits: [Int64], stillWaiting: Int, tallies: [String: RuleTally]) {
        let dimensions = [("queue", queue), ("environment", environment)]
        let key = "\(queue)\n\(environment)"
        let wait = queueWaits.withLock { made in
            if let timer = made[key] { return timer }
            let timer = CoreMetrics.Timer(label: "matchmaking.queue_wait_seconds", dimensions: dimensions + [("result", "matched")], factory: factory)
            made[key] = timer
            return timer
        }
        for milliseconds in matchedWaits { wait.recordMilliseconds(milliseconds) }
        let size = queueSizes.withLock { made in
            if let meter = made[key] { return meter }
            let meter = CoreMetrics.Meter(label: "matchmaking.queue_requests", dimensions: dimensions, factory: factory)
            made[key] = meter
            return meter
        }
        size.set(stillWaiting)
        for (rule, tally) in tallies {
            for (result, count) in [("true", tally.trueCount), ("false", tally.falseCount), ("number", tally.numberCount), ("error", tally.errors)]
            where count > 0 {
                let counter = ruleResults.withLock { made in
                    let name = "\(key)\n\(rule)\n\(result)"
                    if let counter = made[name] { return counter }
                    let counter = CoreMetrics.Counter(
                        label: "matchmaking.rule_results", dimensions: dimensions + [("rule", rule), ("result", result)], factory: factory)
                    made[name] = counter
                    return counter
                }
                counter.increment(by: count)
            }
        }
    }

    /// Counts an action a rate limit refused.
    func rateLimitRefused(_ name: RateLimits.Name) {
        rateLimitsRefused[name]?.increment()
    }

    /// Every metric as Prometheus text (exposition format 0.0.4).
    func exposition() -> [UInt8] {
        var buffer: [UInt8] = []
        registry.emit(into: &buffer)
        return buffer
    }
}
