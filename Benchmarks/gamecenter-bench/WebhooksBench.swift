import ArgumentParser
import AsyncHTTPClient
import Foundation
import GameCenterProtocol
import GameCenterServer
import Histogram
import Hummingbird
import Logging
import NIOCore
import Synchronization

/// `gamecenter-bench webhooks`: score events delivered per second to a webhook receiver on loopback, and the time from
/// a report's commit (its answer) to the receiver having its event, p50 and p99; against the anchor, the same reports
/// stored with no endpoint (the events' database writes alone), in the same run on the same engine.
struct WebhooksBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "webhooks",
        abstract: "Score events delivered/s to a loopback receiver and commit-to-delivery p50/p99, vs the same reports stored with no endpoint."
    )

    static let bundleID = "com.example.hooks"
    static let adminKey = "bench-admin-key-0123456789abcdef"

    @Option(help: "Reports (events) per run.") var events = 3000
    @Option(help: "Reports in flight at once (one player each).") var concurrency = 8
    @Option(help: "Database (default: a new SQLite file in a temporary folder).") var database: String?
    @Option(help: "Reports per second, spread evenly (default: as fast as they are answered).") var rate: Double?

    func validate() throws {
        guard events > 0, (1...256).contains(concurrency), (rate ?? 1) > 0 else { throw ValidationError("--events > 0, --concurrency 1…256, --rate > 0") }
    }

    func run() async throws {
        var logger = Logger(label: "bench") { StreamLogHandler.standardError(label: $0) }
        logger.logLevel = .warning
        let manifest = """
            bundleID: \(Self.bundleID)
            name: Hooks
            leaderboards:
              - { category: hooks.score, default: true, title: { en: Score }, format: integer }
            """
        let receiver = try await Receiver.start(logger: logger)
        let server = try await BenchServer.start(manifest: manifest, database: database, logger: logger, adminKey: Self.adminKey)
        do {
            try await measure(server: server, receiver: receiver)
        } catch {
            await server.stop()
            receiver.task.cancel()
            throw error
        }
        await server.stop()
        receiver.task.cancel()
    }

    private func measure(server: BenchServer, receiver: Receiver) async throws {
        print(
            "gamecenter-bench webhooks — \(events) score reports, \(concurrency) in flight\(rate.map { ", \(Int($0)) per second" } ?? ""), "
                + "\(ProcessInfo.processInfo.activeProcessorCount) cores; "
                + "storage: \(database ?? "SQLite (temporary file), synchronous=FULL")")
        let client = HTTPClient.shared
        let tokens = try await BenchPlayers.signUpMany(client: client, port: server.port, count: concurrency, bundleID: Self.bundleID)
        let anchor = try await report(values: 0..<events, tokens: tokens, port: server.port, rate: nil)
        print(String(format: "anchor: the same reports stored with no webhook endpoint: %.0f reports/s", Double(events) / anchor.elapsed))

        var request = HTTPClientRequest(url: "http://127.0.0.1:\(server.port)/admin/v1/webhooks")
        request.method = .POST
        request.headers.add(name: "Authorization", value: "Bearer \(Self.adminKey)")
        request.headers.add(name: "Content-Type", value: "application/json")
        let endpoint = WebhookEndpointCreateRequest(
            bundleID: Self.bundleID, environment: .sandbox, url: "http://127.0.0.1:\(receiver.port)/hooks", events: [.scoreAccepted])
        request.body = .bytes(ByteBuffer(bytes: try JSONEncoder().encode(endpoint)))
        let created = try await client.execute(request, timeout: .seconds(10))
        _ = try await created.body.collect(upTo: 1 << 16)
        guard created.status == .created else { throw BenchError("adding the endpoint: HTTP \(created.status.code)") }

        let values = events..<(2 * events)
        let run = try await report(values: values, tokens: tokens, port: server.port, rate: rate)
        let deadline = ContinuousClock.now + .seconds(120)
        while receiver.arrivals().count < events, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(20))
        }
        let arrivals = receiver.arrivals()
        guard arrivals.count >= events else { throw BenchError("only \(arrivals.count) of \(events) events arrived within 120 s") }
        var latency = Histogram<UInt64>(highestTrackableValue: 600_000_000, numberOfSignificantValueDigits: .three)
        var last = run.start
        for value in values {
            guard let arrived = arrivals[value], let answered = run.answered[value] else { continue }
            last = max(last, arrived)
            latency.record(UInt64(max(0, (arrived - answered).microseconds)))
        }
        let spread = (last - run.start).seconds
        print(
            String(
                format: "webhooks: %d events delivered in %.2f s from the first report: %.0f events/s (reports stored %.0f/s meanwhile); "
                    + "commit to delivery p50 %.1f ms, p99 %.1f ms, max %.1f ms (goal: p99 ≤ 100 ms); %.2fx the anchor's reports/s"
                    + (rate == nil ? "" : " (paced: the anchor is not)"),
                events, spread, Double(events) / spread, Double(events) / run.elapsed, Double(latency.valueAtPercentile(50)) / 1000,
                Double(latency.valueAtPercentile(99)) / 1000, Double(latency.max) / 1000, (Double(events) / spread) / (Double(events) / anchor.elapsed)))
    }

    /// Reports one score per value, `concurrency` at once; when each was answered.
    private func report(values: Range<Int>, tokens: [String], port: Int, rate: Double?) async throws
        -> (start: ContinuousClock.Instant, elapsed: Double, answered: [Int: ContinuousClock.Instant])
    {
        let progress = Progress(next: values.lowerBound)
        let start = ContinuousClock.now
        try await withThrowingTaskGroup(of: Void.self) { group in
            for token in tokens {
                group.addTask {
                    while true {
                        let value = progress.next.withLock { value -> Int? in
                            guard value < values.upperBound else { return nil }
                            defer { value += 1 }
                            return value
                        }
                        guard let value else { return }
                        if let rate {
                            let due = start + .nanoseconds(Int64(Double(value - values.lowerBound) / rate * 1e9))
                            if due > .now { try await Task.sleep(until: due) }
                        }
                        let batch = ScoreReportBatch(
                            reportID: UUID().uuidString, scores: [ScoreReport(category: "hooks.score", value: Int64(value), context: 0)])
                        let headers = [(DeviceHeader.bundleID, Self.bundleID), (DeviceHeader.environment, "sandbox"), ("Authorization", "Bearer \(token)")]
                        _ = try await BenchPlayers.send(
                            HTTPClient.shared, "POST", "http://127.0.0.1:\(port)/v1/scores", headers, batch, as: ScoreReportResult.self)
                        let now = ContinuousClock.now
                        progress.answered.withLock { $0[value] = now }
                    }
                }
            }
            try await group.waitForAll()
        }
        return (start, (ContinuousClock.now - start).seconds, progress.answered.withLock { $0 })
    }

    /// The next value to report, and when each was answered.
    private final class Progress: Sendable {
        let next: Mutex<Int>
        let answered = Mutex<[Int: ContinuousClock.Instant]>([:])

        init(next: Int) {
            self.next = Mutex(next)
        }
    }

    /// A webhook endpoint on loopback: notes when each score value's event arrived.
    struct Receiver: Sendable {
        let port: Int
        let task: Task<Void, any Error>
        private let box: ArrivalBox
        /// When each score value's event first arrived.
        func arrivals() -> [Int: ContinuousClock.Instant] { box.arrivals.withLock { $0 } }

        private init(port: Int, task: Task<Void, any Error>, box: ArrivalBox) {
            self.port = port
            self.task = task
            self.box = box
        }

        private final class ArrivalBox: Sendable {
            let arrivals = Mutex<[Int: ContinuousClock.Instant]>([:])
        }

        static func start(logger: Logger) async throws -> Receiver {
            let box = ArrivalBox()
            let router = Router()
            router.post("hooks") { request, _ -> HTTPResponse.Status in
                let body = try await request.body.collect(upTo: 1 << 20)
                let event = try JSONDecoder().decode(Event.self, from: Data(buffer: body))
                let now = ContinuousClock.now
                box.arrivals.withLock { $0[event.data.value] = $0[event.data.value] ?? now }
                return .noContent
            }
            let (ports, continuation) = AsyncStream.makeStream(of: Int.self)
            let app = Application(
                router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)),
                onServerRunning: { channel in continuation.yield(channel.localAddress?.port ?? 0) }, logger: logger)
            let task = Task { try await app.runService() }
            var iterator = ports.makeAsyncIterator()
            guard let port = await iterator.next() else { throw BenchError("the receiver did not start") }
            return Receiver(port: port, task: task, box: box)
        }

        private struct Event: Decodable {
            struct Score: Decodable { var value: Int }
            var data: Score
        }
    }
}

extension Duration {
    /// In seconds.
    var seconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
    /// In whole microseconds.
    var microseconds: Int64 { components.seconds * 1_000_000 + components.attoseconds / 1_000_000_000_000 }
}
