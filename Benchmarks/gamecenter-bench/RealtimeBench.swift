import ArgumentParser
import AsyncHTTPClient
import Foundation
import GameCenterProtocol
import GameCenterServer
import GameCenterStorage
import Histogram
import Logging
import NIOCore
#if canImport(Glibc)
import Glibc
#endif

/// `gamecenter-bench realtime`: many signed-in devices, each with its realtime channel open and answering
/// heartbeats, against `gamecenter serve` in a process of its own; then the same devices against a bare Hummingbird
/// WebSocket server (`realtime-anchor`). For each: channels held, memory per channel, CPU for heartbeats, and the
/// delay from an event (an achievement completed, stored first on our server) to the device being told.
struct RealtimeBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "realtime",
        abstract: "Realtime channels per server: memory per device, heartbeat CPU, event-to-device delay p50/p99, vs a bare WebSocket push server."
    )

    /// The game the devices play.
    static let bundleID = "com.example.realtime"

    @Option(help: "Devices, each with an open realtime channel (at most the file descriptor limit less 1,000).") var devices = 10_000
    @Option(help: "Events timed, each to a different device.") var samples = 1_000
    @Option(help: "Events in flight at once.") var concurrency = 16
    @Option(name: .customLong("in-flight"), help: "Channel upgrades in flight at once while opening.") var inFlight = 64
    @Option(name: .customLong("heartbeat-seconds"), help: "Seconds between heartbeats, on both servers.") var heartbeatSeconds = 5.0
    @Option(name: .customLong("idle-seconds"), help: "Seconds the idle channels are watched for heartbeat CPU.") var idleSeconds = 10.0
    @Option(help: "The gamecenter executable (default: the one beside this one).") var gamecenter: String?
    @Option(help: "Database (default: a new SQLite file in a temporary folder).") var database: String?

    func validate() throws {
        guard devices >= 1, samples >= 1, samples <= devices else { throw ValidationError("--devices must be ≥ 1 and --samples 1…--devices") }
        guard heartbeatSeconds >= 0.05 else { throw ValidationError("--heartbeat-seconds must be ≥ 0.05") }
    }

    func run() async throws {
        var logger = Logger(label: "bench") { StreamLogHandler.standardError(label: $0) }
        logger.logLevel = .warning
        let descriptors = Self.raiseDescriptorLimit()
        guard devices + 1_000 <= descriptors else {
            throw ValidationError("\(devices) devices need \(devices + 1_000) file descriptors; this process may open \(descriptors) (ulimit -Hn)")
        }
        let here = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        let server = gamecenter ?? here.deletingLastPathComponent().appendingPathComponent("gamecenter").path
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("gamecenter-bench-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let manifest = folder.appendingPathComponent("realtime.yaml")
        try """
        bundleID: \(Self.bundleID)
        name: Realtime
        achievements:
          - { identifier: done, title: { en: Done }, unachievedDescription: { en: Not yet }, achievedDescription: { en: Done }, points: 10 }

        """.write(to: manifest, atomically: true, encoding: .utf8)
        let databaseURL = database ?? "sqlite:\(folder.path)/realtime.sqlite"
        let tokens = try await Self.seed(devices: devices, databaseURL: databaseURL, logger: logger)

        print(
            "gamecenter-bench realtime — \(devices) devices, heartbeat every \(heartbeatSeconds) s, \(samples) events (\(concurrency) in flight), "
                + "\(ProcessInfo.processInfo.activeProcessorCount) cores, fd limit \(descriptors)")
        print("storage: \(database ?? "SQLite (temporary file), synchronous=FULL")")
        let ours = try ChildServer(
            executable: server,
            arguments: [
                "serve", "--port", "0", "--udp-port", "0", "--database", databaseURL, "--games", manifest.path,
                "--heartbeat-seconds", "\(heartbeatSeconds)", "--log-level", "warning",
                "--max-connections", "\(devices + 500)", "--max-connections-per-address", "\(devices + 500)",
            ])
        let oursFigures = try await measure(ours, tokens: tokens, logger: logger)
        print("\n## gamecenter serve (accounts, durable events, sequence numbers, heartbeat checks)\n\(oursFigures.summary)")

        let anchor = try ChildServer(executable: here.path, arguments: ["realtime-anchor", "--heartbeat-seconds", "\(heartbeatSeconds)"])
        let anchorFigures = try await measure(anchor, tokens: tokens, logger: logger)
        print("\n## Anchor: bare Hummingbird WebSocket push server (no accounts, no storage)\n\(anchorFigures.summary)")

        print("\n## Ratios and goals")
        print(
            String(
                format: "private memory per device: %.1f KB vs %.1f KB bare (%.2fx); goal ≤ 40 KB: %@", oursFigures.kilobytesPerDevice,
                anchorFigures.kilobytesPerDevice, oursFigures.kilobytesPerDevice / anchorFigures.kilobytesPerDevice,
                oursFigures.kilobytesPerDevice <= 40 ? "met" : "NOT met"))
        print(
            String(
                format: "heartbeat CPU per 10,000 devices: %.2f%% vs %.2f%% of a core bare", oursFigures.cpuPercentPer10k, anchorFigures.cpuPercentPer10k))
        print(
            String(
                format: "event to device p50 %.2f ms vs %.2f ms bare (%.2fx), p99 %.2f ms vs %.2f ms (%.2fx)", oursFigures.p50Milliseconds,
                anchorFigures.p50Milliseconds, oursFigures.p50Milliseconds / anchorFigures.p50Milliseconds, oursFigures.p99Milliseconds,
                anchorFigures.p99Milliseconds, oursFigures.p99Milliseconds / anchorFigures.p99Milliseconds))
    }

    /// What one server held and how fast it told its devices.
    struct Figures {
        var open: Int
        var failed: Int
        var openSeconds: Double
        /// Private memory (heap and stacks) per device.
        var kilobytesPerDevice: Double
        /// Everything resident per device, with file-backed pages first touched meanwhile (code, the mapped database).
        var residentKilobytesPerDevice: Double
        var cpuPercentPer10k: Double
        var heartbeatsAnswered: Int
        var p50Milliseconds: Double
        var p99Milliseconds: Double
        var lost: Int
        var lastFailure: String?

        var summary: String {
            String(
                format: """
                    %d channels open (%d failed) in %.1f s; %.1f KB private memory per device (%.1f KB resident); heartbeats: %d answered while idle, \
                    %.2f%% of a core per 10,000 devices; event to device p50 %.2f ms, p99 %.2f ms, %d never told
                    """, open, failed, openSeconds, kilobytesPerDevice, residentKilobytesPerDevice, heartbeatsAnswered, cpuPercentPer10k, p50Milliseconds,
                p99Milliseconds,
                lost) + (lastFailure.map { "\nlast failure: \($0)" } ?? "")
        }
    }

    private func measure(_ server: ChildServer, tokens: [String], logger: Logger) async throws -> Figures {
        try await Task.sleep(for: .seconds(1))
        let memoryBefore = server.memoryBytes()
        let devices = RealtimeDevices(port: server.port, tokens: tokens, logger: logger)
        var clientConfiguration = HTTPClient.Configuration()
        clientConfiguration.connectionPool.concurrentHTTP1ConnectionsPerHostSoftLimit = concurrency
        let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: clientConfiguration)
        do {
            let figures = try await measure(server, devices: devices, memoryBefore: memoryBefore, client: client)
            try? await client.shutdown()
            return figures
        } catch {
            try? await client.shutdown()
            throw error
        }
    }

    private func measure(_ server: ChildServer, devices: RealtimeDevices, memoryBefore: (resident: Int, anonymous: Int), client: HTTPClient) async throws
        -> Figures
    {
        try await withThrowingDiscardingTaskGroup { group in
            let started = ContinuousClock.now
            try await devices.openAll(in: &group, inFlight: inFlight)
            let openSeconds = secondsSince(started)
            try await Task.sleep(for: .seconds(2))
            let memoryAfter = server.memoryBytes()
            let open = devices.open

            let cpuBefore = server.cpuSeconds(), heartbeatsBefore = devices.heartbeats
            try await Task.sleep(for: .seconds(idleSeconds))
            let cpuShare = (server.cpuSeconds() - cpuBefore) / idleSeconds
            let heartbeats = devices.heartbeats - heartbeatsBefore

            let (histogram, lost) = try await timeEvents(devices: devices, port: server.port, client: client)
            let figures = Figures(
                open: open, failed: devices.failed, openSeconds: openSeconds,
                kilobytesPerDevice: Double(memoryAfter.anonymous - memoryBefore.anonymous) / Double(max(open, 1)) / 1024,
                residentKilobytesPerDevice: Double(memoryAfter.resident - memoryBefore.resident) / Double(max(open, 1)) / 1024,
                cpuPercentPer10k: cpuShare * 100 * 10_000 / Double(max(open, 1)), heartbeatsAnswered: heartbeats,
                p50Milliseconds: Double(histogram.valueAtPercentile(50)) / 1000, p99Milliseconds: Double(histogram.valueAtPercentile(99)) / 1000,
                lost: lost, lastFailure: devices.lastFailure)
            // The server goes first, so every channel ends at once; then the devices' tasks.
            server.stop()
            group.cancelAll()
            return figures
        }
    }

    /// Completes the achievement for `samples` different devices, `concurrency` at a time, and times each from the
    /// request to the device's channel delivering the event (microseconds).
    private func timeEvents(
        devices: RealtimeDevices, port: Int, client: HTTPClient
    ) async throws -> (Histogram<UInt64>, lost: Int) {
        let tokens = devices.tokens
        var generator = SystemRandomNumberGenerator()
        let chosen = Array(tokens.indices.shuffled(using: &generator).prefix(samples))
        let body = try WireCoding.makeEncoder().encode(
            AchievementReportBatch(reportID: "realtime-bench", achievements: [.init(identifier: "done", percentComplete: 100)]))
        return try await withThrowingTaskGroup(of: (Histogram<UInt64>, Int).self) { group in
            for worker in 0..<concurrency {
                // Worker w times devices w, w + concurrency, w + 2 × concurrency… of the chosen ones.
                let mine = stride(from: worker, to: chosen.count, by: concurrency).map { chosen[$0] }
                group.addTask {
                    var histogram = Histogram<UInt64>(numberOfSignificantValueDigits: .three)
                    var lost = 0
                    for device in mine {
                        devices.board.expect(device)
                        var request = HTTPClientRequest(url: "http://127.0.0.1:\(port)/v1/achievements")
                        request.method = .POST
                        request.headers.add(name: "Authorization", value: "Bearer \(tokens[device])")
                        request.headers.add(name: DeviceHeader.bundleID, value: Self.bundleID)
                        request.headers.add(name: DeviceHeader.environment, value: "sandbox")
                        request.headers.add(name: "Content-Type", value: "application/json")
                        request.body = .bytes(ByteBuffer(bytes: body))
                        let started = ContinuousClock.now
                        let response = try await client.execute(request, timeout: .seconds(30))
                        _ = try await response.body.collect(upTo: 1 << 20)
                        guard (200..<300).contains(response.status.code) else {
                            throw BenchError("POST /v1/achievements for device \(device): HTTP \(response.status.code)")
                        }
                        if let arrived = await devices.board.arrival(of: device, timeout: .seconds(10)) {
                            let (seconds, attoseconds) = (arrived - started).components
                            _ = histogram.record(UInt64(max(0, seconds * 1_000_000 + attoseconds / 1_000_000_000_000)))
                        } else {
                            lost += 1
                        }
                    }
                    return (histogram, lost)
                }
            }
            var total = Histogram<UInt64>(numberOfSignificantValueDigits: .three)
            var lost = 0
            for try await (histogram, missing) in group {
                total.add(histogram)
                lost += missing
            }
            return (total, lost)
        }
    }

    /// Stores `devices` players, each signed in to the game with a session of its own; returns their tokens.
    private static func seed(devices: Int, databaseURL: String, logger: Logger) async throws -> [String] {
        let tokens = (0..<devices).map { _ in Credentials.newToken() }
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        try await Database.withDatabase(url: databaseURL, logger: logger) { database in
            try await database.fillPlayers(prefix: "rt", count: devices, now: now)
            try await database.write { storage in
                for (index, token) in tokens.enumerated() {
                    try await storage.insertSession(
                        SessionRecord(
                            sessionID: "rt-session-\(index + 1)", tokenHash: Credentials.tokenHash(token), playerID: "rt\(index + 1)",
                            bundleID: bundleID, environment: Environment.sandbox.rawValue, createdAt: now, expiresAt: now + 86_400_000))
                }
            }
        }
        return tokens
    }

    /// Raises this process's soft file descriptor limit to its hard limit; returns the limit.
    private static func raiseDescriptorLimit() -> Int {
        var limit = rlimit()
        getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        limit.rlim_cur = limit.rlim_max
        setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        return Int(limit.rlim_cur)
    }
}
