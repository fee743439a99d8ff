import Foundation
import GameCenterProtocol
import GameCenterStorage
import Hummingbird

/// The console's live page: the nodes on the database, their health and what each serves, this node's realtime channels,
/// matchmaking queues (waiting players and how long they have waited), relay matches and their traffic, rate-limit
/// refusals, and charts of the last hours drawn from the server's own metrics (``MetricsSampler``).
struct ConsoleLivePage: Sendable {
    /// A node not seen for this long is shown as not answering.
    static let silentAfterMillis: Int64 = 6_000

    let database: Database
    let registry: GameRegistry
    let nodeID: String
    let matchmaking: MatchmakingService
    let relay: RelayService
    let metricsRoutes: MetricsRoutes
    let sampler: MetricsSampler
    let clock: ServerClock
    let responder: ConsoleResponder
    let renderer: PageRenderer

    /// Adds the routes.
    func add(to router: Router<AppRequestContext>) {
        responder.get("console/live", on: router) { page in try await livePage(page) }
        responder.get("console/live/charts/{chart}", on: router) { page in
            let series = try SVGChart.named(
                try page.context.parameters.require("chart"), among: MetricsHistory.charted, name: \.key, path: page.request.uri.path)
            return SVGChart(title: series.title, points: sampler.samples.map { ($0.millis, $0.values[series.key] ?? 0) }).response
        }
    }

    private func livePage(_ page: ConsoleRequest) async throws -> Response {
        let now = clock.wallMillis()
        let nodes = try await database.read { try await $0.nodes() }
        let exported = String(decoding: metricsRoutes.scrape(), as: UTF8.self)
        let names = Dictionary(registry.all.map { ($0.bundleID, $0.name) }) { a, _ in a }
        let (channels, waiting) = matchmaking.nodeCounts()
        let here = NodeFigures(realtimeConnections: channels, waitingRequests: waiting, relayedMatches: relay.openMatches().count)
        let content = LivePage(
            chrome: ConsoleChrome("Live", section: .live, for: page),
            nodes: nodes.map { node in
                let silent = now - node.lastSeen > Self.silentAfterMillis
                let figures = node.nodeID == nodeID ? here : NodeRegistry.figures(of: node)
                return LivePage.Node(
                    id: node.nodeID, this: node.nodeID == nodeID, health: silent ? "not answering" : "healthy", healthy: !silent,
                    http: node.httpAddress, udp: node.udpAddress, started: PageDates.minute(StoredTime.date(node.startedAt)),
                    lastSeen: "\(max(now - node.lastSeen, 0) / 1000) s ago", devices: figures.map { "\($0.realtimeConnections)" } ?? "–",
                    waiting: figures.map { "\($0.waitingRequests)" } ?? "–", relayed: figures.map { "\($0.relayedMatches)" } ?? "–")
            },
            realtime: Int(MetricsHistory.totals(exported, of: ["realtime_connections"])["realtime_connections"] ?? 0),
            queues: matchmaking.waitingRequests().map { queue in
                LivePage.Queue(
                    game: names[queue.bundleID] ?? queue.bundleID, environment: queue.environment, waiting: queue.waits.count,
                    median: Self.seconds(Self.percentile(queue.waits, 0.5)), p90: Self.seconds(Self.percentile(queue.waits, 0.9)),
                    longest: Self.seconds(queue.waits.last ?? 0))
            },
            matches: relay.openMatches().map {
                LivePage.Match(id: $0.matchID, members: $0.members, connected: $0.connected, accepted: Int($0.accepted), waiting: $0.waiting)
            },
            refusals: Self.refusals(exported),
            charts: MetricsHistory.charted.map { LivePage.Chart(src: "/console/live/charts/\($0.key).svg", title: $0.title) },
            sampleEvery: Self.every(sampler.interval), samples: sampler.samples.count)
        return renderer.render("console-live", content)
    }

    /// The value at `fraction` of sorted `values` (nearest rank); 0 for none.
    static func percentile(_ values: [Int64], _ fraction: Double) -> Int64 {
        guard !values.isEmpty else { return 0 }
        return values[min(values.count - 1, max(0, Int((fraction * Double(values.count)).rounded(.up)) - 1))]
    }

    private static func every(_ interval: Duration) -> String {
        let seconds = interval.components.seconds
        return seconds >= 60 && seconds % 60 == 0 ? "\(seconds / 60) min" : "\(seconds) s"
    }

    private static func seconds(_ millis: Int64) -> String {
        "\(SVGChart.number(Double(millis) / 1000)) s"
    }

    /// Rate-limit refusals since the node started, by limit, from the exported `ratelimit_refused{limit="…"}`.
    static func refusals(_ exported: String) -> [LivePage.Line] {
        exported.split(separator: "\n").compactMap { line -> LivePage.Line? in
            guard line.hasPrefix("ratelimit_refused{limit=\""), let end = line.firstIndex(of: "}") else { return nil }
            let limit = line[line.index(line.startIndex, offsetBy: 25)..<end].dropLast()
            guard let value = line.split(separator: " ").last.flatMap({ Double($0) }), value > 0 else { return nil }
            return LivePage.Line(title: String(limit), detail: SVGChart.number(value))
        }
    }
}

/// The live page's content.
struct LivePage {
    /// A labelled value.
    struct Line {
        let title: String, detail: String
    }

    /// A node on the database.
    struct Node {
        let id: String
        /// Whether it is the node serving this page.
        let this: Bool
        let health: String
        let healthy: Bool
        let http: String, udp: String, started: String, lastSeen: String
        /// What it serves (``NodeFigures``); a dash before its first heartbeat.
        let devices: String, waiting: String, relayed: String
    }

    /// One game's queue on this node.
    struct Queue {
        let game: String, environment: String
        let waiting: Int
        let median: String, p90: String, longest: String
    }

    /// One relayed match.
    struct Match {
        let id: String
        let members: Int, connected: Int, accepted: Int, waiting: Int
    }

    /// One chart.
    struct Chart {
        let src: String, title: String
    }

    let chrome: ConsoleChrome
    let nodes: [Node]
    /// Realtime channels open on this node.
    let realtime: Int
    let queues: [Queue]
    let matches: [Match]
    let refusals: [Line]
    let charts: [Chart]
    /// How often a sample is taken, in words.
    let sampleEvery: String
    let samples: Int
}
