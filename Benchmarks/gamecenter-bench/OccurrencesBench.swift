import ArgumentParser
import AsyncHTTPClient
import Foundation
import GameCenterProtocol
import GameCenterServer
import GameCenterStorage
import Logging
import NIOCore
import SQLKit

/// `gamecenter-bench occurrences`: a recurring leaderboard of `players` entries rolled over to its next occurrence
/// while reports keep coming, and score reports on a recurring board, and by the players of a challenge, against a
/// classic board (the anchor) in the same run, alternating.
///
/// The server runs in this process with the movable clock; the rollover is the clock stopped at the next
/// occurrence's start. Measured: reports/s and p99 on each board; the reports' p99 just before and just after the
/// rollover; the first page of the new occurrence and a page of the old one (still ranked, from memory); the
/// process's resident memory before and after.
struct OccurrencesBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "occurrences",
        abstract:
            "A recurring board's rollover under load (reports' p99 before/after, memory, old occurrence still ranked), and reports on recurring boards and in challenges vs classic boards."
    )

    @Option(help: "Entries on the recurring board's running occurrence (and on the classic board).") var players = 1_000_000
    @Option(help: "Seconds to measure each run.") var seconds = 3.0
    @Option(help: "Requests in flight at once (one player each).") var concurrency = 16
    @Option(help: "Database (default: a new SQLite file in a temporary folder).") var database: String?
    @Option(help: "Rollovers measured, each a run of reports just before a boundary and one just after.") var rollovers = 3
    @Flag(help: "Only the rollover (no classic board, no lifetime bests): for boards too large to hold twice in memory.") var rolloverOnly = false

    static let adminKey = "bench-admin-key-0123456789"

    func validate() throws {
        guard players >= 1000 else { throw ValidationError("--players must be at least 1000") }
    }

    func run() async throws {
        var logger = Logger(label: "bench") { StreamLogHandler.standardError(label: $0) }
        logger.logLevel = .warning
        print(
            "gamecenter-bench occurrences — \(ProcessInfo.processInfo.activeProcessorCount) cores, \(players) entries, storage: \(database ?? "SQLite (temporary file), synchronous=FULL")"
        )
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("gamecenter-bench-occ-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let databaseURL = database ?? "sqlite:\(folder.path)/bench.sqlite"
        let run = UUID().uuidString.prefix(8).lowercased()
        let bundleID = "com.example.occ\(run)"
        // A weekly board (Mondays, UTC): the running occurrence started in the past, the next starts within a week.
        let schedule = OccurrenceSchedule(rule: .calendar(try CronExpression("0 0 * * 1"), notBefore: nil), timeZone: TimeZone(identifier: "UTC")!)
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        guard let running = schedule.occurrence(containing: now), let next = schedule.next(running) else {
            throw BenchError("the weekly schedule has no running occurrence")
        }

        let filled = ContinuousClock.now
        let players = players
        try await Database.withDatabase(url: databaseURL, logger: logger) { db in
            if !rolloverOnly {
                try await db.fillLeaderboard(bundleID: bundleID, category: "bench.classic", playerPrefix: "O\(run):", count: players, now: now)
            } else {
                try await db.fillPlayers(prefix: "O\(run):", count: players, now: now)
            }
            try await db.fillOccurrence(
                bundleID: bundleID, category: "bench.weekly", playerPrefix: "O\(run):", count: players, occurrence: running.start, now: now)
        }
        print(
            String(
                format: "filled %d players, %@the running occurrence of a weekly board in %.1f s", players, rolloverOnly ? "" : "a classic board and ",
                secondsSince(filled)))

        let manifest = """
            bundleID: \(bundleID)
            name: Occurrences bench
            leaderboards:
              - { category: bench.classic, default: true, title: { en: Classic }, format: integer }
              - { category: bench.weekly, title: { en: Weekly }, format: integer, recurring: { every: week, weekday: monday, lifetimeBest: \(!rolloverOnly) } }
              - { category: bench.duel, title: { en: Duel }, format: integer }
            challenges:
              - { identifier: bench.duel, title: { en: Duel }, leaderboard: bench.duel, durations: [1w], maxParticipants: 100 }
            """
        let residentBefore = Self.residentMiB()
        let started = ContinuousClock.now
        let server = try await BenchServer.start(manifest: manifest, database: databaseURL, logger: logger, adminKey: Self.adminKey)
        print(
            String(
                format: "server start, both boards rebuilt from storage (%d entries each): %.2f s, resident memory +%.0f MiB", players,
                secondsSince(started), Self.residentMiB() - residentBefore))
        var configuration = HTTPClient.Configuration()
        configuration.connectionPool.concurrentHTTP1ConnectionsPerHostSoftLimit = concurrency
        let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
        let outcome: Result<Void, any Error>
        do {
            try await measure(client: client, port: server.port, bundleID: bundleID, schedule: schedule, next: next, running: running)
            outcome = .success(())
        } catch {
            outcome = .failure(error)
        }
        try? await client.shutdown()
        await server.stop()
        try outcome.get()
    }

    private func measure(
        client: HTTPClient, port: Int, bundleID: String, schedule: OccurrenceSchedule, next: OccurrenceSchedule.Occurrence,
        running: OccurrenceSchedule.Occurrence
    ) async throws {
        let tokens = try await BenchPlayers.signUpMany(client: client, port: port, count: concurrency, bundleID: bundleID)
        let device = [(DeviceHeader.bundleID, bundleID), (DeviceHeader.environment, "sandbox")]
        let perWorker = tokens.map { [("Authorization", "Bearer \($0)")] }
        let base = "http://127.0.0.1:\(port)"
        let (concurrency, seconds) = (concurrency, seconds)
        func reports(_ category: String) -> LoadRun {
            LoadRun(
                client: client, url: "\(base)/v1/scores", headers: device,
                body: { worker, n in
                    let score = ScoreReport(category: category, value: Int64((worker * 7_919 + n * 104_729) % 2_000_003), context: 0)
                    return (try? WireCoding.makeEncoder().encode(ScoreReportBatch(reportID: "w\(worker)-\(n)-\(UUID().uuidString)", scores: [score]))) ?? Data()
                }, concurrency: concurrency, seconds: seconds, perWorkerHeaders: perWorker)
        }

        if !rolloverOnly { try await compare(client: client, base: base, device: device, perWorker: perWorker, reports: reports) }
        try await rollOver(client: client, base: base, device: device, perWorker: perWorker, schedule: schedule, next: next, running: running, reports: reports)
    }

    /// Reports on the recurring board, and by the players of a challenge, against the classic board (alternating).
    private func compare(
        client: HTTPClient, base: String, device: [(String, String)], perWorker: [[(String, String)]], reports: (String) -> LoadRun
    ) async throws {
        print("\n## Reports, one score per request, \(concurrency) in flight (alternating)")
        var classic: [LoadRun.Result] = []
        var weekly: [LoadRun.Result] = []
        for _ in 0..<2 {
            classic.append(try await reports("bench.classic").measure())
            weekly.append(try await reports("bench.weekly").measure())
        }
        for (name, results) in [("classic board (anchor)", classic), ("recurring board", weekly)] {
            for result in results { print(result.line(name: name)) }
        }
        let classicRate = classic.map(\.requestsPerSecond).reduce(0, +) / Double(classic.count)
        let weeklyRate = weekly.map(\.requestsPerSecond).reduce(0, +) / Double(weekly.count)
        print(String(format: "recurring vs classic reports/s: %.2fx", weeklyRate / classicRate))

        // Every worker's player joins one challenge on `bench.duel`: each report there counts, so it is pushed to all
        // of them (one stored event per participant) with the standings.
        let created = try await BenchPlayers.send(
            client, "POST", "\(base)/v1/challenges", device + perWorker[0], ChallengeCreateBody(definition: "bench.duel"), as: ChallengeInfo.self)
        for headers in perWorker.dropFirst() {
            _ = try await BenchPlayers.send(
                client, "POST", "\(base)/v1/challenges/join", device + headers, ChallengeJoinBody(code: created.code), as: ChallengeInfo.self)
        }
        print("\n## Reports by the \(concurrency) players of one challenge (each pushed to all \(concurrency)) vs the classic board (alternating)")
        var anchor: [LoadRun.Result] = []
        var challenged: [LoadRun.Result] = []
        for _ in 0..<2 {
            anchor.append(try await reports("bench.classic").measure())
            challenged.append(try await reports("bench.duel").measure())
        }
        for (name, results) in [("classic board (anchor)", anchor), ("board of a running challenge", challenged)] {
            for result in results { print(result.line(name: name)) }
        }
        let anchorRate = anchor.map(\.requestsPerSecond).reduce(0, +) / Double(anchor.count)
        let challengedRate = challenged.map(\.requestsPerSecond).reduce(0, +) / Double(challenged.count)
        print(String(format: "challenge vs classic reports/s: %.2fx", challengedRate / anchorRate))
    }

    /// Rolls the recurring board over `rollovers` times under load, and reads the new and the first occurrence.
    private func rollOver(
        client: HTTPClient, base: String, device: [(String, String)], perWorker: [[(String, String)]], schedule: OccurrenceSchedule,
        next: OccurrenceSchedule.Occurrence, running: OccurrenceSchedule.Occurrence, reports: (String) -> LoadRun
    ) async throws {
        print("\n## Rollover under load: \(rollovers) boundaries, a run of reports just before each and one just after")
        // The control: two runs one after the other with no boundary between them, for what a second run costs anyway
        // (the database's log growing, a checkpoint).
        let first = try await reports("bench.weekly").measure()
        let second = try await reports("bench.weekly").measure()
        print(first.line(name: "control: a run of reports"))
        print(second.line(name: "control: the next run, no boundary crossed"))
        print(String(format: "control: p99 second / first: %.2fx", second.p99 / max(first.p99, 0.001)))
        let resident = Self.residentMiB()
        var ratios: [Double] = []
        var boundary = next
        for round in 1...rollovers {
            // The clock stands a minute before the boundary (the first boundary: the real clock is before it).
            if round > 1 { try await Self.freeze(client: client, base: base, at: boundary.start - 60_000) }
            let before = try await reports("bench.weekly").measure()
            let rolled = RolloverProbe()
            // The probe runs after the warm-up, right before the measured run: the clock reaches the boundary there.
            let after = try await reports("bench.weekly").measure {
                if rolled.take() { try await Self.freeze(client: client, base: base, at: boundary.start) }
            }.result
            print(before.line(name: "rollover \(round): reports just before"))
            print(after.line(name: "rollover \(round): reports just after (the first to reach the new occurrence included)"))
            ratios.append(after.p99 / max(before.p99, 0.001))
            guard let following = schedule.next(boundary) else { break }
            boundary = following
        }
        print(
            String(
                format: "reports' p99 after / before each rollover: %@; median %.2fx; goal: unchanged",
                ratios.map { String(format: "%.2fx", $0) }.joined(separator: ", "), ratios.sorted()[ratios.count / 2]))

        let query = { (occurrence: Int64?) in
            LeaderboardQuery(
                category: "bench.weekly", playerScope: .global, timeScope: .allTime, rangeStart: 1, rangeLength: 25,
                occurrence: occurrence.map(StoredTime.date))
        }
        let firstPage = ContinuousClock.now
        let current = try await BenchPlayers.send(client, "POST", "\(base)/v1/leaderboards/query", device + perWorker[0], query(nil), as: LeaderboardPage.self)
        let firstMillis = secondsSince(firstPage) * 1000
        let oldPage = ContinuousClock.now
        let old = try await BenchPlayers.send(
            client, "POST", "\(base)/v1/leaderboards/query", device + perWorker[0], query(running.start), as: LeaderboardPage.self)
        print(
            String(
                format: "new occurrence: %d entries (reports since the rollover), first page %.2f ms; old occurrence still ranked: %d entries, page %.2f ms",
                current.maxRange, firstMillis, old.maxRange, secondsSince(oldPage) * 1000))
        print(
            String(format: "resident memory across the rollover: %+.0f MiB (the new occurrence starts empty; nothing is copied)", Self.residentMiB() - resident)
        )
    }

    /// Stops the server's clock at `millis`.
    private static func freeze(client: HTTPClient, base: String, at millis: Int64) async throws {
        _ = try await BenchPlayers.send(
            client, "POST", "\(base)/admin/v1/clock", [("Authorization", "Bearer \(adminKey)")], ClockAdvance(seconds: 0, freezeAt: StoredTime.date(millis)),
            as: ClockReading.self)
    }

    /// The process's resident memory in MiB (`VmRSS`).
    private static func residentMiB() -> Double {
        let text = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
        let line = text.split(separator: "\n").first { $0.hasPrefix("VmRSS:") } ?? ""
        return Double(Int(line.split(separator: " ").dropFirst().first ?? "0") ?? 0) / 1024
    }
}

/// True the first time it is taken.
private final class RolloverProbe: @unchecked Sendable {
    private let lock = NSLock()
    private var taken = false

    func take() -> Bool {
        lock.withLock {
            defer { taken = true }
            return !taken
        }
    }
}

extension Database {
    /// Fills one occurrence of a recurring leaderboard like ``fillLeaderboard(bundleID:category:playerPrefix:count:now:)``
    /// (the players exist already): one report each in `occurrence`, their bests in it and their lifetime bests.
    func fillOccurrence(bundleID: String, category: String, playerPrefix: String, count: Int, occurrence: Int64, now: Int64) async throws {
        try await write { storage in
            try await storage.sql.raw(
                """
                WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < \(bind: count))
                INSERT INTO scores (bundle_id, environment, category, player_id, value, context, reported_at, occurrence)
                SELECT \(bind: bundleID), 'sandbox', \(bind: category), \(bind: playerPrefix) || i, (i * 7919) % 1000003, 0, \(bind: now) - i % 1000,
                    \(bind: occurrence) FROM n
                """
            ).run()
            for table in ["best_scores", "occurrence_best_scores"] {
                let occurrenceColumn = table == "best_scores" ? "" : ", occurrence"
                try await storage.sql.raw(
                    """
                    INSERT INTO \(unsafeRaw: table) (bundle_id, environment, category, player_id, score_id, value\(unsafeRaw: occurrenceColumn))
                    SELECT bundle_id, environment, category, player_id, score_id, value\(unsafeRaw: occurrenceColumn) FROM scores
                    WHERE bundle_id = \(bind: bundleID) AND category = \(bind: category)
                    """
                ).run()
            }
        }
    }
}
