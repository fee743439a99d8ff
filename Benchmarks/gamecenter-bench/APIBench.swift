import ArgumentParser
import AsyncHTTPClient
import Foundation
import GameCenterProtocol
import GameCenterServer
import Hummingbird
import Logging
import NIOCore
import Synchronization

/// `gamecenter-bench api`: an authenticated `loadPlayers` of 10 ids against a bare Hummingbird route, both served
/// from this process and measured by the same client in the same run.
struct APIBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "api", abstract: "Authenticated loadPlayers(10 ids) vs a bare Hummingbird route: requests/s, p50, p99, ratio."
    )

    @Option(help: "Seconds to measure each target.") var seconds = 5.0
    @Option(help: "Requests in flight at once.") var concurrency = 16
    @Option(help: "Database for the Game Center server (default: a new SQLite file in a temporary folder).") var database: String?

    func run() async throws {
        var logger = Logger(label: "bench") { StreamLogHandler.standardError(label: $0) }
        logger.logLevel = .warning
        let server = try await BenchServer.start(manifest: "bundleID: com.example.bench\nname: Bench\n", database: database, logger: logger)
        let (ports, portsContinuation) = AsyncStream.makeStream(of: Int.self)
        let bare = Task { try await Self.bareApplication(logger: logger) { portsContinuation.yield($0) }.run() }
        var iterator = ports.makeAsyncIterator()
        guard let barePort = await iterator.next() else { throw ValidationError("the bare server did not start") }

        var clientConfiguration = HTTPClient.Configuration()
        clientConfiguration.connectionPool.concurrentHTTP1ConnectionsPerHostSoftLimit = concurrency
        let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: clientConfiguration)
        var failure: (any Error)?
        do {
            try await measure(client: client, gameCenterPort: server.port, barePort: barePort)
        } catch {
            failure = error
        }
        try? await client.shutdown()
        bare.cancel()
        await server.stop()
        if let failure { throw failure }
    }

    private func measure(client: HTTPClient, gameCenterPort: Int, barePort: Int) async throws {
        let setup = try await BenchPlayers.create(client: client, port: gameCenterPort, count: 11)
        let body = try WireCoding.makeEncoder().encode(PlayerLookupRequest(playerIDs: setup.lookupIDs))
        let bareBody = try await Self.sampleResponse(port: gameCenterPort, client: client, setup: setup, body: body)

        print("gamecenter-bench api — \(concurrency) in flight, \(seconds) s each, \(ProcessInfo.processInfo.activeProcessorCount) cores")
        print("storage: \(database ?? "SQLite (temporary file)")")
        let anchor = try await LoadRun(
            client: client, url: "http://127.0.0.1:\(barePort)/bare", headers: [], body: { _, _ in body },
            concurrency: concurrency, seconds: seconds
        ).measure()
        let real = try await LoadRun(
            client: client, url: "http://127.0.0.1:\(gameCenterPort)/v1/players/lookup",
            headers: setup.headers, body: { _, _ in body }, concurrency: concurrency, seconds: seconds
        ).measure()
        print(anchor.line(name: "bare Hummingbird route (\(bareBody.readableBytes) B)"))
        print(real.line(name: "loadPlayers(10 ids), authenticated"))
        print(
            String(
                format: "ratio: %.1f %% of the bare route's throughput (goal ≥ 50 %%); p50 %.2fx, p99 %.2fx",
                real.requestsPerSecond / anchor.requestsPerSecond * 100, real.p50 / anchor.p50, real.p99 / anchor.p99))
    }

    private static func bareApplication(logger: Logger, onPort: @escaping @Sendable (Int) -> Void) -> some ApplicationProtocol {
        let router = Router()
        router.post("bare") { request, _ -> Response in
            _ = try await request.body.collect(upTo: 65536)
            return Response(status: .ok, headers: [.contentType: "application/json"], body: .init(byteBuffer: BarePayload.shared.buffer))
        }
        return Application(
            router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)),
            onServerRunning: { onPort($0.localAddress?.port ?? 0) }, logger: logger)
    }

    /// One real response, so the bare route answers with as many bytes.
    private static func sampleResponse(port: Int, client: HTTPClient, setup: BenchPlayers, body: Data) async throws -> ByteBuffer {
        var request = HTTPClientRequest(url: "http://127.0.0.1:\(port)/v1/players/lookup")
        request.method = .POST
        request.headers.add(contentsOf: setup.headers)
        request.body = .bytes(ByteBuffer(bytes: body))
        let response = try await client.execute(request, timeout: .seconds(10))
        let buffer = try await response.body.collect(upTo: 1 << 20)
        BarePayload.shared.set(buffer)
        return buffer
    }
}

/// The bare route's response body: a copy of a real `loadPlayers` answer.
final class BarePayload: Sendable {
    static let shared = BarePayload()
    private let storage = Mutex(ByteBuffer())
    var buffer: ByteBuffer { storage.withLock { $0 } }
    func set(_ buffer: ByteBuffer) { storage.withLock { $0 = buffer } }
}
