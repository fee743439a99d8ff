import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing

/// `--metrics-port`: a second port that serves `GET /metrics` without the admin key, and nothing else.
@Suite(.serialized, .timeLimit(.minutes(3))) struct MetricsLiveTests {
    static func get(_ url: String) async throws -> (status: Int, body: String) {
        let (data, response) = try await URLSession.shared.data(from: URL(string: url)!)
        return ((response as? HTTPURLResponse)?.statusCode ?? 0, String(decoding: data, as: UTF8.self))
    }

    @Test func theMetricsPortServesTheScrapeWithoutTheKeyAndNothingElse() async throws {
        let metricsPort = try FreePort.tcp()
        let server = try LiveServer(engine: "sqlite")
        try await server.start(extraArguments: ["--metrics-port", "\(metricsPort)", "--admin-key", "metrics-admin-key-0123456789"])
        _ = try await Devices.signedUp(server, alias: "Scraped")
        let scrape = try await Self.get("http://127.0.0.1:\(metricsPort)/metrics")
        #expect(scrape.status == 200)
        #expect(scrape.body.contains("# TYPE http_requests counter"))
        #expect(scrape.body.contains(#"http_requests{status="2xx"}"#))
        #expect(scrape.body.contains("# TYPE relay_forwarded counter"), "the relay's counters are exported on this port too")
        // Nothing else is served there; the main port still wants the admin key.
        #expect(try await Self.get("http://127.0.0.1:\(metricsPort)/v1/game").status == 404)
        #expect(try await Self.get("http://127.0.0.1:\(metricsPort)/healthz").status == 404)
        let main = try await Self.get("http://127.0.0.1:\(server.port)/metrics")
        #expect(main.status == 401 && main.body.contains("admin.key_required"))
        try await server.stop()
    }
}
