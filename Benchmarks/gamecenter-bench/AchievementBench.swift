import ArgumentParser
import AsyncHTTPClient
import Foundation
import GameCenterProtocol
import GameCenterStorage
import Logging
import NIOCore

/// `gamecenter-bench achievements`: durable achievement reports per second over HTTP, unbatched and in batches,
/// against a plain SQL upsert loop on the same engine in the same run.
struct AchievementBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "achievements", abstract: "Achievement reports/s end to end (single and batched) vs a plain SQL upsert loop."
    )

    @Option(help: "Seconds to measure each target.") var seconds = 5.0
    @Option(help: "Requests in flight at once (one player each).") var concurrency = 16
    @Option(help: "Achievements per batched report.") var batch = 10
    @Option(help: "Database (default: a new SQLite file in a temporary folder).") var database: String?

    func run() async throws {
        var logger = Logger(label: "bench") { StreamLogHandler.standardError(label: $0) }
        logger.logLevel = .warning
        let achievements = (0..<100).map {
            "  - { identifier: a\($0), title: { en: A }, unachievedDescription: { en: U }, achievedDescription: { en: D }, points: 10 }"
        }
        let manifest = "bundleID: com.example.bench\nname: Bench\nachievements:\n" + achievements.joined(separator: "\n") + "\n"
        let server = try await BenchServer.start(manifest: manifest, database: database, logger: logger)
        var clientConfiguration = HTTPClient.Configuration()
        clientConfiguration.connectionPool.concurrentHTTP1ConnectionsPerHostSoftLimit = concurrency
        let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: clientConfiguration)
        var failure: (any Error)?
        do {
            try await measure(client: client, server: server, logger: logger)
        } catch {
            failure = error
        }
        try? await client.shutdown()
        await server.stop()
        if let failure { throw failure }
    }

    private func measure(client: HTTPClient, server: BenchServer, logger: Logger) async throws {
        let tokens = try await BenchPlayers.signUpMany(client: client, port: server.port, count: concurrency)
        let url = "http://127.0.0.1:\(server.port)/v1/achievements"
        let device = [(DeviceHeader.bundleID, "com.example.bench"), (DeviceHeader.environment, "sandbox")]
        let batchSize = batch
        print("gamecenter-bench achievements — \(concurrency) players in flight, \(seconds) s each, \(ProcessInfo.processInfo.activeProcessorCount) cores")
        print("storage: \(database ?? "SQLite (temporary file), synchronous=FULL")")

        var results: [(String, LoadRun.Result, Int)] = []
        for size in [1, batchSize] {
            // Each worker is one player (its own token), with a new report id per request.
            let run = LoadRun(
                client: client, url: url, headers: device,
                body: { worker, n in
                    let entries = (0..<size).map { AchievementReportBatch.Entry(identifier: "a\((n * size + $0) % 100)", percentComplete: Double(n % 101)) }
                    return
                        (try? WireCoding.makeEncoder().encode(AchievementReportBatch(reportID: "w\(worker)-\(n)-\(UUID().uuidString)", achievements: entries)))
                        ?? Data()
                }, concurrency: concurrency, seconds: seconds, perWorkerHeaders: tokens.map { [("Authorization", "Bearer \($0)")] })
            results.append((size == 1 ? "unbatched (1 per request)" : "batched (\(size) per request)", try await run.measure(), size))
        }
        let anchorDatabase = database ?? "sqlite:\(server.folder.path)/anchor.sqlite"
        let anchor = try await Database.withDatabase(url: anchorDatabase, logger: logger) { db in
            try await db.runUpsertAnchor(seconds: seconds, concurrency: concurrency)
        }
        let anchorRate = Double(anchor.upserts) / anchor.elapsed
        print(String(format: "anchor: plain SQL upsert loop, one row per transaction: %.0f upserts/s", anchorRate))
        for (name, result, size) in results {
            let reports = result.requestsPerSecond * Double(size)
            print(
                String(
                    format: "%@: %.0f requests/s = %.0f achievement reports/s, p50 %.2f ms, p99 %.2f ms, %d errors; %.2fx the anchor",
                    name, result.requestsPerSecond, reports, result.p50, result.p99, result.errors, reports / anchorRate))
        }
    }
}
