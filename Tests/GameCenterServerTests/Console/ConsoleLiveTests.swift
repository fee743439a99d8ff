import Foundation
import GameCenterProtocol
import GameCenterStorage
import HTTPTypes
import Testing
@testable import GameCenterServer

/// The console's live page and the sampled metrics its charts draw.
@Suite struct ConsoleLiveTests {
    @Test func theLivePageShowsNodesQueuesAndChartsOfTheSampledMetrics() async throws {
        try await TestServer.run { server in
            var browser = try await ConsoleTesting.signIn(server, role: .readOnly)
            server.services.metricsSampler.sample()
            _ = try await browser.get("/console/players")
            server.services.metricsSampler.sample()
            let live = try await browser.get("/console/live")
            #expect(live.status == .ok && live.html.contains(server.services.nodes.nodeID) && live.html.contains("healthy"))
            #expect(live.html.contains(#"<img src="/console/live/charts/requests.svg""#))
            let chart = try await browser.get("/console/live/charts/requests.svg")
            #expect(chart.status == .ok && chart.headers[.contentType] == "image/svg+xml")
            #expect(chart.html.contains("<polyline") && chart.html.contains("<title>HTTP requests answered</title>"))
            #expect(try await browser.get("/console/live/charts/nope.svg").status == .notFound)
        }
    }

    @Test func theMetricsHistoryChartsCounterGrowthAndKeepsItsCapacity() {
        var history = MetricsHistory(capacity: 3)
        let text = { (requests: Int, channels: Int) in
            "# TYPE http_requests counter\nhttp_requests{status=\"2xx\"} \(requests)\nhttp_requests{status=\"4xx\"} 1\n"
                + "# TYPE realtime_connections gauge\nrealtime_connections \(channels)\n"
        }
        history.record(exposition: text(10, 2), at: 0)
        #expect(history.samples.isEmpty, "the first reading only sets where the counters stand")
        history.record(exposition: text(15, 3), at: 60_000)
        #expect(history.samples.last?.values["requests"] == 5 && history.samples.last?.values["realtime"] == 3)
        history.record(exposition: text(4, 0), at: 120_000)
        #expect(history.samples.last?.values["requests"] == 5, "a counter that went down restarted: its value is charted")
        history.record(exposition: text(6, 0), at: 180_000)
        history.record(exposition: text(9, 0), at: 240_000)
        #expect(history.samples.map(\.millis) == [120_000, 180_000, 240_000])
        #expect(SVGChart.niceCeiling(37) == 50 && SVGChart.niceCeiling(0) == 0 && SVGChart.niceCeiling(100) == 100)
    }

    @Test func waitsAreTakenAtNearestRankAndRefusalsReadByLimit() {
        let waits: [Int64] = Array(1...10).map { Int64($0) * 1000 }
        #expect(ConsoleLivePage.percentile(waits, 0.5) == 5000 && ConsoleLivePage.percentile(waits, 0.9) == 9000)
        #expect(ConsoleLivePage.percentile([7], 0.9) == 7 && ConsoleLivePage.percentile([], 0.5) == 0)
        let exported = "# TYPE ratelimit_refused counter\nratelimit_refused{limit=\"sign-ins\"} 3\nratelimit_refused{limit=\"reports\"} 0\n"
        let refusals = ConsoleLivePage.refusals(exported)
        #expect(refusals.map(\.title) == ["sign-ins"] && refusals.first?.detail == "3")
    }
}
