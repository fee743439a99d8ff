import Foundation
import GameCenterProtocol
import GameCenterStorage
import Testing
@testable import GameCenterServer

/// A rule-based queue's metrics: the quantile sketch's accuracy, and Poisson arrivals into a real queue (its rules,
/// passes, matches and cancellations) for three hours of server time, counted, flushed into a real database and read
/// back at each of Apple's granularities against the truth the test kept itself.
@Suite struct QueueMetricsTests {
    @Test func aSketchsQuantilesAreWithinOnePercentAndMergingCountsEveryValue() {
        var generator = SplitMix(seed: 7)
        var whole = QuantileSketch()
        var halves = (QuantileSketch(), QuantileSketch())
        var values: [Double] = []
        for index in 0..<20_000 {
            // Log-uniform from a millisecond to an hour, and some zeros.
            let value = index % 50 == 0 ? 0 : pow(10, Double(generator.next() % 6_557) / 1000 - 3)
            values.append(value)
            whole.add(value)
            if index % 2 == 0 { halves.0.add(value) } else { halves.1.add(value) }
        }
        values.sort()
        for q in [0.01, 0.25, 0.5, 0.9, 0.95, 0.99, 1] {
            let truth = values[Int((q * Double(values.count)).rounded(.up)) - 1]
            let reported = whole.quantile(q)
            #expect(abs(reported - truth) <= QuantileSketch.accuracy * truth + QuantileSketch.floor, "q \(q): \(reported) vs \(truth)")
        }
        #expect(whole.quantile(0.01) == 0, "the zeros count")
        var merged = halves.0
        merged.merge(halves.1)
        #expect(merged.count == whole.count && merged.zeros == whole.zeros && merged.buckets == whole.buckets)
        #expect(abs(merged.sum - whole.sum) < 1e-9 * whole.sum, "the sum, up to the order of the additions")
        #expect(abs(whole.average - values.reduce(0, +) / Double(values.count)) < 1e-9 * whole.average)
        #expect(QuantileSketch().quantile(0.5) == 0 && QuantileSketch().average == 0)
    }

    static let engines = ["sqlite"] + (SharedDatabaseNodesTests.postgresURL == nil ? [] : ["postgres"])

    @Test(arguments: engines)
    func poissonArrivalsAreReportedAtEveryGranularityWithinFivePercentOfTheTruth(engine: String) async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("queue-metrics-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = engine == "postgres" ? try await SharedDatabaseNodesTests.freshDatabase() : "sqlite:\(folder.path)/db.sqlite"
        try await Database.withDatabase(url: url) { database in
            let rules = RuleMatcherTests.ruleSet(
                2, 2, [try RuleMatcherTests.rule("SkillWindow", .match, "diff(players[].properties.skill) <= `10`")])
            let key = RuleQueues.Key(game: "com.example.metrics\nsandbox", queue: "com.example.Ranked", hosted: false)
            let queue = QueueMetrics.Queue(key)
            #expect(queue == QueueMetrics.Queue(bundleID: "com.example.metrics", environment: "sandbox", queue: "com.example.Ranked"))
            var queues = RuleQueues()
            let metrics = QueueMetrics()
            var generator = SplitMix(seed: 42)
            func exponential(mean: Double) -> Int64 { Int64(-mean * log(1 - Double(generator.next() % 1_000_000) / 1_000_001)) }

            // Three hours of server time from a day's start, in 1 s steps (a pass's delay is shorter): arrivals every
            // 4 s on average, each with a skill of 0–99 and a patience of 60 s on average (then it is cancelled). The
            // test yields at each step: it runs beside hundreds of others on two cores.
            let start: Int64 = 1_790_000_000_000 / 86_400_000 * 86_400_000
            let end = start + 3 * 3_600_000
            var truth: [(left: Int64, result: String, seconds: Double)] = []
            var arrival: [UInt64: Int64] = [:]
            var patience: [(at: Int64, ticket: UInt64)] = []
            var nextArrival = start + exponential(mean: 4000)
            var (ticket, passes, matches): (UInt64, Int, Int) = (0, 0, 0)
            var passesPerQuarter: [Int64: Int] = [:]
            var now = start
            while now < end {
                while nextArrival <= now {
                    ticket += 1
                    let request = RuleQueuesTests.request(ticket, skill: Double(generator.next() % 100), ruleSet: rules, arrival: now)
                    queues.enqueue(request, playerID: "G:\(ticket)", key: key, ruleSet: rules, experiment: nil, now: now)
                    arrival[ticket] = now
                    patience.append((now + exponential(mean: 60_000), ticket))
                    nextArrival += exponential(mean: 4000)
                }
                for gone in patience.filter({ $0.at <= now }) where queues.remove(TicketID(gone.ticket)) {
                    truth.append((now, "CANCELED", Double(now - arrival[gone.ticket]!) / 1000))
                }
                patience.removeAll { $0.at <= now }
                for pass in queues.takeDuePasses(now: now) {
                    passes += 1
                    passesPerQuarter[QueueMetrics.bucketStart(now), default: 0] += 1
                    metrics.record(queue, at: now) { $0.queueSizes.add(Double(pass.requests.count)) }
                    let result = pass.matcher.pass(pass.requests, now: now)
                    let (outcome, _) = queues.apply(result.matches, key: pass.key, now: now)
                    for started in outcome.started {
                        matches += 1
                        metrics.record(queue, at: now) { $0.matchSizes.add(Double(started.members.count)) }
                        for member in started.members {
                            guard case .ticket(let id, _) = member else { continue }
                            truth.append((now, "MATCHED", Double(now - arrival[id.rawValue]!) / 1000))
                        }
                    }
                }
                metrics.count(queues.takeDepartures(), now: now)
                if (now - start) % 300_000 == 0 { try await metrics.flush(into: database, now: now) }
                now += 1000
                await Task.yield()
            }
            try await metrics.flush(into: database, now: now)
            #expect(truth.count > 2_000 && truth.contains { $0.result == "CANCELED" } && matches > 500, "\(truth.count) left, \(matches) matches")

            // Read back by a node that counted nothing itself: every figure comes from the database.
            for granularity in QueueMetrics.Granularity.allCases {
                let series = try await QueueMetrics().series(queue, granularity: granularity, now: end - 1, from: database)
                #expect(series.dataPoints.count == granularity.points && series.granularity == granularity.rawValue)
                #expect(
                    series.dataPoints.last.map { $0.end.timeIntervalSince1970 * 1000 } == Double(end - 1 - (end - 1) % granularity.millis + granularity.millis))
                for point in series.dataPoints {
                    let (from, to) = (Int64(point.start.timeIntervalSince1970 * 1000), Int64(point.end.timeIntervalSince1970 * 1000))
                    let inside = truth.filter { $0.left >= from && $0.left < to }
                    for result in ["MATCHED", "CANCELED"] {
                        let seconds = inside.filter { $0.result == result }.map(\.seconds).sorted()
                        let values = point.requests[result]
                        #expect(Int(values?.count ?? 0) == seconds.count, "\(granularity) \(from) \(result)")
                        guard let values, !seconds.isEmpty else { continue }
                        #expect(values.playerCount == values.count)
                        for (q, reported) in [(0.5, values.p50SecondsInQueue), (0.95, values.p95SecondsInQueue)] {
                            let exact = seconds[Int((q * Double(seconds.count)).rounded(.up)) - 1]
                            #expect(abs(reported - exact) <= 0.05 * exact + 0.001, "\(granularity) \(from) \(result) p\(Int(q * 100)): \(reported) vs \(exact)")
                        }
                        #expect(abs(values.averageSecondsInQueue - seconds.reduce(0, +) / Double(seconds.count)) < 0.001)
                    }
                    let sampled = passesPerQuarter.filter { $0.key >= from && $0.key < to }.values.reduce(0, +)
                    #expect(Int(point.queueSizes.count) == sampled)
                    let matched = inside.filter { $0.result == "MATCHED" }.count
                    #expect(Int(point.sessions.count) * 2 == matched && (matched == 0 || point.sessions.averagePlayerCount == 2))
                }
                let total = series.dataPoints.reduce(0) { $0 + Int($1.requests.values.reduce(0) { $0 + $1.count }) }
                #expect(total == truth.count, "\(granularity): every request that left is in the window")
            }
            #expect(passes > 0)

            // Thirty days on, the next flush forgets them.
            metrics.record(queue, at: end + QueueMetrics.keptMillis + 1) { $0.queueSizes.add(1) }
            try await metrics.flush(into: database, now: end + QueueMetrics.keptMillis + 1)
            let kept = try await database.read { storage in
                try await storage.queueMetrics(
                    bundleID: queue.bundleID, environment: queue.environment, queue: queue.queue, from: 0, to: .max)
            }
            #expect(kept.map(\.start) == [QueueMetrics.bucketStart(end + QueueMetrics.keptMillis + 1)])
        }
    }
}

/// A small deterministic generator (SplitMix64), so that a failure replays.
struct SplitMix: RandomNumberGenerator {
    var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
