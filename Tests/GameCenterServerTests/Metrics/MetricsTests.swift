import Foundation
import GameCenterProtocol
import HTTPTypes
import Testing
@testable import GameCenterServer

/// `/metrics`: behind the admin key, valid Prometheus text, and counters that move with what the server does.
struct MetricsTests {
    /// One sample of a scrape: `name{labels} value`.
    struct Sample: Equatable {
        var name: String
        var labels: [String: String]
        var value: Double
    }

    /// Parses Prometheus text exposition format 0.0.4 strictly enough to fail on anything malformed: every line is
    /// a `# HELP`/`# TYPE` comment or a sample of a declared metric, names and label names are valid, values parse.
    static func parse(_ text: String) throws -> [Sample] {
        let name = #"[a-zA-Z_:][a-zA-Z0-9_:]*"#
        let sampleLine = try Regex(#"^(\#(name))(\{([a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\]|\\.)*"(?:,[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\]|\\.)*")*)?\})? (\S+)$"#)
        let typeLine = try Regex(#"^# TYPE (\#(name)) (counter|gauge|histogram|summary|untyped)$"#)
        var declared = Set<String>(), samples: [Sample] = []
        for line in text.split(separator: "\n", omittingEmptySubsequences: true) {
            if line.hasPrefix("# HELP ") { continue }
            if let type = try typeLine.wholeMatch(in: line) {
                declared.insert(String(type.output[1].substring ?? ""))
                continue
            }
            guard let match = try sampleLine.wholeMatch(in: line) else { throw ParseError(line: String(line)) }
            let metric = String(match.output[1].substring ?? "")
            let base = ["_bucket", "_sum", "_count"].first(where: metric.hasSuffix).map { String(metric.dropLast($0.count)) } ?? metric
            guard declared.contains(metric) || declared.contains(base) else { throw ParseError(line: "undeclared: \(line)") }
            guard let value = Double(String(match.output[4].substring ?? "")) else { throw ParseError(line: String(line)) }
            var labels: [String: String] = [:]
            if let list = match.output[3].substring {
                for pair in list.split(separator: ",") {
                    let parts = pair.split(separator: "=", maxSplits: 1)
                    labels[String(parts[0])] = String(parts[1].dropFirst().dropLast())
                }
            }
            samples.append(Sample(name: metric, labels: labels, value: value))
        }
        return samples
    }

    struct ParseError: Error, CustomStringConvertible {
        let line: String
        var description: String { "not Prometheus text: \(line)" }
    }

    static func value(_ samples: [Sample], _ name: String, _ labels: [String: String] = [:]) -> Double? {
        samples.first { $0.name == name && $0.labels == labels }?.value
    }

    @Test func theParserRefusesWhatIsNotPrometheusText() throws {
        #expect(throws: ParseError.self) { try Self.parse("# TYPE a counter\na.b 1\n") }
        #expect(throws: ParseError.self) { try Self.parse("a 1\n") }
        #expect(throws: ParseError.self) { try Self.parse("# TYPE a counter\na{x=1} 1\n") }
        #expect(try Self.parse("# TYPE a counter\na{x=\"1\"} 2\n") == [Sample(name: "a", labels: ["x": "1"], value: 2)])
    }

    @Test func aScrapeParsesAndTheCountersMove() async throws {
        try await TestServer.run(admin: true) { client in
            let key: HTTPFields = [.authorization: "Bearer \(TestServer.adminKey)"]
            expectError(try await client.call(.get, "/metrics"), .unauthorized, "admin.key_required", .notAuthenticated)

            let first = try await client.call(.get, "/metrics", extraHeaders: key)
            #expect(first.status == .ok)
            #expect(first.headers[.contentType]?.hasPrefix("text/plain; version=0.0.4") == true)
            let before = try Self.parse(String(decoding: first.body, as: UTF8.self))
            for name in [
                "leaderboard_reports", "achievement_reports", "matchmaking_requests", "realtime_connections", "relay_forwarded",
                "relay_datagrams_forged",
            ] {
                #expect(Self.value(before, name) == 0, "\(name) missing or not 0 at start")
            }

            let player = try await client.signUp()
            let report = ScoreReportBatch(
                reportID: UUID().uuidString,
                scores: [
                    ScoreReport(category: "open.points", value: 5, context: 0), ScoreReport(category: "open.time", value: 700, context: 0),
                ])
            #expect(try await client.send(.post, "/v1/scores", report, token: player.token).status == .ok)
            #expect(try await client.send(.post, "/v1/scores", report, token: player.token).status == .ok)  // replayed: stores nothing
            #expect(try await client.call(.get, "/v1/no-such-route").status == .notFound)
            #expect(try await client.call(.get, "/sign-in").status == .ok)

            let after = try Self.parse(String(decoding: try await client.call(.get, "/metrics", extraHeaders: key).body, as: UTF8.self))
            #expect(Self.value(after, "leaderboard_reports") == 2)
            // Sign-up, two reports, the sign-in page and the first scrape were 2xx; the two 401/404 answers 4xx.
            #expect((Self.value(after, "http_requests", ["status": "2xx"]) ?? 0) - (Self.value(before, "http_requests", ["status": "2xx"]) ?? 0) == 5)
            #expect(Self.value(after, "http_requests", ["status": "4xx"]) == 2)
            // Each request is timed under its route's pattern; a path no route matches under `NotFound`.
            let scores = ["route": "/v1/scores", "method": "POST", "status": "2xx"]
            #expect(Self.value(after, "http_request_duration_seconds_count", scores) == 2)
            #expect((Self.value(after, "http_request_duration_seconds_sum", scores) ?? 0) > 0)
            #expect(Self.value(after, "http_request_duration_seconds_count", ["route": "NotFound", "method": "GET", "status": "4xx"]) == 1)
            // The page's rendering is timed under its template, and only its.
            #expect(Self.value(after, "webapp_page_render_seconds_count", ["template": "sign-in"]) == 1)
            #expect((Self.value(after, "webapp_page_render_seconds_sum", ["template": "sign-in"]) ?? 0) > 0)
            #expect(Self.value(after, "webapp_page_render_seconds_count", ["template": "sign-up"]) == nil)
            // Statements are timed.
            #expect((Self.value(after, "storage_statement_seconds_count") ?? 0) > 0)
        }
    }

    /// A device's single report sends only its write's statements (on SQLite: a score report's three or an
    /// achievement report's two, and the group's `BEGIN` and `COMMIT`); the session, the game and the rank index
    /// answer from memory. The count reaches `storage_statements`.
    @Test func aSingleReportSendsOnlyItsWritesStatements() async throws {
        // The clocks (turns, occurrences, challenges) act once at start and then not for an hour: their reads would land
        // inside the measurements.
        try await TestServer.run(admin: true, clockInterval: .seconds(3600)) { client in
            let key: HTTPFields = [.authorization: "Bearer \(TestServer.adminKey)"]
            let player = try await client.signUp()
            let database = client.services.database
            // The first report on a board reads the board from storage into the rank index: the others do not. The
            // fewest statements any of the later reports took is its own: the node's heartbeat and a session read again
            // after the cache's lifetime (on a loaded machine, a slow run outlives it) can land inside one measurement.
            // On a loaded machine a measurement can take longer than the node's heartbeat (2 s), so it goes on, up to
            // 60 reports, until one of each kind was measured alone.
            var scoreStatements: [Int] = [], achievementStatements: [Int] = []
            var n = 0
            while n < 6 || (n < 60 && (scoreStatements.min() != 5 || achievementStatements.min() != 4)) {
                defer { n += 1 }
                let before = database.statements.value
                let score = ScoreReportBatch(reportID: UUID().uuidString, scores: [ScoreReport(category: "open.points", value: Int64(n), context: 0)])
                #expect(try await client.send(.post, "/v1/scores", score, token: player.token).status == .ok)
                if n > 0 { scoreStatements.append(database.statements.value - before) }
                let beforeAchievement = database.statements.value
                let progress = AchievementReportBatch(
                    reportID: UUID().uuidString, achievements: [.init(identifier: "open.many", percentComplete: Double(n) * 1.5)])
                #expect(try await client.send(.post, "/v1/achievements", progress, token: player.token).status == .ok)
                achievementStatements.append(database.statements.value - beforeAchievement)
            }
            #expect(scoreStatements.min() == 5, "a score report: \(scoreStatements)")
            #expect(achievementStatements.min() == 4, "an achievement report: \(achievementStatements)")
            // The scrape counts what was sent before it, and perhaps a background statement (the node's heartbeat)
            // that ran while it was answered.
            let sent = database.statements.value
            let scraped = try Self.parse(String(decoding: try await client.call(.get, "/metrics", extraHeaders: key).body, as: UTF8.self))
            let exported = try #require(Self.value(scraped, "storage_statements"))
            #expect(exported >= Double(sent) && exported <= Double(database.statements.value), "\(exported) exported, \(sent) sent before")
        }
    }
}
