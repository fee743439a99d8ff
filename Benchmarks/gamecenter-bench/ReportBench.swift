import ArgumentParser
import AsyncHTTPClient
import Foundation
import GameCenterProtocol
import GameCenterStorage
import Logging
import NIOCore

/// `gamecenter-bench reports`: durable score and achievement reports per second, one per request and in batches,
/// against `gamecenter serve` running as its own process (so the load generator's CPU is not the server's), on
/// SQLite and PostgreSQL, beside the plain SQL upsert loop on the same engine in the same run. For each run: the
/// server's CPU time per report, how busy the whole machine was (a saturated machine caps every process on it), and
/// the SQL statements the server sent per report (its `storage_statements` counter), and the load generator's own
/// CPU time per report (this process: what it takes from the cores the server and the database share).
/// `--baseline` adds an older `gamecenter` executable, measured the same way in the same run.
struct ReportBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "reports",
        abstract:
            "Score and achievement reports/s (single and batched) against a server process, with its CPU and statements per report, vs a plain upsert loop."
    )

    @Option(help: "Seconds to measure each kind of report.") var seconds = 5.0
    @Option(help: "Requests in flight at once (one player each).") var concurrency = 16
    @Option(help: "Reports per batched request.") var batch = 10
    @Option(help: "The gamecenter executable (default: the one beside this one).") var gamecenter: String?
    @Option(help: "An older gamecenter executable to measure in the same run (e.g. one built from an earlier commit).") var baseline: String?
    @Option(help: "A PostgreSQL database (postgres://USER@HOST:PORT/DB) to measure as well as SQLite.") var postgres: String?

    static let adminKey = "bench-admin-key-0123456789abcdef"

    func run() async throws {
        var logger = Logger(label: "bench") { StreamLogHandler.standardError(label: $0) }
        logger.logLevel = .warning
        let here = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        let servers =
            (baseline.map { [("baseline", $0)] } ?? []) + [
                ("this build", gamecenter ?? here.deletingLastPathComponent().appendingPathComponent("gamecenter").path)
            ]
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("gamecenter-bench-reports-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        var clientConfiguration = HTTPClient.Configuration()
        clientConfiguration.connectionPool.concurrentHTTP1ConnectionsPerHostSoftLimit = concurrency
        let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: clientConfiguration)
        do {
            try await measure(servers: servers, folder: folder, client: client, logger: logger)
        } catch {
            try? await client.shutdown()
            throw error
        }
        try await client.shutdown()
    }

    private func measure(servers: [(String, String)], folder: URL, client: HTTPClient, logger: Logger) async throws {

        print("gamecenter-bench reports — \(concurrency) players in flight, \(seconds) s per kind, \(ProcessInfo.processInfo.activeProcessorCount) cores")
        // Every server (and the anchor) starts on an empty database of its own, so the one measured later does not
        // write into tables the earlier one filled.
        var engines: [(name: String, database: (String) async throws -> String)] = [
            ("SQLite (synchronous=FULL)", { "sqlite:\(folder.path)/\($0).sqlite" })
        ]
        if let postgres { engines.append(("PostgreSQL", { try await Self.newPostgresDatabase(next: postgres, named: $0, logger: logger) })) }
        let dropped = { (database: String) in
            if let postgres, database.hasPrefix("postgres") { try await Self.dropPostgresDatabase(database, next: postgres, logger: logger) }
        }
        for engine in engines {
            let anchorDatabase = try await engine.database("anchor")
            let anchor = try await Database.withDatabase(url: anchorDatabase, logger: logger) { db in
                try await db.runUpsertAnchor(seconds: seconds, concurrency: concurrency)
            }
            try await dropped(anchorDatabase)
            let anchorRate = Double(anchor.upserts) / anchor.elapsed
            print("\n## \(engine.name)")
            print(String(format: "anchor: plain SQL upsert loop, one row per transaction, %d loops in this process: %.0f upserts/s", concurrency, anchorRate))
            print(
                "| server | reports | reports/s | × anchor | p50 ms | p99 ms | server CPU µs/report | load generator CPU µs/report | machine busy | statements/report | errors |"
            )
            print("|---|---|---|---|---|---|---|---|---|---|---|")
            for (name, executable) in servers {
                let run = UUID().uuidString.prefix(8).lowercased()
                let database = try await engine.database("server_\(run)")
                let lines = try await measure(executable: executable, database: database, run: run, folder: folder, client: client)
                try await dropped(database)
                for line in lines {
                    let reportsPerSecond = line.result.requestsPerSecond * Double(line.size)
                    print(
                        String(
                            format: "| %@ | %@ | %.0f | %.2f | %.2f | %.2f | %.0f | %.0f | %.0f%% | %@ | %d |", name, line.name, reportsPerSecond,
                            reportsPerSecond / anchorRate, line.result.p50, line.result.p99, line.cpuMicrosecondsPerReport,
                            line.loadGeneratorMicrosecondsPerReport, line.machineBusy * 100,
                            line.statementsPerReport.map { String(format: "%.2f", $0) } ?? "n/a", line.result.errors))
                }
            }
        }
    }

    /// Creates database `bench_reports_NAME_ID` on the PostgreSQL server of `url` and returns its URL.
    static func newPostgresDatabase(next url: String, named name: String, logger: Logger) async throws -> String {
        guard var components = URLComponents(string: url) else { throw BenchError("not a PostgreSQL URL: \(url)") }
        let database = "bench_reports_\(name)_\(UUID().uuidString.prefix(8).lowercased())"
        try await Database.withDatabase(url: url, logger: logger) { db in
            try await db.read { try await $0.sql.raw("CREATE DATABASE \(unsafeRaw: database)").run() }
        }
        components.path = "/\(database)"
        return components.string ?? url
    }

    /// Drops a database ``newPostgresDatabase(next:named:logger:)`` made, from the database of `url`.
    static func dropPostgresDatabase(_ made: String, next url: String, logger: Logger) async throws {
        guard let name = URLComponents(string: made)?.path.dropFirst(), name.hasPrefix("bench_reports_") else { return }
        try await Database.withDatabase(url: url, logger: logger) { db in
            try await db.read { try await $0.sql.raw("DROP DATABASE IF EXISTS \(unsafeRaw: String(name)) WITH (FORCE)").run() }
        }
    }

    /// One kind of report measured on one server.
    struct Line {
        var name: String
        var size: Int
        var result: LoadRun.Result
        var cpuMicrosecondsPerReport: Double
        /// This process's CPU time per report while it generated the load.
        var loadGeneratorMicrosecondsPerReport: Double
        /// The share of the machine's CPU time (all cores, every process: server, database, load generator) not idle.
        var machineBusy: Double
        var statementsPerReport: Double?
    }

    /// All cores' CPU time from /proc/stat, busy and total, in clock ticks.
    static func machineTicks() -> (busy: Double, total: Double) {
        guard let stat = try? String(contentsOfFile: "/proc/stat", encoding: .utf8), let cpu = stat.split(separator: "\n").first else { return (0, 0) }
        let ticks = cpu.split(separator: " ").dropFirst().compactMap { Double($0) }
        guard ticks.count >= 5 else { return (0, 0) }
        let total = ticks.reduce(0, +), idle = ticks[3] + ticks[4]  // idle and iowait
        return (total - idle, total)
    }

    private func measure(executable: String, database: String, run: String, folder: URL, client: HTTPClient) async throws -> [Line] {
        let bundleID = "com.example.reports\(run)"
        let manifest = folder.appendingPathComponent("reports-\(run).yaml")
        let achievements = (0..<100).map {
            "  - { identifier: a\($0), title: { en: A }, unachievedDescription: { en: U }, achievedDescription: { en: D }, points: 10 }"
        }
        try """
        bundleID: \(bundleID)
        name: Reports
        leaderboards:
          - { category: points, default: true, title: { en: Points }, format: integer }
        achievements:
        \(achievements.joined(separator: "\n"))

        """.write(to: manifest, atomically: true, encoding: .utf8)
        let server = try ChildServer(
            executable: executable,
            arguments: [
                "serve", "--port", "0", "--udp-port", "0", "--database", database, "--games", manifest.path, "--admin-key", Self.adminKey,
                "--log-level", "warning", "--rate-limit", "reports=0/1", "--rate-limit", "sign-ups=0/1", "--rate-limit", "sign-ins=0/1",
            ])
        defer { server.stop() }
        let tokens = try await BenchPlayers.signUpMany(client: client, port: server.port, count: concurrency, bundleID: bundleID)
        let device = [(DeviceHeader.bundleID, bundleID), (DeviceHeader.environment, "sandbox")]
        let perWorker = tokens.map { [("Authorization", "Bearer \($0)")] }
        let base = "http://127.0.0.1:\(server.port)"
        var lines: [Line] = []
        for (kind, size) in [("scores", 1), ("scores", batch), ("achievements", 1), ("achievements", batch)] {
            let load = try LeanLoad(
                LeanLoad.Request(
                    port: server.port, path: "/v1/\(kind)", headers: device, perWorkerHeaders: perWorker,
                    body: { worker, n in
                        // Written as the SDK's encoder writes them, without its cost in the load generator.
                        let id = "\(kind)\(size)-w\(worker)-\(n)-\(run)"
                        if kind == "scores" {
                            let scores = (0..<size).map { #"{"value":\#((worker * 7_919 + n * 104_729 + $0 * 31) % 2_000_003),"context":0}"# }
                            return Array(#"{"reportID":"\#(id)","scores":[\#(scores.joined(separator: ","))]}"#.utf8)
                        }
                        let entries = (0..<size).map { #"{"identifier":"a\#((n * size + $0) % 100)","percentComplete":\#(Double(n % 101))}"# }
                        return Array(#"{"reportID":"\#(id)","achievements":[\#(entries.joined(separator: ","))]}"#.utf8)
                    }), concurrency: concurrency)
            let measured = try await load.measure(seconds: seconds) {
                (
                    cpu: server.cpuSeconds(), own: ProcessCPU.seconds(), machine: Self.machineTicks(),
                    statements: try await Self.statements(client: client, base: base)
                )
            }
            let reports = Double(measured.result.requests * size)
            let statements = measured.after.statements.flatMap { after in measured.before.statements.map { Double(after - $0) / reports } }
            lines.append(
                Line(
                    name: size == 1 ? "\(kind), 1 per request" : "\(kind), \(size) per request", size: size, result: measured.result,
                    cpuMicrosecondsPerReport: (measured.after.cpu - measured.before.cpu) / reports * 1e6,
                    loadGeneratorMicrosecondsPerReport: (measured.after.own - measured.before.own) / reports * 1e6,
                    machineBusy: (measured.after.machine.busy - measured.before.machine.busy)
                        / max(1, measured.after.machine.total - measured.before.machine.total),
                    statementsPerReport: statements))
        }
        return lines
    }

    /// The server's `storage_statements` counter; nil when it has none (a build from before it existed).
    private static func statements(client: HTTPClient, base: String) async throws -> Int? {
        var request = HTTPClientRequest(url: "\(base)/metrics")
        request.headers.add(name: "Authorization", value: "Bearer \(adminKey)")
        let response = try await client.execute(request, timeout: .seconds(10))
        let text = String(buffer: try await response.body.collect(upTo: 1 << 22))
        guard let line = text.split(separator: "\n").first(where: { $0.hasPrefix("storage_statements ") }) else { return nil }
        return line.split(separator: " ").last.flatMap { Double($0) }.map { Int($0) }
    }
}
