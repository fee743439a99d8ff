import Foundation
import GameCenterProtocol
import Hummingbird

/// The console's page of one rule-based queue: its rule set and rules, and Apple's queue metrics (``QueueMetrics``:
/// requests matched and cancelled with their seconds in the queue, queue sizes, matches, each rule's answers) over the
/// last 8 hours, 24 hours or 30 days, as a table of the buckets with traffic and three charts; and, given a player id,
/// why that player's request still waits (``MatchmakingService/waitingRequest(playerID:bundleID:environment:)``).
struct ConsoleQueuePage: Sendable {
    let registry: GameRegistry
    let matchmaking: MatchmakingService
    let responder: ConsoleResponder
    let renderer: PageRenderer

    /// The charts a queue page shows: file name, title, and the value each bucket gives.
    static let charts: [(name: String, title: String, value: @Sendable (QueueMetricsDataPoint) -> Double)] = [
        ("matched", "Requests matched", { Double($0.requests[QueueMetricsBucket.Result.matched.rawValue]?.count ?? 0) }),
        ("wait", "Seconds in queue before a match (95th percentile)", { $0.requests[QueueMetricsBucket.Result.matched.rawValue]?.p95SecondsInQueue ?? 0 }),
        ("size", "Requests waiting at each pass (average)", { $0.queueSizes.averageNumberOfRequests }),
    ]

    /// Adds the routes.
    func add(to router: Router<AppRequestContext>) {
        responder.get("console/games/{bundleID}/queues/{queueName}", on: router) { page in try await queuePage(page) }
        responder.get("console/games/{bundleID}/queues/{queueName}/charts/{chart}", on: router) { page in
            let chart = try SVGChart.named(
                try page.context.parameters.require("chart"), among: Self.charts, name: \.name, path: page.request.uri.path)
            let (_, _, series) = try await self.series(page)
            return SVGChart(
                title: chart.title, points: series.dataPoints.map { (Int64($0.start.timeIntervalSince1970 * 1000), chart.value($0)) }
            ).response
        }
    }

    /// The page's game, queue and series, from its path and its `environment` and `granularity` parameters.
    private func series(_ page: ConsoleRequest) async throws -> (Game, MatchmakingQueueDefinition, QueueMetricsSeries) {
        let bundleID = try page.context.parameters.require("bundleID")
        guard let game = registry.game(bundleID: bundleID) else { throw APIError.unknownGame(bundleID) }
        let name = try page.context.parameters.require("queueName")
        guard let queue = game.matchmaking.queues[name] else { throw APIError.unknownQueue(name, known: game.matchmaking.queues.keys.sorted()) }
        let environment = try QueryParameter.choice(
            page.query("environment").map { Substring($0) }, as: Environment.self, name: "environment", default: .sandbox)
        let granularity = try QueryParameter.choice(
            page.query("granularity").map { Substring($0) }, as: QueueMetrics.Granularity.self, name: "granularity", default: .quarterHour)
        let series = try await matchmaking.queueMetrics.series(
            QueueMetrics.Queue(bundleID: game.bundleID, environment: environment.rawValue, queue: name), granularity: granularity,
            now: matchmaking.clock.nowMillis(), from: matchmaking.database)
        return (game, queue, series)
    }

    private func queuePage(_ page: ConsoleRequest) async throws -> Response {
        let (game, queue, series) = try await series(page)
        let player = page.query("player").map { String($0.trimmingCharacters(in: .whitespaces).prefix(Self.playerIDLength)) }
        var waiting: QueuePage.Waiting?
        if let player { waiting = try await whyWaiting(player, game: game, environment: series.environment) }
        let base = "/console/games/\(PageLinks.segment(game.bundleID))/queues/\(PageLinks.segment(queue.referenceName))"
        let query = "environment=\(series.environment)&granularity=\(series.granularity)"
        let ruleSet = game.matchmaking.ruleSets[queue.ruleSet]
        let matched = QueueMetricsBucket.Result.matched.rawValue, canceled = QueueMetricsBucket.Result.canceled.rawValue
        var rules: [String: QueueRuleValues] = [:]
        for point in series.dataPoints {
            for (name, values) in point.rules {
                let sum = rules[name] ?? QueueRuleValues(trueCount: 0, falseCount: 0, numberCount: 0, averageNumber: 0, errorCount: 0)
                let numbers = sum.numberCount + values.numberCount
                rules[name] = QueueRuleValues(
                    trueCount: sum.trueCount + values.trueCount, falseCount: sum.falseCount + values.falseCount, numberCount: numbers,
                    averageNumber: numbers == 0
                        ? 0 : (sum.averageNumber * Double(sum.numberCount) + values.averageNumber * Double(values.numberCount)) / Double(numbers),
                    errorCount: sum.errorCount + values.errorCount)
            }
        }
        let content = QueuePage(
            chrome: ConsoleChrome(queue.referenceName, section: .games, for: page),
            gameLink: "/console/games/\(PageLinks.segment(game.bundleID))?environment=\(series.environment)", gameName: game.name,
            selfLink: base, environment: series.environment, isLive: series.environment == Environment.live.rawValue,
            granularities: QueueMetrics.Granularity.allCases.map { granularity in
                ConsoleTab(
                    link: "\(base)?environment=\(series.environment)&granularity=\(granularity.rawValue)", title: Self.window(granularity),
                    current: granularity.rawValue == series.granularity)
            },
            ruleSet: queue.ruleSet, experiment: queue.experimentRuleSet,
            classicBundleIDs: queue.classicMatchmakingBundleIds.isEmpty ? nil : queue.classicMatchmakingBundleIds.joined(separator: ", "),
            players: ruleSet.map {
                "\($0.minPlayers) to \($0.maxPlayers) players" + ($0.teams.isEmpty ? "" : " in teams \($0.teams.map(\.name).joined(separator: ", "))")
            }
                ?? "",
            rules: (ruleSet?.rules ?? []).map { rule in
                let values = rules[rule.referenceName]
                return QueuePage.Rule(
                    name: rule.referenceName, type: rule.type.rawValue, expression: rule.expression.source,
                    trueCount: values?.trueCount ?? 0, falseCount: values?.falseCount ?? 0, numberCount: values?.numberCount ?? 0,
                    average: SVGChart.number(values?.averageNumber ?? 0), errors: values?.errorCount ?? 0)
            },
            buckets: series.dataPoints.reversed().filter { !$0.requests.isEmpty || $0.queueSizes.count > 0 }.map { point in
                QueuePage.Bucket(
                    start: PageDates.minute(point.start).replacingOccurrences(of: " UTC", with: ""), matched: point.requests[matched]?.count ?? 0,
                    players: point.requests[matched]?.playerCount ?? 0, canceled: point.requests[canceled]?.count ?? 0,
                    p50: SVGChart.number(point.requests[matched]?.p50SecondsInQueue ?? 0),
                    p95: SVGChart.number(point.requests[matched]?.p95SecondsInQueue ?? 0),
                    size: SVGChart.number(point.queueSizes.averageNumberOfRequests), sessions: point.sessions.count,
                    experiment: point.experimentSessions.count)
            },
            charts: Self.charts.map { QueuePage.Chart(src: "\(base)/charts/\($0.name).svg?\(query)", title: $0.title) },
            granularity: series.granularity, player: player ?? "", waiting: waiting)
        return renderer.render("console-queue", content)
    }

    /// The longest player id the page's form takes.
    static let playerIDLength = 64

    /// Why `playerID` still waits in the game's queues (answered by the queue's node), or what they wait with
    /// otherwise.
    private func whyWaiting(_ playerID: String, game: Game, environment: String) async throws -> QueuePage.Waiting {
        let status: MatchRequestStatus
        do {
            status = try await matchmaking.waitingRequest(playerID: playerID, bundleID: game.bundleID, environment: environment)
        } catch let error as APIError where error.code == .matchmakingNoSuchRequest {
            return QueuePage.Waiting(summary: "\(playerID) waits with no match request in this game's queues (\(environment)).")
        }
        guard status.state == .waiting else {
            return QueuePage.Waiting(summary: "\(playerID)'s request \(status.requestID) was just matched\(status.matchID.map { " (match \($0))" } ?? "").")
        }
        let party = status.players > 1 ? " with \(status.players) players" : ""
        guard let why = status.explanation else {
            return QueuePage.Waiting(
                summary:
                    "\(playerID) waits\(party) with request \(status.requestID) in classic matchmaking (for \(status.maxPlayers) players): no rules to explain."
            )
        }
        let estimate =
            why.estimatedWaitSeconds.map { "the queue's median wait is \(SVGChart.number($0)) s (\(why.estimateSamples) matched in 15 minutes)" }
            ?? "not enough data for a wait estimate (\(why.estimateSamples) matched in 15 minutes, 5 needed)"
        let others =
            why.waiting == 0 ? "no other request waits in its queue" : "\(why.compatible) of the \(why.waiting) other waiting requests may play with it"
        return QueuePage.Waiting(
            summary: "\(playerID) waits\(party) with request \(status.requestID) for \(why.secondsInQueue) s; \(others); \(estimate).",
            blocking: why.blockingRules.isEmpty ? nil : why.blockingRules.joined(separator: ", "),
            stages: why.stages.map {
                QueuePage.Stage(
                    name: $0.name, type: $0.type, tried: $0.tried, passed: $0.passed, nearest: $0.nearestDistance.map { SVGChart.number($0) } ?? "")
            },
            expansions: why.expansions.map {
                QueuePage.Expansion(
                    rule: $0.rule, expression: $0.expression, seconds: SVGChart.number($0.seconds), step: "\($0.step) of \($0.steps)",
                    value: SVGChart.number($0.value))
            })
    }

    private static func window(_ granularity: QueueMetrics.Granularity) -> String {
        switch granularity {
        case .quarterHour: "8 hours by 15 minutes"
        case .hour: "24 hours by hour"
        case .day: "30 days by day"
        }
    }
}

/// A queue page's content.
struct QueuePage {
    /// One rule and its answers over the window.
    struct Rule {
        let name: String, type: String, expression: String
        let trueCount: Int64, falseCount: Int64, numberCount: Int64
        let average: String
        let errors: Int64
    }

    /// One bucket with traffic, newest first.
    struct Bucket {
        let start: String
        let matched: Int64, players: Int64, canceled: Int64
        let p50: String, p95: String, size: String
        let sessions: Int64, experiment: Int64
    }

    /// One chart.
    struct Chart {
        let src: String, title: String
    }

    /// What the player asked about waits with, and why it still waits.
    struct Waiting {
        var summary: String
        /// The rules that turned away the most other requests, listed; nil for none.
        var blocking: String? = nil
        var stages: [Stage] = []
        var expansions: [Expansion] = []
    }

    /// One stage of the rules for the player's request.
    struct Stage {
        let name: String, type: String
        let tried: Int, passed: Int
        let nearest: String
    }

    /// Where one aged value stands for the player's request.
    struct Expansion {
        let rule: String, expression: String, seconds: String, step: String, value: String
    }

    let chrome: ConsoleChrome
    let gameLink: String, gameName: String, selfLink: String, environment: String
    let isLive: Bool
    let granularities: [ConsoleTab]
    let ruleSet: String
    let experiment: String?
    /// The bundle ids whose classic requests wait here too, listed; nil for none.
    let classicBundleIDs: String?
    let players: String
    let rules: [Rule]
    let buckets: [Bucket]
    let charts: [Chart]
    /// The window shown, kept by the player form.
    let granularity: String
    /// The player id asked about (empty: none).
    let player: String
    let waiting: Waiting?
}
