import ArgumentParser
import Foundation
import GameCenterServer
import Logging

/// A Game Center server started inside the benchmark process on a free port, with one manifest.
struct BenchServer {
    let port: Int
    let udpPort: Int
    let task: Task<Void, any Error>
    let folder: URL
    let databaseURL: String

    /// Starts a server for `manifest` on `database` (default: a new SQLite file in a temporary folder); `prepare`
    /// seeds it between wiring and listening; `adminKey` turns on the admin routes and the movable clock.
    static func start(
        manifest: String, database: String?, logger: Logger, adminKey: String? = nil,
        prepare: @escaping @Sendable (GameCenterApp.Services) async throws -> Void = { _ in }
    ) async throws -> BenchServer {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("gamecenter-bench-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let file = folder.appendingPathComponent("bench.yaml")
        try manifest.write(to: file, atomically: true, encoding: .utf8)
        var configuration = GameCenterApp.Configuration()
        configuration.port = 0
        configuration.udpPort = 0
        configuration.gamesPath = file.path
        configuration.rateLimits = .none  // the load generators drive few players at full speed
        // Every load generator connects from loopback: one address may take every connection.
        configuration.connections.maxConnectionsPerAddress = configuration.connections.maxConnections
        configuration.databaseURL = database ?? "sqlite:\(folder.path)/bench.sqlite"
        if let adminKey {
            configuration.adminKey = adminKey
            configuration.testClock = true
        }
        let (ports, continuation) = AsyncStream.makeStream(of: (Int, Int).self)
        let task = Task {
            defer { continuation.finish() }
            try await GameCenterApp.run(configuration: configuration, logger: logger, prepare: prepare) { port, udpPort in continuation.yield((port, udpPort)) }
        }
        var iterator = ports.makeAsyncIterator()
        guard let (port, udpPort) = await iterator.next() else {
            try await task.value  // the server's own error (a failed preload, a port in use)
            throw ValidationError("the server stopped before listening")
        }
        return BenchServer(port: port, udpPort: udpPort, task: task, folder: folder, databaseURL: configuration.databaseURL)
    }

    /// Stops the server and removes its temporary folder.
    func stop() async {
        task.cancel()
        _ = await task.result
        try? FileManager.default.removeItem(at: folder)
    }
}
