import Foundation
import GameCenterServer
import OpenGameKitLAN
import NetworkFaultProxy

/// The in-process rank index on one core: bulk build, score updates, rank and range queries, memory per entry.
enum RankIndexBenchmark {
    struct Figures {
        var entries: Int
        var buildSeconds: Double
        var updatesPerSecond: Double
        var rankMeanMicroseconds: Double
        var rankP99Microseconds: Double
        var rangeMeanMicroseconds: Double
        var bytesPerEntry: Double
        var residentBytesPerEntry: Double

        var summary: String {
            String(
                format: """
                    %d entries: bulk build %.3f s; %.0f updates/s; rank mean %.3f µs (p99 of 1000-query batches %.3f µs); \
                    range of 100 mean %.2f µs; %.1f B/entry allocated (%.1f B/entry resident)
                    """, entries, buildSeconds, updatesPerSecond, rankMeanMicroseconds, rankP99Microseconds, rangeMeanMicroseconds,
                bytesPerEntry, residentBytesPerEntry)
        }
    }

    static func run(entries count: Int) -> Figures {
        var generator = SplitMix64(seed: UInt64(count))
        let keys = (0..<count).map { player in
            (player: UInt32(player), key: RankKey(order: generator.next() >> 20, tiebreak: UInt64(player)))
        }
        let residentBefore = residentBytes()
        var started = ContinuousClock.now
        let index = RankIndex(entries: keys)
        let buildSeconds = secondsSince(started)
        let residentAfter = residentBytes()

        let updates = 2_000_000
        var tiebreak = UInt64(count)
        started = ContinuousClock.now
        for _ in 0..<updates {
            tiebreak += 1
            index.set(player: UInt32(generator.next() % UInt64(count)), key: RankKey(order: generator.next() >> 20, tiebreak: tiebreak))
        }
        let updatesPerSecond = Double(updates) / secondsSince(started)

        var batches: [Double] = []
        var sink = 0
        for _ in 0..<1000 {
            let batch = ContinuousClock.now
            for _ in 0..<1000 { sink &+= index.rank(of: UInt32(generator.next() % UInt64(count))) ?? 0 }
            batches.append(secondsSince(batch) * 1e6 / 1000)
        }
        batches.sort()
        started = ContinuousClock.now
        let ranges = 100_000
        for _ in 0..<ranges {
            let start = Int(generator.next() % UInt64(count - 100)) + 1
            sink &+= index.entries(in: start...(start + 99)).count
        }
        let rangeMean = secondsSince(started) * 1e6 / Double(ranges)
        if sink == 42 { print("") }  // keeps the queries from being optimized away
        return Figures(
            entries: count, buildSeconds: buildSeconds, updatesPerSecond: updatesPerSecond,
            rankMeanMicroseconds: batches.reduce(0, +) / Double(batches.count), rankP99Microseconds: percentile(batches, 0.99),
            rangeMeanMicroseconds: rangeMean, bytesPerEntry: Double(index.allocatedBytes) / Double(count),
            residentBytesPerEntry: Double(residentAfter - residentBefore) / Double(count)
        )
    }

    /// Resident memory of this process, from /proc/self/statm.
    private static func residentBytes() -> Int {
        guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8),
            let pages = Int(text.split(separator: " ").dropFirst().first ?? "")
        else { return 0 }
        return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
    }
}
