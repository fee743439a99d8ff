import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1

/// A closed-loop load: `concurrency` workers each send the next request as soon as the last one answered.
struct LoadRun {
    let client: HTTPClient
    let url: String
    let headers: [(String, String)]
    /// The body of the n-th request of a worker (reports need unique ids).
    let body: @Sendable (_ worker: Int, _ n: Int) -> Data
    let concurrency: Int
    let seconds: Double
    /// Extra headers per worker (e.g. each worker signed in as its own player).
    var perWorkerHeaders: [[(String, String)]] = []
    /// The request method; a GET sends no body.
    var method: HTTPMethod = .POST

    struct Result {
        var requests: Int
        var errors: Int
        var elapsed: Double
        /// Latencies in milliseconds.
        var p50: Double
        var p99: Double
        var requestsPerSecond: Double { Double(requests) / elapsed }

        func line(name: String) -> String {
            String(format: "%@: %.0f requests/s, p50 %.3f ms, p99 %.3f ms, %d errors", name, requestsPerSecond, p50, p99, errors)
        }
    }

    func measure() async throws -> Result {
        try await measure(probe: {}).result
    }

    /// Warms up, then measures with `probe` read just before and just after the measured run (a server's CPU time,
    /// its counters), so that the warm-up's requests are in neither.
    func measure<Probe>(probe: () async throws -> Probe) async throws -> (result: Result, before: Probe, after: Probe) {
        _ = try await runFor(seconds: min(1, seconds / 4))  // warm-up: connections, caches
        let before = try await probe()
        let result = try await runFor(seconds: seconds)
        return (result, before, try await probe())
    }

    private func runFor(seconds: Double) async throws -> Result {
        let start = ContinuousClock.now
        let deadline = start + .milliseconds(Int64(seconds * 1000))
        let perWorker = try await withThrowingTaskGroup(of: ([Double], Int).self) { group in
            for worker in 0..<concurrency {
                group.addTask {
                    var latencies: [Double] = []
                    var errors = 0
                    var request = HTTPClientRequest(url: url)
                    request.method = method
                    request.headers.add(contentsOf: headers)
                    if worker < perWorkerHeaders.count { request.headers.add(contentsOf: perWorkerHeaders[worker]) }
                    if method == .POST { request.headers.add(name: "Content-Type", value: "application/json") }
                    while ContinuousClock.now < deadline {
                        if method == .POST { request.body = .bytes(ByteBuffer(bytes: body(worker, latencies.count))) }
                        let sent = ContinuousClock.now
                        let response = try await client.execute(request, timeout: .seconds(10))
                        _ = try await response.body.collect(upTo: 1 << 20)
                        if response.status != .ok { errors += 1 }
                        let (s, atto) = (ContinuousClock.now - sent).components
                        latencies.append(Double(s) * 1000 + Double(atto) / 1e15)
                    }
                    return (latencies, errors)
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        let (s, atto) = (ContinuousClock.now - start).components
        let latencies = perWorker.flatMap(\.0)
        return Result(
            requests: latencies.count, errors: perWorker.reduce(0) { $0 + $1.1 },
            elapsed: Double(s) + Double(atto) / 1e18, p50: percentile(latencies, 0.5), p99: percentile(latencies, 0.99))
    }
}
