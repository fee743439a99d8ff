import ArgumentParser
import AsyncHTTPClient
import Foundation
import GameCenterProtocol
import GameCenterServer
import GameCenterStorage
import Histogram
import Logging
import NIOCore

/// `gamecenter-bench leaderboard`: the rank index in process, the whole server over HTTP with durable storage,
/// and the anchors — a Redis sorted set and a naive SQL leaderboard (upsert + `COUNT(*)` rank) on the same
/// engine — on the same data in the same run, with every ratio printed.
struct LeaderboardBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "leaderboard",
        abstract: "Rank index, end-to-end reports/s and rank latency over HTTP, vs Redis ZADD/ZREVRANK and a naive SQL leaderboard."
    )

    @Option(help: "Entries on the board (index, server, anchors).") var players = 1_000_000
    @Option(name: .customLong("index-players"), help: "Entries for the second, in-memory-only index run.") var indexPlayers = 10_000_000
    @Option(help: "Seconds to measure each HTTP target.") var seconds = 5.0
    @Option(help: "Requests in flight at once (one player each).") var concurrency = 16
    @Option(help: "Scores per batched report (at most 100).") var batch = 100
    @Option(help: "Database (default: a new SQLite file in a temporary folder).") var database: String?
    @Flag(help: "Measure only the in-process rank index (no anchors, no server).") var indexOnly = false
    @Option(name: .customLong("redis-server"), help: "redis-server executable (Debian package redis-server).") var redisServer = "/usr/bin/redis-server"

    func validate() throws {
        guard players >= 1000, indexPlayers >= 1000 else { throw ValidationError("--players and --index-players must be at least 1000") }
        guard (1...Limits.maximumScoresPerReport).contains(batch) else { throw ValidationError("--batch must be 1…\(Limits.maximumScoresPerReport)") }
    }

    func run() async throws {
        var logger = Logger(label: "bench") { StreamLogHandler.standardError(label: $0) }
        logger.logLevel = .warning
        print(
            "gamecenter-bench leaderboard — \(ProcessInfo.processInfo.activeProcessorCount) cores, storage: \(database ?? "SQLite (temporary file), synchronous=FULL")"
        )

        print("\n## In-process rank index")
        var indexFigures: [RankIndexBenchmark.Figures] = []
        for size in [players, indexPlayers] {
            let figures = RankIndexBenchmark.run(entries: size)
            indexFigures.append(figures)
            print(figures.summary)
        }
        guard !indexOnly else { return }

        print("\n## Anchor: Redis sorted set (\(players) members, pipelined client, persistence off)")
        let redis = try RedisBenchmark.run(executable: redisServer, members: players)
        print(redis.summary)

        print("\n## End to end: gamecenter over HTTP, durable storage (\(players) players on the board)")
        let endToEnd = try await EndToEndLeaderboardBenchmark(
            players: players, seconds: seconds, concurrency: concurrency, batch: batch, database: database, logger: logger
        ).run()
        print(endToEnd.summary)

        print("\n## Ratios and goals")
        let small = indexFigures[0], large = indexFigures[1]
        print(
            String(
                format: "index updates/s vs Redis ZADD (pipelined): %.2fx; goal ≥ 1,000,000/s: %@ (%.0f/s at %d entries)",
                small.updatesPerSecond / redis.updatesPerSecond, large.updatesPerSecond >= 1_000_000 ? "met" : "NOT met",
                large.updatesPerSecond, large.entries))
        print(
            String(
                format: "index rank vs Redis ZREVRANK round trip (p50): %.0fx faster; goal ≤ 1 µs at %d entries: %@ (mean %.3f µs)",
                redis.rankP50Milliseconds * 1000 / small.rankMeanMicroseconds, large.entries,
                large.rankMeanMicroseconds <= 1 ? "met" : "NOT met", large.rankMeanMicroseconds))
        print(
            String(
                format: "memory per entry: %.1f B at %d, %.1f B at %d; goal ≤ 64 B: %@",
                small.bytesPerEntry, small.entries, large.bytesPerEntry, large.entries,
                max(small.bytesPerEntry, large.bytesPerEntry) <= 64 ? "met" : "NOT met"))
        print(
            String(
                format: "rebuild of %d entries from storage at start: %.2f s (bulk index build alone %.3f s); goal ≤ 2 s: %@",
                players, endToEnd.startSeconds, small.buildSeconds, endToEnd.startSeconds <= 2 ? "met" : "NOT met"))
        let bestReports = max(endToEnd.singleReportsPerSecond, endToEnd.batchedReportsPerSecond)
        print(
            String(
                format: "durable reports/s: %.0f single, %.0f batched — %.2fx / %.2fx the naive SQL upsert loop; goal ≥ 20,000/s: %@",
                endToEnd.singleReportsPerSecond, endToEnd.batchedReportsPerSecond,
                endToEnd.singleReportsPerSecond / endToEnd.naiveUpsertsPerSecond, endToEnd.batchedReportsPerSecond / endToEnd.naiveUpsertsPerSecond,
                bestReports >= 20_000 ? "met" : "NOT met"))
        print(
            String(
                format: "rank over HTTP (one request at a time) p99 %.3f ms vs naive SQL COUNT(*) rank p99 %.3f ms (%.0fx faster); goal ≤ 1 ms: %@",
                endToEnd.rankP99Milliseconds, endToEnd.naiveRankP99Milliseconds,
                endToEnd.naiveRankP99Milliseconds / endToEnd.rankP99Milliseconds, endToEnd.rankP99Milliseconds <= 1 ? "met" : "NOT met"))
    }
}

/// The `p` quantile (0…1) of `samples` (latencies in any one unit), from an HDR histogram at three significant
/// digits of the samples in billionths of that unit: latencies in seconds keep nanoseconds (in thousandths, every
/// sub-millisecond latency in seconds read as 0).
func percentile(_ samples: [Double], _ p: Double) -> Double {
    guard !samples.isEmpty else { return 0 }
    var histogram = Histogram<UInt64>(numberOfSignificantValueDigits: .three)
    for sample in samples { _ = histogram.record(UInt64(max(0, sample * 1e9).rounded())) }
    return Double(histogram.valueAtPercentile(p * 100)) / 1e9
}

/// Seconds since `start`.
func secondsSince(_ start: ContinuousClock.Instant) -> Double {
    let (s, atto) = (ContinuousClock.now - start).components
    return Double(s) + Double(atto) / 1e18
}
