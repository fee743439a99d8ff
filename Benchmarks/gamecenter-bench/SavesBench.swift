import ArgumentParser
import Foundation
import GameCenterServer
import GameCenterStorage
import Logging
import OpenGameKit
import SQLKit
import Synchronization

/// `gamecenter-bench saves`: saved games of 64 KiB, 1 MiB and 32 MiB saved through SDK devices (chunked upload,
/// SHA-256 check, versioning), MB/s and the p99 of one save, against writing the same bytes with one plain SQL insert
/// per save on the same engine in the same run; and the server's peak memory growth while 16 devices upload at once,
/// saves of 1 MiB and of 32 MiB (flat in the save size when nothing holds a whole save), measured on a `gamecenter`
/// process of its own so that the devices' memory is not counted.
struct SavesBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "saves",
        abstract:
            "Saved games MB/s and p99 per save (64 KiB, 1 MiB, 32 MiB) vs a plain SQL insert of the same bytes; the server's peak memory during 16 uploads at once."
    )

    static let bundleID = "com.example.saves"

    @Option(help: "Seconds to measure each size and target.") var seconds = 6.0
    @Option(help: "Devices saving at once.") var devices = 4
    @Option(help: "Database (default: a new SQLite file in a temporary folder).") var database: String?
    @Option(help: "The gamecenter executable the memory figure runs (default: the one beside this one).") var gamecenter: String?

    func validate() throws {
        guard seconds > 0, (1...64).contains(devices) else { throw ValidationError("--seconds > 0, --devices 1…64") }
    }

    func run() async throws {
        var logger = Logger(label: "bench") { StreamLogHandler.standardError(label: $0) }
        logger.logLevel = .warning
        let server = try await BenchServer.start(manifest: "bundleID: \(Self.bundleID)\nname: Saves\n", database: database, logger: logger)
        do {
            try await measure(on: server, logger: logger)
        } catch {
            await server.stop()
            throw error
        }
        await server.stop()
        try await measureServerMemory()
    }

    private func measure(on server: BenchServer, logger: Logger) async throws {
        print(
            "gamecenter-bench saves — \(devices) SDK devices saving at once, \(seconds) s per size, "
                + "\(ProcessInfo.processInfo.activeProcessorCount) cores; storage: \(database ?? "SQLite (temporary file), synchronous=FULL")")
        let players = try await Self.signUp(devices, on: server)
        let anchorURL = database ?? "sqlite:\(server.folder.path)/anchor.sqlite"
        try await Database.withDatabase(url: anchorURL, logger: logger) { db in
            try await db.write { storage in
                let statement =
                    storage.engine == .postgres
                    ? "CREATE TABLE anchor_save (id TEXT PRIMARY KEY, data BYTEA NOT NULL)"
                    : "CREATE TABLE anchor_save (id TEXT PRIMARY KEY, data BLOB NOT NULL)"
                try await storage.sql.raw(SQLQueryString(statement)).run()
            }
        }
        for (label, size) in [("64 KiB", 64 << 10), ("1 MiB", 1 << 20), ("32 MiB", 32 << 20)] {
            let data = Data((0..<size).map { UInt8(truncatingIfNeeded: $0 &* 131 &+ 17) })
            let ours = try await save(data, with: players)
            let anchor = try await Database.withDatabase(url: anchorURL, logger: logger) { db in
                try await Self.anchor(db, data: data, concurrency: devices, seconds: seconds)
            }
            let (mb, anchorMB) = (ours.bytes / ours.elapsed / 1e6, anchor.bytes / anchor.elapsed / 1e6)
            print(
                String(
                    format: "%@: gamecenter %.1f MB/s, p50 %.1f ms, p99 %.1f ms per save (%d saves); anchor (one SQL insert per save) %.1f MB/s, "
                        + "p99 %.1f ms; %.2fx the anchor (goal ≥ 0.5x)",
                    label, mb, percentile(ours.delays, 0.5), percentile(ours.delays, 0.99), ours.delays.count, anchorMB, percentile(anchor.delays, 0.99),
                    mb / anchorMB))
        }
    }

    /// 16 devices upload a save of 1 MiB, then one of 32 MiB, all at once, to a server process of its own (same engine);
    /// its anonymous memory (heap and stacks: what it holds, not the database's pages) is sampled every 10 ms.
    private func measureServerMemory() async throws {
        let here = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        let executable = gamecenter ?? here.deletingLastPathComponent().appendingPathComponent("gamecenter").path
        guard FileManager.default.isExecutableFile(atPath: executable) else {
            print("server memory: not measured — no \(executable) (build the gamecenter product beside the bench, or pass --gamecenter)")
            return
        }
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("gamecenter-bench-saves-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let manifest = folder.appendingPathComponent("saves.yaml")
        try "bundleID: \(Self.bundleID)\nname: Saves\n".write(to: manifest, atomically: true, encoding: .utf8)
        let server = try ChildServer(
            executable: executable,
            arguments: [
                "serve", "--port", "0", "--udp-port", "0", "--database", database ?? "sqlite:\(folder.path)/saves.sqlite", "--games", manifest.path,
                "--log-level", "warning", "--rate-limit", "sign-ups=0/1", "--rate-limit", "sign-ins=0/1", "--max-connections-per-address", "256",
            ])
        defer { server.stop() }
        let devices = try await Self.signUp(16, on: server.port, folder: folder)
        for (label, size) in [("1 MiB", 1 << 20), ("32 MiB", 32 << 20)] {
            let data = Data((0..<size).map { UInt8(truncatingIfNeeded: $0 &* 7) })
            let before = server.memoryBytes().anonymous
            let peak = Mutex(before)
            let sampler = Task {
                while !Task.isCancelled {
                    let now = server.memoryBytes().anonymous
                    peak.withLock { $0 = max($0, now) }
                    try? await Task.sleep(for: .milliseconds(10))
                }
            }
            _ = try await save(data, with: devices, once: true)
            sampler.cancel()
            _ = await sampler.result
            let growth = Double(peak.withLock { $0 } - before) / Double(1 << 20)
            print(
                String(
                    format:
                        "16 devices uploading a %@ save at once: the server's peak memory growth %.0f MiB (its own process; anonymous memory, %.0f MiB before)",
                    label, growth, Double(before) / Double(1 << 20)))
        }
    }

    /// Signed-up devices.
    static func signUp(_ count: Int, on server: BenchServer) async throws -> [GKGameCenter] {
        try await signUp(count, on: server.port, folder: server.folder)
    }

    /// Signed-up devices of the server on `port`, their storage in `folder`.
    static func signUp(_ count: Int, on port: Int, folder: URL) async throws -> [GKGameCenter] {
        let url = URL(string: "http://127.0.0.1:\(port)")!
        var devices: [GKGameCenter] = []
        for index in 0..<count {
            let device = GKGameCenter(
                server: url, bundleID: bundleID, storageDirectory: folder.appendingPathComponent("devices/\(index)"))
            try await device.localPlayer.authenticate(
                .signUp(account: "saves-\(index)-\(UUID().uuidString.prefix(6).lowercased())", password: "bench-password", alias: "S\(index)"))
            devices.append(device)
        }
        return devices
    }

    /// Each device saves `data` again and again (its own save, each version based on the last) for `seconds`, or
    /// once each when `once`.
    private func save(_ data: Data, with devices: [GKGameCenter], once: Bool = false) async throws -> (bytes: Double, elapsed: Double, delays: [Double]) {
        let deadline = ContinuousClock.now + .milliseconds(Int64(seconds * 1000))
        let start = ContinuousClock.now
        let delays = try await withThrowingTaskGroup(of: [Double].self) { group in
            for device in devices {
                group.addTask {
                    var delays: [Double] = []
                    repeat {
                        let began = ContinuousClock.now
                        _ = try await device.localPlayer.saveGameData(data, withName: "slot")
                        delays.append(Self.millis(ContinuousClock.now - began))
                    } while !once && ContinuousClock.now < deadline
                    return delays
                }
            }
            return try await group.reduce(into: []) { $0 += $1 }
        }
        return (Double(delays.count * data.count), Self.millis(ContinuousClock.now - start) / 1000, delays)
    }

    /// The anchor: each save one transaction inserting the bytes in one row.
    static func anchor(_ db: Database, data: Data, concurrency: Int, seconds: Double) async throws -> (bytes: Double, elapsed: Double, delays: [Double]) {
        let delays = DelayLog()
        let (count, elapsed) = try await db.runLoops(seconds: seconds, concurrency: concurrency) { _, _ in
            let began = ContinuousClock.now
            try await db.write { storage in
                try await storage.sql.raw("INSERT INTO anchor_save (id, data) VALUES (\(bind: UUID().uuidString), \(bind: data))").run()
            }
            delays.append(millis(ContinuousClock.now - began))
        }
        try await db.write { try await $0.sql.raw("DELETE FROM anchor_save").run() }
        return (Double(count * data.count), elapsed, delays.values)
    }

    static func millis(_ duration: Duration) -> Double {
        let (s, atto) = duration.components
        return (Double(s) + Double(atto) / 1e18) * 1000
    }
}

/// Delays appended from several tasks.
private final class DelayLog: @unchecked Sendable {
    private let lock = NSLock()
    private var delays: [Double] = []

    func append(_ delay: Double) { lock.withLock { delays.append(delay) } }
    var values: [Double] { lock.withLock { delays } }
}
