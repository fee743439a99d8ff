import ArgumentParser
import AsyncHTTPClient
import Crypto
import Foundation
import GameCenterProtocol
import Histogram
import Logging
import NIOCore
import Synchronization

/// `gamecenter-bench signed-reports`: score reports to a leaderboard whose write policy is `signed` (each carrying its
/// session's counter and HMAC, checked and its counter taken in storage) against the anchor, the same reports to an
/// `open` board, through the server over HTTP in the same run; rounds alternate so that both see the same machine.
struct SignedReportsBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "signed-reports",
        abstract: "Signed score reports/s and p50/p99 vs the same reports to an open board (the anchor), alternating rounds.")

    static let bundleID = "com.example.signed"

    @Option(help: "Reports per round.") var reports = 3000
    @Option(help: "Rounds of each kind (alternating, open first).") var rounds = 3
    @Option(help: "Reports in flight at once (one player each).") var concurrency = 8
    @Option(help: "Database (default: a new SQLite file in a temporary folder).") var database: String?

    func validate() throws {
        guard reports > 0, rounds > 0, (1...256).contains(concurrency) else { throw ValidationError("--reports > 0, --rounds > 0, --concurrency 1…256") }
    }

    func run() async throws {
        var logger = Logger(label: "bench") { StreamLogHandler.standardError(label: $0) }
        logger.logLevel = .warning
        let manifest = """
            bundleID: \(Self.bundleID)
            name: Signed
            leaderboards:
              - { category: signed.open, default: true, title: { en: Open }, format: integer }
              - { category: signed.signed, title: { en: Signed }, format: integer, writePolicy: signed }
            """
        let server = try await BenchServer.start(manifest: manifest, database: database, logger: logger)
        do {
            try await measure(port: server.port)
        } catch {
            await server.stop()
            throw error
        }
        await server.stop()
    }

    private func measure(port: Int) async throws {
        print(
            "gamecenter-bench signed-reports — \(rounds) rounds of \(reports) reports of each kind, \(concurrency) in flight, "
                + "\(ProcessInfo.processInfo.activeProcessorCount) cores; storage: \(database ?? "SQLite (temporary file), synchronous=FULL")")
        let tokens = try await BenchPlayers.signUpMany(client: HTTPClient.shared, port: port, count: concurrency, bundleID: Self.bundleID)
        var keys: [Signer] = []
        for token in tokens {
            let key = try await BenchPlayers.send(
                HTTPClient.shared, "POST", "http://127.0.0.1:\(port)/v1/report-keys", headers(token), NoBody(), as: ReportKey.self)
            keys.append(Signer(key: SymmetricKey(data: Data(base64Encoded: key.key)!)))
        }
        var open = Histogram<UInt64>(highestTrackableValue: 60_000_000, numberOfSignificantValueDigits: .three)
        var signed = open
        var openSeconds = 0.0, signedSeconds = 0.0
        for _ in 0..<rounds {
            let (openElapsed, openLatency) = try await round(category: "signed.open", tokens: tokens, signers: nil, port: port)
            openSeconds += openElapsed
            open.add(openLatency)
            let (signedElapsed, signedLatency) = try await round(category: "signed.signed", tokens: tokens, signers: keys, port: port)
            signedSeconds += signedElapsed
            signed.add(signedLatency)
        }
        let total = Double(reports * rounds)
        func line(_ name: String, _ seconds: Double, _ latency: Histogram<UInt64>) -> String {
            String(
                format: "%@: %.0f reports/s, p50 %.2f ms, p99 %.2f ms", name, total / seconds, Double(latency.valueAtPercentile(50)) / 1000,
                Double(latency.valueAtPercentile(99)) / 1000)
        }
        print("anchor, " + line("open board", openSeconds, open))
        print(line("signed board", signedSeconds, signed))
        print(
            String(
                format: "signed vs open: %.2fx the reports/s; %+.1f %% time per report (goal: at most +10 %%)", openSeconds / signedSeconds,
                (signedSeconds / openSeconds - 1) * 100))
    }

    /// One round: `reports` reports, `concurrency` at once, each player's in turn; elapsed seconds and latencies (µs).
    private func round(category: String, tokens: [String], signers: [Signer]?, port: Int) async throws -> (Double, Histogram<UInt64>) {
        let next = NextValue()
        let start = ContinuousClock.now
        let latency = try await withThrowingTaskGroup(of: Histogram<UInt64>.self) { group in
            for (index, token) in tokens.enumerated() {
                group.addTask {
                    var latency = Histogram<UInt64>(highestTrackableValue: 60_000_000, numberOfSignificantValueDigits: .three)
                    while true {
                        let value = next.value.withLock { value -> Int? in
                            guard value < reports else { return nil }
                            defer { value += 1 }
                            return value
                        }
                        guard let value else { return latency }
                        let body = try WireCoding.makeEncoder().encode(
                            ScoreReportBatch(reportID: UUID().uuidString, scores: [ScoreReport(category: category, value: Int64(value), context: 0)]))
                        var request = HTTPClientRequest(url: "http://127.0.0.1:\(port)/v1/scores")
                        request.method = .POST
                        request.headers.add(contentsOf: headers(token))
                        request.headers.add(name: "Content-Type", value: "application/json")
                        if let signer = signers?[index] { request.headers.add(contentsOf: signer.sign(body)) }
                        request.body = .bytes(ByteBuffer(bytes: body))
                        let sent = ContinuousClock.now
                        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(30))
                        _ = try await response.body.collect(upTo: 1 << 16)
                        guard response.status == .ok else { throw BenchError("a report to \(category): HTTP \(response.status.code)") }
                        latency.record(UInt64(max(0, (ContinuousClock.now - sent).microseconds)))
                    }
                }
            }
            var all = Histogram<UInt64>(highestTrackableValue: 60_000_000, numberOfSignificantValueDigits: .three)
            for try await part in group { all.add(part) }
            return all
        }
        return ((ContinuousClock.now - start).seconds, latency)
    }

    /// The next report's value, shared by a round's players.
    private final class NextValue: Sendable {
        let value = Mutex(0)
    }

    /// An empty JSON object.
    private struct NoBody: Encodable {}

    private func headers(_ token: String) -> [(String, String)] {
        [(DeviceHeader.bundleID, Self.bundleID), (DeviceHeader.environment, "sandbox"), ("Authorization", "Bearer \(token)")]
    }

    /// One player's key and counter (one report of theirs in flight at a time, so counters arrive in order).
    private final class Signer: Sendable {
        let key: SymmetricKey
        let counter = Mutex<Int64>(0)

        init(key: SymmetricKey) { self.key = key }

        func sign(_ body: Data) -> [(String, String)] {
            let counter = self.counter.withLock { counter -> Int64 in
                counter += 1
                return counter
            }
            return ReportSignature.headers(key: key, counter: counter, body: body)
        }
    }
}
