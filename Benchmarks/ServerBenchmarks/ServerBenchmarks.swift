import Benchmark
import Foundation
import GameCenterServer

/// The server's hot in-process parts on one core: the rank index at a million entries, the matchmaking queue
/// with 10,000 waiting requests, and the score formatter beside Foundation's `NumberFormatter` (its anchor).
///
/// Run with `OPENGAMEKIT_BENCHMARKS=1 swift package benchmark --target ServerBenchmarks`. Names carry no spaces: the
/// harness finds a benchmark's committed threshold file by its name. Allocation counts are
/// exact and repeatable; the committed thresholds (`Benchmarks/Thresholds/`) hold them.
let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(
        metrics: [.wallClock, .mallocCountTotal, .throughput],
        scalingFactor: .kilo,
        maxDuration: .seconds(2),
        maxIterations: 1_000
    )

    Benchmark("RankIndex.set.1M", configuration: .init(setup: { _ = RankIndexFixture.shared })) { benchmark in
        let fixture = RankIndexFixture.shared
        for _ in benchmark.scaledIterations { blackHole(fixture.update()) }
    }
    Benchmark("RankIndex.rank.1M", configuration: .init(setup: { _ = RankIndexFixture.shared })) { benchmark in
        let fixture = RankIndexFixture.shared
        for _ in benchmark.scaledIterations { blackHole(fixture.rankOfRandomPlayer()) }
    }
    Benchmark("RankIndex.page100.1M", configuration: .init(scalingFactor: .one, setup: { _ = RankIndexFixture.shared })) {
        benchmark in
        let fixture = RankIndexFixture.shared
        for _ in benchmark.scaledIterations { blackHole(fixture.pageAtRandomRank()) }
    }

    Benchmark("MatchmakingQueue.enqueue.10kWaiting", configuration: .init(scalingFactor: .one, setup: { _ = QueueFixture.shared })) { benchmark in
        let fixture = QueueFixture.shared
        for _ in benchmark.scaledIterations { blackHole(fixture.enqueueArrival()) }
    }

    for (locale, format) in [("en", ScoreFormat.integer), ("de", .money2), ("en", .elapsedHundredth)] {
        let values = (0..<1_000).map { Int64($0) * 7_919_311 }
        Benchmark("ScoreFormatter.\(format.rawValue).\(locale)") { benchmark in
            for iteration in benchmark.scaledIterations {
                blackHole(ScoreFormatter.shared.format(values[iteration % 1_000], format: format, currency: "EUR", suffix: nil, locale: locale))
            }
        }
    }
    Benchmark("Anchor.NumberFormatter.currency.de") { benchmark in
        let formatter = NumberFormatter()
        formatter.locale = Locale(identifier: "de")
        formatter.numberStyle = .currency
        formatter.currencyCode = "EUR"
        let values = (0..<1_000).map { NSNumber(value: Double($0) * 79_193.11) }
        for iteration in benchmark.scaledIterations { blackHole(formatter.string(from: values[iteration % 1_000])) }
    }
}
