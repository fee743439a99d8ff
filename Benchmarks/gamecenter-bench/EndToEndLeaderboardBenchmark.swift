import AsyncHTTPClient
import Foundation
import GameCenterProtocol
import GameCenterStorage
import Logging

/// The whole server on a board of `players` entries: start time (the index rebuilt from storage), durable
/// reports/s single and batched, and leaderboard pages with the caller's rank; and, on the same engine with the
/// same number of rows, the naive SQL leaderboard (upsert loop, `COUNT(*)` rank).
struct EndToEndLeaderboardBenchmark {
    let players: Int
    let seconds: Double
    let concurrency: Int
    let batch: Int
    let database: String?
    let logger: Logger

    struct Figures {
        var startSeconds: Double
        var singleReportsPerSecond: Double
        var batchedReportsPerSecond: Double
        var rankP50Milliseconds: Double
        var rankP99Milliseconds: Double
        var naiveUpsertsPerSecond: Double
        var naiveRankP50Milliseconds: Double
        var naiveRankP99Milliseconds: Double
        var lines: [String]

        var summary: String { lines.joined(separator: "\n") }
    }

    func run() async throws -> Figures {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("gamecenter-bench-lb-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let databaseURL = database ?? "sqlite:\(folder.path)/bench.sqlite"
        let run = UUID().uuidString.prefix(8).lowercased()
        let bundleID = "com.example.lb\(run)"
        var lines: [String] = []

        let (players, concurrency, seconds) = (players, concurrency, seconds)
        let fillStarted = ContinuousClock.now
        let naive = try await Database.withDatabase(url: databaseURL, logger: logger) { db in
            try await db.fillLeaderboard(
                bundleID: bundleID, category: "bench.points", playerPrefix: "B\(run):", count: players,
                now: Int64(Date().timeIntervalSince1970 * 1000))
            try await db.createNaiveLeaderboard(count: players)
            let upserts = try await db.runNaiveReports(seconds: seconds, concurrency: concurrency, count: players)
            let ranks = try await db.naiveRankLatencies(queries: 300, count: players).sorted()
            return (Double(upserts.upserts) / upserts.elapsed, percentile(ranks, 0.5), percentile(ranks, 0.99))
        }
        lines.append(String(format: "filled %d players, reports and bests in %.1f s", players, secondsSince(fillStarted)))
        lines.append(
            String(
                format:
                    "anchor: naive SQL leaderboard, %d rows: upsert-if-better loop %.0f/s (one transaction each, %d loops); COUNT(*) rank p50 %.3f ms, p99 %.3f ms",
                players, naive.0, concurrency, naive.1, naive.2))

        let manifest = """
            bundleID: \(bundleID)
            name: Leaderboard bench
            leaderboards:
              - { category: bench.points, default: true, title: { en: Points }, format: integer, suffix: { en: { one: " point", other: " points" } } }
            """
        let started = ContinuousClock.now
        let server = try await BenchServer.start(manifest: manifest, database: databaseURL, logger: logger)
        let startSeconds = secondsSince(started)
        lines.append(String(format: "server start with the index rebuilt from storage (%d entries): %.2f s", players, startSeconds))

        var clientConfiguration = HTTPClient.Configuration()
        clientConfiguration.connectionPool.concurrentHTTP1ConnectionsPerHostSoftLimit = concurrency
        let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: clientConfiguration)
        let measured: Result<[LoadRun.Result], any Error>
        do {
            measured = .success(try await measure(client: client, port: server.port, bundleID: bundleID))
        } catch {
            measured = .failure(error)
        }
        try? await client.shutdown()
        await server.stop()
        let results = try measured.get()
        let (single, batched, pages, onePage) = (results[0], results[1], results[2], results[3])
        lines.append(single.line(name: "report 1 score per request"))
        lines.append(batched.line(name: "report \(batch) scores per request") + String(format: " = %.0f scores/s", batched.requestsPerSecond * Double(batch)))
        lines.append(pages.line(name: "leaderboard page (25 entries at a random rank) + caller's rank, \(concurrency) in flight"))
        lines.append(onePage.line(name: "the same, one request at a time"))
        return Figures(
            startSeconds: startSeconds, singleReportsPerSecond: single.requestsPerSecond,
            batchedReportsPerSecond: batched.requestsPerSecond * Double(batch),
            rankP50Milliseconds: onePage.p50, rankP99Milliseconds: onePage.p99,
            naiveUpsertsPerSecond: naive.0, naiveRankP50Milliseconds: naive.1, naiveRankP99Milliseconds: naive.2, lines: lines)
    }

    private func measure(client: HTTPClient, port: Int, bundleID: String) async throws -> [LoadRun.Result] {
        let tokens = try await BenchPlayers.signUpMany(client: client, port: port, count: concurrency, bundleID: bundleID)
        let device = [(DeviceHeader.bundleID, bundleID), (DeviceHeader.environment, "sandbox")]
        let perWorker = tokens.map { [("Authorization", "Bearer \($0)")] }
        let base = "http://127.0.0.1:\(port)"
        var results: [LoadRun.Result] = []
        for size in [1, batch] {
            let run = LoadRun(
                client: client, url: "\(base)/v1/scores", headers: device,
                body: { worker, n in
                    let scores = (0..<size).map { ScoreReport(category: nil, value: Int64((worker * 7_919 + n * 104_729 + $0 * 31) % 2_000_003), context: 0) }
                    return (try? WireCoding.makeEncoder().encode(ScoreReportBatch(reportID: "w\(worker)-\(n)-\(UUID().uuidString)", scores: scores))) ?? Data()
                }, concurrency: concurrency, seconds: seconds, perWorkerHeaders: perWorker)
            results.append(try await run.measure())
        }
        let players = players
        // Pages at full load (throughput), then one request at a time (the latency a player sees).
        for inFlight in [concurrency, 1] {
            let pages = LoadRun(
                client: client, url: "\(base)/v1/leaderboards/query", headers: device,
                body: { worker, n in
                    let start = (worker * 7_777 + n * 104_729) % (players - 25) + 1
                    let query = LeaderboardQuery(category: nil, playerScope: .global, timeScope: .allTime, rangeStart: start, rangeLength: 25)
                    return (try? WireCoding.makeEncoder().encode(query)) ?? Data()
                }, concurrency: inFlight, seconds: seconds, perWorkerHeaders: perWorker)
            results.append(try await pages.measure())
        }
        return results
    }
}
