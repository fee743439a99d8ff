import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A closed-loop HTTP/1.1 load from one thread: `concurrency` kept-alive connections, each sending its next request as
/// soon as its last answer has arrived, all of them watched with one `poll(2)`. It takes a fraction of the CPU an
/// `HTTPClient` with its event loops and tasks does per request, so that on a machine the load generator shares with
/// the server and the database, less of the cores goes to generating the load. Answers must carry `Content-Length`.
/// `@unchecked Sendable`: its state is used by one thread at a time (``measure(seconds:probe:)`` waits for each run's
/// thread to end before the next starts).
final class LeanLoad: @unchecked Sendable {
    /// A request to `path` on 127.0.0.1:`port`, with `headers` on every request and `perWorkerHeaders[worker]` on that
    /// worker's: a POST of the JSON `body(worker, n)` as the n-th body of a worker (reports need unique ids), or a GET
    /// when there is no body.
    struct Request {
        var port: Int
        var path: String
        var headers: [(String, String)]
        var perWorkerHeaders: [[(String, String)]] = []
        var body: (@Sendable (_ worker: Int, _ n: Int) -> [UInt8])?
    }

    private let request: Request
    private let sockets: [Int32]
    private let prefixes: [[UInt8]]

    /// Opens `concurrency` connections to the server.
    init(_ request: Request, concurrency: Int) throws {
        self.request = request
        var sockets: [Int32] = []
        for _ in 0..<concurrency {
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = in_port_t(UInt16(request.port).bigEndian)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            guard fd >= 0, connected == 0 else {
                for open in sockets + [fd] where open >= 0 { close(open) }
                throw LeanLoadError(description: "could not connect to 127.0.0.1:\(request.port): errno \(errno)")
            }
            var on: Int32 = 1
            setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &on, socklen_t(MemoryLayout<Int32>.size))
            sockets.append(fd)
        }
        self.sockets = sockets
        self.prefixes = (0..<concurrency).map { worker in
            let headers = request.headers + (worker < request.perWorkerHeaders.count ? request.perWorkerHeaders[worker] : [])
            let lines = headers.map { "\($0.0): \($0.1)\r\n" }.joined()
            let method = request.body == nil ? "GET" : "POST"
            let contentType = request.body == nil ? "" : "Content-Type: application/json\r\n"
            return Array("\(method) \(request.path) HTTP/1.1\r\nHost: 127.0.0.1:\(request.port)\r\n\(lines)\(contentType)".utf8)
        }
    }

    deinit {
        for fd in sockets { close(fd) }
    }

    /// Warms up, then measures with `probe` read just before and just after the measured run (as ``LoadRun`` does).
    func measure<Probe>(seconds: Double, probe: () async throws -> Probe) async throws -> (result: LoadRun.Result, before: Probe, after: Probe) {
        _ = try await runFor(seconds: min(1, seconds / 4))
        let before = try await probe()
        let result = try await runFor(seconds: seconds)
        return (result, before, try await probe())
    }

    /// Runs the loop on a thread of its own (it blocks in `poll`), for `seconds`, then lets the requests in flight end.
    private func runFor(seconds: Double) async throws -> LoadRun.Result {
        try await withCheckedThrowingContinuation { continuation in
            let thread = Thread { [self] in
                continuation.resume(with: Result { try loop(seconds: seconds) })
            }
            thread.start()
        }
    }

    private var sent = 0

    private func loop(seconds: Double) throws -> LoadRun.Result {
        let start = ContinuousClock.now
        let deadline = start + .milliseconds(Int64(seconds * 1000))
        var descriptors = sockets.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
        var received = Array(repeating: [UInt8](), count: sockets.count)
        var sentAt = Array(repeating: start, count: sockets.count)
        var latencies: [Double] = []
        var errors = 0
        var inFlight = 0
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        for worker in sockets.indices {
            try send(worker)
            sentAt[worker] = .now
            inFlight += 1
        }
        while inFlight > 0 {
            guard poll(&descriptors, nfds_t(descriptors.count), 1_000) >= 0 || errno == EINTR else {
                throw LeanLoadError(description: "poll failed: errno \(errno)")
            }
            for worker in descriptors.indices where descriptors[worker].revents != 0 {
                let count = chunk.withUnsafeMutableBytes { recv(sockets[worker], $0.baseAddress, $0.count, 0) }
                guard count > 0 else { throw LeanLoadError(description: "the server closed a connection (errno \(errno))") }
                received[worker].append(contentsOf: chunk[0..<count])
                while let (status, length) = try Self.answer(in: received[worker]) {
                    received[worker].removeFirst(length)
                    let (s, atto) = (ContinuousClock.now - sentAt[worker]).components
                    latencies.append(Double(s) * 1000 + Double(atto) / 1e15)
                    if status != 200 { errors += 1 }
                    inFlight -= 1
                    if ContinuousClock.now < deadline {
                        try send(worker)
                        sentAt[worker] = .now
                        inFlight += 1
                    }
                }
            }
        }
        let (s, atto) = (ContinuousClock.now - start).components
        return LoadRun.Result(
            requests: latencies.count, errors: errors, elapsed: Double(s) + Double(atto) / 1e18,
            p50: percentile(latencies, 0.5), p99: percentile(latencies, 0.99))
    }

    /// Writes worker `worker`'s next request in full.
    private func send(_ worker: Int) throws {
        let body = request.body?(worker, sent)
        sent += 1
        let bytes = prefixes[worker] + Array((body.map { "Content-Length: \($0.count)\r\n" } ?? "").utf8) + [13, 10] + (body ?? [])
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { Glibc.send(sockets[worker], $0.baseAddress! + offset, bytes.count - offset, Int32(MSG_NOSIGNAL)) }
            guard written > 0 else { throw LeanLoadError(description: "sending a request failed: errno \(errno)") }
            offset += written
        }
    }

    /// The status and total length of the first complete answer in `bytes`, nil while it is incomplete.
    private static func answer(in bytes: [UInt8]) throws -> (status: Int, length: Int)? {
        let end: [UInt8] = [13, 10, 13, 10]
        guard bytes.count >= 12, let headerEnd = bytes.firstRange(of: end)?.upperBound else { return nil }
        let head = String(decoding: bytes[..<headerEnd], as: UTF8.self)
        guard let status = Int(head.dropFirst(9).prefix(3)) else { throw LeanLoadError(description: "not an HTTP answer: \(head.prefix(40))") }
        guard
            let line = head.split(separator: "\r\n").first(where: { $0.lowercased().hasPrefix("content-length:") }),
            let length = Int(line.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces))
        else { throw LeanLoadError(description: "an answer without Content-Length: \(head.prefix(200))") }
        let total = headerEnd + length
        return bytes.count >= total ? (status, total) : nil
    }
}

/// The lean load generator could not go on.
struct LeanLoadError: Error, CustomStringConvertible {
    let description: String
}
