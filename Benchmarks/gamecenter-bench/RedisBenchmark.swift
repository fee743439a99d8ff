import Foundation

/// The Redis sorted-set anchor: fill, score updates (ZADD GT), ZREVRANK and 100-wide ZREVRANGE.
struct RedisBenchmark {
    struct Figures {
        var members: Int
        var fillSeconds: Double
        var updatesPerSecond: Double
        var ranksPerSecond: Double
        var rankP50Milliseconds: Double
        var rankP99Milliseconds: Double
        var rangeP50Milliseconds: Double
        var rangeP99Milliseconds: Double

        var summary: String {
            String(
                format: """
                    fill %d members: %.2f s; ZADD updates (pipelined 1000): %.0f/s; ZREVRANK pipelined: %.0f/s
                    ZREVRANK one round trip: p50 %.3f ms, p99 %.3f ms; ZREVRANGE 100: p50 %.3f ms, p99 %.3f ms
                    """, members, fillSeconds, updatesPerSecond, ranksPerSecond, rankP50Milliseconds, rankP99Milliseconds,
                rangeP50Milliseconds, rangeP99Milliseconds)
        }
    }

    static func run(executable: String, members: Int) throws -> Figures {
        guard FileManager.default.isExecutableFile(atPath: executable) else {
            throw BenchError("\(executable) is missing: apt-get install -y redis-server (or pass --redis-server PATH)")
        }
        let redis = try RedisAnchor(executable: executable)
        var generator = SystemRandomNumberGenerator()
        let batch = 1000

        var started = ContinuousClock.now
        for first in stride(from: 0, to: members, by: batch) {
            try redis.pipeline((first..<min(first + batch, members)).map { ["ZADD", "board", "\(($0 * 7919) % 1_000_003)", "p\($0)"] })
        }
        let fillSeconds = secondsSince(started)

        started = ContinuousClock.now
        var updates = 0
        while secondsSince(started) < 2 {
            try redis.pipeline(
                (0..<batch).map { _ in
                    ["ZADD", "board", "GT", "\(Int.random(in: 0..<2_000_000, using: &generator))", "p\(Int.random(in: 0..<members, using: &generator))"]
                })
            updates += batch
        }
        let updatesPerSecond = Double(updates) / secondsSince(started)

        started = ContinuousClock.now
        var ranks = 0
        while secondsSince(started) < 2 {
            try redis.pipeline((0..<batch).map { _ in ["ZREVRANK", "board", "p\(Int.random(in: 0..<members, using: &generator))"] })
            ranks += batch
        }
        let ranksPerSecond = Double(ranks) / secondsSince(started)

        var rankLatencies: [Double] = [], rangeLatencies: [Double] = []
        for _ in 0..<5000 {
            let one = ContinuousClock.now
            try redis.pipeline([["ZREVRANK", "board", "p\(Int.random(in: 0..<members, using: &generator))"]])
            rankLatencies.append(secondsSince(one) * 1000)
            let start = Int.random(in: 0..<(members - 100), using: &generator)
            let range = ContinuousClock.now
            try redis.pipeline([["ZREVRANGE", "board", "\(start)", "\(start + 99)", "WITHSCORES"]])
            rangeLatencies.append(secondsSince(range) * 1000)
        }
        rankLatencies.sort()
        rangeLatencies.sort()
        return Figures(
            members: members, fillSeconds: fillSeconds, updatesPerSecond: updatesPerSecond, ranksPerSecond: ranksPerSecond,
            rankP50Milliseconds: percentile(rankLatencies, 0.5), rankP99Milliseconds: percentile(rankLatencies, 0.99),
            rangeP50Milliseconds: percentile(rangeLatencies, 0.5), rangeP99Milliseconds: percentile(rangeLatencies, 0.99))
    }
}
