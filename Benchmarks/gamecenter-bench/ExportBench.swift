import ArgumentParser
import Foundation
import GameCenterStorage
import SQLKit
import Synchronization

/// `gamecenter-bench export`: `gamecenter export` and `import` of a server with many players and scores, against the
/// engine's own dump and restore of the same data in the same run (`sqlite3 .dump` and loading it; `pg_dump` and
/// `psql`), with the export's peak memory at a tenth of the data and at all of it (flat means the same).
struct ExportBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export",
        abstract: "Archive export/import records/s vs the engine's dump and restore of the same data, and the export's peak memory.")

    @Option(help: "Players (each with a tenth of the scores' reports spread over two boards).") var players = 100_000
    @Option(help: "Score reports.") var scores = 1_000_000
    @Option(help: "A PostgreSQL server to run on too (postgres://USER@HOST:PORT/DB; the bench makes and drops its own databases).")
    var postgres: String?

    func validate() throws {
        guard players > 0, scores >= players else { throw ValidationError("--players > 0 and --scores ≥ --players") }
    }

    func run() async throws {
        print(
            "gamecenter-bench export — \(players) players, \(scores) score reports (+ \(2 * players) bests), "
                + "\(ProcessInfo.processInfo.activeProcessorCount) cores")
        let work = FileManager.default.temporaryDirectory.appendingPathComponent("export-bench-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: work) }
        try await measureSQLite(in: work)
        if let postgres {
            do {
                try await measurePostgres(server: postgres, in: work)
            } catch {
                throw BenchError("PostgreSQL: \(String(reflecting: error))")
            }
        }
    }

    private func measureSQLite(in work: URL) async throws {
        let (small, source) = (work.appendingPathComponent("small.sqlite").path, work.appendingPathComponent("source.sqlite").path)
        try await seed("sqlite:\(small)", scores: scores / 10)
        try await seed("sqlite:\(source)", scores: scores)
        let smallPeak = try await export("sqlite:\(small)", to: work.appendingPathComponent("small-archive")).peak
        let (exported, records, peak) = try await export("sqlite:\(source)", to: work.appendingPathComponent("archive"))
        let dumped = try Self.timed { try Self.shell("sqlite3 '\(source)' .dump > '\(work.path)/dump.sql'") }
        let imported = try await importArchive(work.appendingPathComponent("archive"), into: "sqlite:\(work.path)/imported.sqlite")
        let restored = try Self.timed { try Self.shell("sqlite3 '\(work.path)/restored.sqlite' < '\(work.path)/dump.sql'") }
        report("SQLite", records: records, exported: exported, dumped: dumped, imported: imported, restored: restored, peaks: (smallPeak, peak))
    }

    private func measurePostgres(server: String, in work: URL) async throws {
        let base = String(server[..<(server.lastIndex(of: "/") ?? server.endIndex)])
        let names = ["bench_export_small", "bench_export_source", "bench_export_imported", "bench_export_restored"]
        for name in names { try Self.shell("psql '\(server)' -q -c 'DROP DATABASE IF EXISTS \(name)' -c 'CREATE DATABASE \(name)'") }
        defer { for name in names { try? Self.shell("psql '\(server)' -q -c 'DROP DATABASE IF EXISTS \(name)'") } }
        try await seed("\(base)/bench_export_small", scores: scores / 10)
        try await seed("\(base)/bench_export_source", scores: scores)
        let smallPeak = try await export("\(base)/bench_export_small", to: work.appendingPathComponent("pg-small-archive")).peak
        let (exported, records, peak) = try await export("\(base)/bench_export_source", to: work.appendingPathComponent("pg-archive"))
        let dumped = try Self.timed { try Self.shell("pg_dump '\(base)/bench_export_source' -f '\(work.path)/pg-dump.sql'") }
        let imported = try await importArchive(work.appendingPathComponent("pg-archive"), into: "\(base)/bench_export_imported")
        let restored = try Self.timed { try Self.shell("psql '\(base)/bench_export_restored' -q -o /dev/null -f '\(work.path)/pg-dump.sql'") }
        report("PostgreSQL", records: records, exported: exported, dumped: dumped, imported: imported, restored: restored, peaks: (smallPeak, peak))
    }

    private func report(
        _ engine: String, records: Int, exported: Duration, dumped: Duration, imported: Duration, restored: Duration, peaks: (Int, Int)
    ) {
        func rate(_ time: Duration) -> String { String(format: "%.0f records/s", Double(records) / time.seconds) }
        func ratio(_ ours: Duration, _ anchor: Duration) -> String { String(format: "%.2f× the anchor's time", ours.seconds / anchor.seconds) }
        print("\(engine): \(records) records")
        print(
            "  export  \(String(format: "%.2f s", exported.seconds)) (\(rate(exported))) vs dump    \(String(format: "%.2f s", dumped.seconds)): \(ratio(exported, dumped))"
        )
        print(
            "  import  \(String(format: "%.2f s", imported.seconds)) (\(rate(imported))) vs restore \(String(format: "%.2f s", restored.seconds)): \(ratio(imported, restored))"
        )
        print("  export's peak memory above the process's: \(peaks.0 >> 20) MiB at a tenth of the data, \(peaks.1 >> 20) MiB at all of it")
    }

    /// Fills a database: the players, `scores` reports spread over them and two boards, and each player's bests.
    private func seed(_ url: String, scores: Int) async throws {
        let players = players
        try await Database.withDatabase(url: url) { database in
            try await database.fillPlayers(prefix: "G:bench", count: players, now: 1_790_000_000_000)
            try await database.write { storage in
                try await storage.sql.raw(
                    """
                    WITH RECURSIVE n(i) AS (SELECT CAST(1 AS BIGINT) UNION ALL SELECT i + 1 FROM n WHERE i < \(bind: Int64(scores)))
                    INSERT INTO scores (bundle_id, environment, category, player_id, value, context, reported_at)
                    SELECT 'com.example.bench', 'sandbox', CASE WHEN i % 2 = 0 THEN 'bench.wins' ELSE 'bench.time' END,
                        'G:bench' || (1 + i % \(bind: Int64(players))), (i * 7919) % 1000003, i % 7, 1790000000000 + i FROM n
                    """
                ).run()
                try await storage.sql.raw(
                    """
                    INSERT INTO best_scores (bundle_id, environment, category, player_id, score_id, value)
                    SELECT bundle_id, environment, category, player_id, MIN(score_id), MAX(value) FROM scores
                    GROUP BY bundle_id, environment, category, player_id
                    """
                ).run()
            }
        }
    }

    private func export(_ url: String, to folder: URL) async throws -> (time: Duration, records: Int, peak: Int) {
        try await Database.withDatabase(url: url) { database in
            let sampler = PeakMemory()
            let sampling = Task { await sampler.run() }
            let started = ContinuousClock.now
            let manifest = try await database.exportArchive(scope: .server, to: folder)
            let time = ContinuousClock.now - started
            sampling.cancel()
            return (time, manifest.files.reduce(0) { $0 + $1.records }, sampler.peakAboveStart)
        }
    }

    private func importArchive(_ folder: URL, into url: String) async throws -> Duration {
        try await Database.withDatabase(url: url) { database in
            try await Self.timedAsync { _ = try await database.importArchive(from: folder) }
        }
    }

    private static func timed(_ body: () throws -> Void) rethrows -> Duration {
        let started = ContinuousClock.now
        try body()
        return ContinuousClock.now - started
    }

    private static func timedAsync(_ body: () async throws -> Void) async rethrows -> Duration {
        let started = ContinuousClock.now
        try await body()
        return ContinuousClock.now - started
    }

    private static func shell(_ command: String) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", command]
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { throw BenchError("`\(command)` exited with \(process.terminationStatus)") }
    }
}

/// The process's resident memory sampled every 5 ms; the most it rose above where it started.
private final class PeakMemory: Sendable {
    private let start = PeakMemory.resident()
    private let peak = Mutex(0)

    var peakAboveStart: Int { peak.withLock { max(0, $0 - start) } }

    func run() async {
        while !Task.isCancelled {
            let now = Self.resident()
            peak.withLock { $0 = max($0, now) }
            try? await Task.sleep(for: .milliseconds(5))
        }
    }

    /// Resident bytes not backed by a file, from /proc/self/statm (resident minus shared): the database file's pages
    /// SQLite maps for reading are the page cache's, not the process's.
    static func resident() -> Int {
        guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
        let fields = text.split(separator: " ").compactMap { Int($0) }
        guard fields.count >= 3 else { return 0 }
        return (fields[1] - fields[2]) * Int(sysconf(Int32(_SC_PAGESIZE)))
    }
}
