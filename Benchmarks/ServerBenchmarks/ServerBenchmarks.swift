import Benchmark
import Foundation
import GameCenterServer

/// The score formatter on one core, beside Foundation's `NumberFormatter` (its anchor). The rank index and the
/// matchmaking queue have their one home in `gamecenter-bench leaderboard` and `gamecenter-bench matchmaking`, which
/// run them beside their anchors (Redis, the queue's model) at 1–10 M entries and 100,000 waiting requests.
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
