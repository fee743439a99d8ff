import Foundation
import Synchronization
import FoundationNetworking
import NetworkFaultProxy
import Testing

/// What a real server does with connections that misbehave: slow, unparsable, too many, more than its file
/// descriptors. Raw sockets, since no HTTP client sends such requests.
@Suite(.serialized, .timeLimit(.minutes(3))) struct ConnectionLimitsLiveTests {
    /// Sends `request` on a new connection and returns the answer, read until the server closes (at most 5 s).
    static func exchange(_ server: LiveServer, _ request: [UInt8], from source: String = "127.0.0.1") throws -> (text: String, closed: Bool) {
        let connection = try RawTCPConnection(port: server.port, from: source)
        connection.send(request)
        return connection.readUntilClosed(within: .seconds(5))
    }

    /// The status of `GET /healthz` on a new connection (0: no answer).
    static func health(_ server: LiveServer, from source: String = "127.0.0.1") -> Int {
        guard let connection = try? RawTCPConnection(port: server.port, from: source) else { return 0 }
        connection.send("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
        return RawTCPConnection.status(connection.readUntilClosed(within: .seconds(5)).text)
    }

    @Test func requestsTheParserRefusesAreAnsweredAndClosed() async throws {
        let server = try LiveServer(engine: "sqlite")
        try await server.start()
        let cases: [(name: String, request: [UInt8], status: Int, code: String)] = [
            (
                "1 MB of headers", Array("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: \(String(repeating: "a", count: 1 << 20))\r\n\r\n".utf8),
                431, "request.headers_too_large"
            ),
            (
                "a 100 KB URL", Array("GET /\(String(repeating: "a", count: 100_000)) HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".utf8),
                431, "request.headers_too_large"
            ),
            (
                "10,000 headers", Array("GET /healthz HTTP/1.1\r\n\((0..<10_000).map { "X-H\($0): v\r\n" }.joined())\r\n".utf8),
                431, "request.headers_too_large"
            ),
            (
                "invalid UTF-8 in the path", Array("GET /".utf8) + [0xFF, 0xFE, 0xC3] + Array(" HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".utf8),
                400, "request.malformed"
            ),
            (
                "non-HTTP bytes", [0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00, 0x01, 0xFC, 0x03, 0x03, 0x00, 0x00] + Array("\r\n\r\n".utf8),
                400, "request.malformed"
            ),
            (
                "Content-Length with Transfer-Encoding",
                Array("POST /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n".utf8),
                400, "request.malformed"
            ),
        ]
        for (name, request, status, code) in cases {
            let (answer, closed) = try Self.exchange(server, request)
            #expect(RawTCPConnection.status(answer) == status, "\(name): \(answer.prefix(200).debugDescription)")
            #expect(answer.lowercased().contains("connection: close"), "\(name)")
            #expect(answer.contains(#""code":"\#(code)""#), "\(name): \(answer.prefix(300).debugDescription)")
            #expect(closed, "\(name): the connection stayed open")
        }
        #expect(Self.health(server) == 200)
        try await server.stop()
    }

    /// Requests swift-nio's upgrade handler and HTTP encoder left without an answer (or without a body): each gets
    /// one, with the JSON error body, and an `h2c` upgrade is served over HTTP/1.1.
    @Test func upgradesConnectAndBrokenBodiesAreAnsweredWithTheErrorBody() async throws {
        let server = try LiveServer(engine: "sqlite")
        try await server.start()
        let webSocket = "Connection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
        let cases: [(name: String, request: String, status: Int, code: String)] = [
            ("CONNECT", "CONNECT 127.0.0.1:443 HTTP/1.1\r\nHost: 127.0.0.1:443\r\n\r\n", 405, "request.method_not_allowed"),
            (
                "a WebSocket upgrade without a key",
                "GET /v1/realtime HTTP/1.1\r\nHost: a\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\n\r\n",
                400, "request.malformed"
            ),
            (
                "a WebSocket upgrade of version 99",
                "GET /healthz HTTP/1.1\r\nHost: a\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 99\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n",
                400, "request.malformed"
            ),
            ("a WebSocket upgrade on a route that is not one", "GET /healthz HTTP/1.1\r\nHost: a\r\n\(webSocket)\r\n", 400, "request.malformed"),
            (
                "Transfer-Encoding: xchunked", "POST /healthz HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: xchunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n", 400,
                "request.malformed"
            ),
            (
                "a chunk size that is not hexadecimal",
                "POST /v1/accounts HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\nContent-Type: application/json\r\nX-GameCenter-Bundle-ID: com.example.tapper\r\nX-GameCenter-Environment: sandbox\r\n\r\nzz\r\nhello\r\n0\r\n\r\n",
                400, "request.malformed"
            ),
        ]
        for (name, request, status, code) in cases {
            let (answer, closed) = try Self.exchange(server, Array(request.utf8))
            #expect(RawTCPConnection.status(answer) == status, "\(name): \(answer.prefix(200).debugDescription)")
            #expect(answer.lowercased().contains("connection: close"), "\(name)")
            #expect(answer.contains(#""code":"\#(code)""#), "\(name): \(answer.prefix(300).debugDescription)")
            #expect(closed, "\(name): the connection stayed open")
        }
        // What `curl --http2` sends: the upgrade is ignored and the request served (RFC 9113 allows it), with a body too.
        let h2c = "Connection: Upgrade, HTTP2-Settings, close\r\nUpgrade: h2c\r\nHTTP2-Settings: AAMAAABkAARAAAAAAAIAAAAA\r\n"
        let (health, _) = try Self.exchange(server, Array("GET /healthz HTTP/1.1\r\nHost: a\r\n\(h2c)\r\n".utf8))
        #expect(RawTCPConnection.status(health) == 200 && health.hasSuffix("ok"), "\(health.debugDescription)")
        let signUp = #"{"account":"h2c-player","password":"h2c-password","alias":"H2C"}"#
        let (created, _) = try Self.exchange(
            server,
            Array(
                ("POST /v1/accounts HTTP/1.1\r\nHost: a\r\n\(h2c)Content-Type: application/json\r\nX-GameCenter-Bundle-ID: com.example.tapper\r\n"
                    + "X-GameCenter-Environment: sandbox\r\nContent-Length: \(signUp.utf8.count)\r\n\r\n\(signUp)").utf8))
        #expect(RawTCPConnection.status(created) == 201, "\(created.prefix(300).debugDescription)")
        // Several upgrades at once, WebSocket among them: the WebSocket one is taken.
        let token = try await server.signUp(account: "upgrades")
        let both = try RawTCPConnection(port: server.port)
        both.send(
            "GET /v1/realtime HTTP/1.1\r\nHost: a\r\nAuthorization: Bearer \(token)\r\nX-GameCenter-Bundle-ID: com.example.tapper\r\n"
                + "X-GameCenter-Environment: sandbox\r\n\(webSocket.replacingOccurrences(of: "Upgrade: websocket", with: "Upgrade: h2c, websocket"))\r\n")
        let (upgraded, _) = both.readUntilClosed(within: .seconds(3), orUntil: "\r\n\r\n")
        #expect(RawTCPConnection.status(upgraded) == 101, "\(upgraded.prefix(300).debugDescription)")
        try await server.stop()
    }

    /// Clients that pipeline requests and read none of the answers: each is closed once its answers have waited for
    /// the write timeout, the memory they held is used again, and another client is served meanwhile.
    @Test func clientsThatStopReadingAreClosedAndTheirMemoryIsUsedAgain() async throws {
        let server = try LiveServer(engine: "sqlite")
        try await server.start(extraArguments: ["--write-timeout", "2"])
        let pid = try #require(server.process?.processIdentifier)
        let pipelined = Array(String(repeating: "GET /openapi.yaml HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", count: 400).utf8)
        let before = Self.residentKiB(pid)
        var afterRound: [Int] = []
        for round in 1...5 {
            let readers = try (0..<10).map { _ in try RawTCPConnection(port: server.port, receiveBuffer: 4096) }
            for reader in readers { reader.send(pipelined) }
            #expect(Self.health(server, from: "127.0.0.2") == 200, "round \(round): another client while the answers wait")
            let started = ContinuousClock.now
            for (i, reader) in readers.enumerated() {
                #expect(reader.peerClosed(within: .seconds(20)), "round \(round): reader \(i) is still connected")
            }
            // Before, they stayed connected as long as they liked (150 s seen), each holding 4–10 MiB.
            #expect(ContinuousClock.now - started < .seconds(20))
            afterRound.append(Self.residentKiB(pid))
        }
        // Before, every round added what it held, 45–60 MiB for ten readers, and kept it: 135 MiB or more over the
        // last three rounds, and as much in the last two as the first round took. Now the later rounds reuse what the
        // first ones took (the allocator keeps it). How much a round takes depends on the machine's load (70 to 140 MiB
        // seen for the first; under the whole live phase's load the last three still grew 118 MiB once), so the check
        // is either: the last three rounds add under 100 MiB, or the last two add less than the first took.
        let lastThree = afterRound[4] - afterRound[1], lastTwo = afterRound[4] - afterRound[2], first = afterRound[0] - before
        #expect(lastThree < 100 * 1024 || lastTwo < first, "resident memory before (KiB): \(before); after each round: \(afterRound)")
        #expect(Self.health(server) == 200)
        try await server.stop()
    }

    /// The resident memory of process `pid`, in KiB.
    static func residentKiB(_ pid: Int32) -> Int {
        let status = (try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)) ?? ""
        let line = status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") } ?? ""
        return Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0
    }

    @Test func slowRequestsAndIdleConnectionsAreClosed() async throws {
        let server = try LiveServer(engine: "sqlite")
        try await server.start(extraArguments: ["--header-timeout", "1", "--body-timeout", "1", "--idle-timeout", "1"])

        // A head that trickles in, one header line every 200 ms: closed about 1 s after its first byte.
        let trickle = try RawTCPConnection(port: server.port)
        let start = ContinuousClock.now
        trickle.send("GET /healthz HTTP/1.1\r\n")
        var closed = false
        while !closed, ContinuousClock.now - start < .seconds(8) {
            closed = !trickle.send("X-Slow: 1\r\n") || trickle.readUntilClosed(within: .milliseconds(200)).closed
        }
        #expect(closed && ContinuousClock.now - start < .seconds(5), "trickled head closed after \(ContinuousClock.now - start)")

        // A body that stops after its first byte.
        let stopped = try RawTCPConnection(port: server.port)
        stopped.send("POST /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 100\r\n\r\n{")
        #expect(stopped.readUntilClosed(within: .seconds(5)).closed, "a stopped body kept its connection open")

        // A keep-alive connection after its answer.
        let idle = try RawTCPConnection(port: server.port)
        idle.send("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        let (answer, idleClosed) = idle.readUntilClosed(within: .seconds(5))
        #expect(RawTCPConnection.status(answer) == 200)
        #expect(idleClosed, "an idle keep-alive connection stayed open")
        try await server.stop()
    }

    /// The deadlines are HTTP's: a realtime channel is a WebSocket once upgraded, and lives on past every one of them.
    @Test func anUpgradedRealtimeChannelOutlivesTheHTTPDeadlines() async throws {
        let server = try LiveServer(engine: "sqlite")
        try await server.start(extraArguments: ["--header-timeout", "1", "--body-timeout", "1", "--idle-timeout", "1"])
        let token = try await server.signUp(account: "upgraded")

        let channel = try RawTCPConnection(port: server.port)
        channel.send(
            "GET /v1/realtime HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer \(token)\r\n"
                + "X-GameCenter-Bundle-ID: com.example.tapper\r\nX-GameCenter-Environment: sandbox\r\n"
                + "Connection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n")
        let (answer, closed) = channel.readUntilClosed(within: .seconds(3))
        #expect(RawTCPConnection.status(answer) == 101, "\(answer.prefix(300).debugDescription)")
        #expect(answer.contains("hello"), "the channel's first frame")
        #expect(!closed, "the realtime channel was closed by an HTTP deadline")
        try await server.stop()
    }

    @Test func theConnectionOverThePerAddressCapIsRefusedWhileOthersAreServed() async throws {
        let server = try LiveServer(engine: "sqlite")
        try await server.start(extraArguments: ["--max-connections-per-address", "3"])
        let held = try (0..<3).map { _ in try RawTCPConnection(port: server.port) }
        for connection in held {
            // An answer on each: all three are let in (and counted) before the fourth connects.
            connection.send("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            #expect(RawTCPConnection.status(connection.readUntilClosed(within: .seconds(5), orUntil: "\r\n\r\nok").text) == 200)
        }
        let (refusal, closed) = try Self.exchange(server, Array("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".utf8))
        #expect(RawTCPConnection.status(refusal) == 503, "\(refusal.debugDescription)")
        #expect(refusal.contains(#""code":"server.too_many_connections""#))
        #expect(closed)
        // Another address is served, and so are the connections let in.
        #expect(Self.health(server, from: "127.0.0.2") == 200)
        held[1].send("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        #expect(RawTCPConnection.status(held[1].readUntilClosed(within: .seconds(5), orUntil: "\r\n\r\nok").text) == 200)
        // Once one has closed, a new connection from the address is let in again.
        held[0].close()
        try await waitUntil("a new connection from the address is let in") { Self.health(server) == 200 }
        try await server.stop()
    }

    /// More one-byte connections than the server has file descriptors (before the caps, that made libdispatch's
    /// worker monitor trap on EMFILE). With the default caps the flood's address is capped and another address is
    /// served throughout; with only the global cap, the others are answered `503` during the flood; in both, the
    /// server runs on and serves everyone once the header timeout has closed the flood.
    @Test(arguments: [false, true])
    func aFloodBeyondTheDescriptorLimitLeavesTheServerServing(globalCapOnly: Bool) async throws {
        let server = try LiveServer(engine: "sqlite")
        server.descriptorLimit = 256
        // The header timeout outlasts the flood's opening (so that the flood holds every slot when another address
        // asks), and is short enough for the test to see it end.
        try await server.start(extraArguments: ["--header-timeout", "6"] + (globalCapOnly ? ["--max-connections-per-address", "10000"] : []))
        let pid = try #require(server.process?.processIdentifier)
        let peak = DescriptorPeak(pid: pid)
        let floodStarted = ContinuousClock.now
        var flood: [RawTCPConnection] = []
        for _ in 0..<600 {
            guard let connection = try? RawTCPConnection(port: server.port) else { continue }
            connection.send("G")
            flood.append(connection)
        }
        let floodOpened = ContinuousClock.now - floodStarted
        // The reserve for the database, files and the UDP socket is an eighth of the limit (at least 96), of which the
        // server's own files and sockets take about 31: refused connections come out of the connections' share, so
        // about 65 descriptors stay free, less the connections accepted before their event loop counted them (248 of
        // 256 were seen on a loaded machine with a reserve of 64). Before the caps, the flood took all but a few.
        let used = peak.stop()
        #expect(used <= 256 - 16, "the server's descriptors peaked at \(used) of 256 during the flood")
        // A PostgreSQL another test starts meanwhile inherits none of the flood: it counts inherited descriptors
        // against its own limit, and once refused to start.
        #expect(throws: Never.self, "a tool started like PostgreSQL inherited the flood's descriptors") {
            try PrivatePostgres.run("/bin/sh", ["-c", "test $(ls /proc/$$/fd | wc -l) -lt 64"])
        }
        // While as many of the flood's connections are being refused as allowed, another one is closed unanswered (so
        // that refusals never reach the reserve): it is answered once a refusal slot is free again.
        var answer = 0
        try await waitUntil("another address is answered during the flood (opened in \(floodOpened))", within: .seconds(3)) {
            answer = Self.health(server, from: "127.0.0.2")
            return answer != 0
        }
        #expect(answer == (globalCapOnly ? 503 : 200), "another address during the flood (opened in \(floodOpened))")
        #expect(server.process?.isRunning == true, "the server died during the flood: \(server.errorOutput.suffix(2000))")
        try await waitUntil("healthz answers once the header timeout has closed the flood", within: .seconds(30)) { Self.health(server) == 200 }
        #expect(server.process?.isRunning == true, "the server died: \(server.errorOutput.suffix(2000))")
        #expect(server.errorOutput.contains("file descriptor limit 256"))
        try await server.stop()
    }
}

/// The most file descriptors process `pid` had open, sampled every millisecond or so from a thread of its own until
/// ``stop()``.
final class DescriptorPeak: Sendable {
    private let pid: Int32
    private let state = Mutex((peak: 0, stopped: false))
    private let done = DispatchSemaphore(value: 0)

    /// Starts sampling `pid`.
    init(pid: Int32) {
        self.pid = pid
        Thread.detachNewThread { [self] in
            while !state.withLock({ $0.stopped }) {
                let count = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd").count) ?? 0
                state.withLock { $0.peak = max($0.peak, count) }
                usleep(1000)
            }
            done.signal()
        }
    }

    /// Stops sampling; the peak.
    func stop() -> Int {
        state.withLock { $0.stopped = true }
        done.wait()
        return state.withLock { $0.peak }
    }
}
