import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Synchronization
import Testing

/// A real `gamecenter serve` process on port 0, as a studio would run it.
///
/// The binary is `GAMECENTER_BIN` (set by the test script) or `.build/debug/gamecenter`. SQLite tests get a fresh
/// file; PostgreSQL tests get a fresh database on the server of `GAMECENTER_TEST_POSTGRES_URL` (leaderboards are
/// shared by every player of a game, so tests must not see each other's scores).
final class LiveServer: @unchecked Sendable {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    static var binary: String {
        ProcessInfo.processInfo.environment["GAMECENTER_BIN"] ?? root.appendingPathComponent(".build/debug/gamecenter").path
    }

    /// The engines the live tests run on.
    static var engines: [String] {
        var engines = ["sqlite"]
        if ProcessInfo.processInfo.environment["GAMECENTER_TEST_POSTGRES_URL"] != nil { engines.append("postgres") }
        return engines
    }

    let database: String
    let games: String
    let folder: URL
    private(set) var port = 0
    /// The UDP port to bind (0: a free one); the bound port is `boundUDPPort` once started.
    var udpPort = 0
    private(set) var boundUDPPort = 0
    /// Seconds between realtime heartbeats (`--heartbeat-seconds`): 2 — a device is dropped after three silent
    /// intervals, and on a loaded 2-core machine a process can stall for more than 3 s. Tests about the heartbeat
    /// itself set 1.
    var heartbeatSeconds = 2.0
    /// The soft file descriptor limit to start the server with (`ulimit -n`); nil: this process's.
    var descriptorLimit: Int?
    /// The command the server is started through, such as `ip netns exec NS` (empty: started directly).
    var launcher: [String] = []
    private(set) var process: Process?
    private let output = TextBuffer()
    private let errors = TextBuffer()

    /// The server's base URL.
    var url: URL { URL(string: "http://127.0.0.1:\(port)")! }

    /// A server on the database `url` names (a test that owns its database server).
    init(database url: String, games: String? = nil) throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("live-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        database = url
        self.games = games ?? Self.root.appendingPathComponent("games").path
    }

    init(engine: String, games: String? = nil) throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("live-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        if engine == "postgres" {
            database = try Self.freshPostgresDatabase(on: try #require(ProcessInfo.processInfo.environment["GAMECENTER_TEST_POSTGRES_URL"]))
        } else {
            database = "sqlite:\(folder.path)/gamecenter.sqlite"
        }
        self.games = games ?? Self.root.appendingPathComponent("games").path
    }

    /// Creates a new database next to the one `url` names (with `createdb`) and returns its URL.
    private static func freshPostgresDatabase(on url: String) throws -> String {
        guard var components = URLComponents(string: url) else { throw LiveServerError("bad GAMECENTER_TEST_POSTGRES_URL") }
        let name = "live_\(UUID().uuidString.prefix(12).lowercased().replacingOccurrences(of: "-", with: ""))"
        let createdb = Process()
        createdb.executableURL = URL(fileURLWithPath: "/usr/bin/createdb")
        createdb.arguments = ["-h", components.host ?? "127.0.0.1", "-p", "\(components.port ?? 5432)", "-U", components.user ?? "postgres", name]
        if let password = components.password { createdb.environment = ["PGPASSWORD": password] }
        try createdb.run()
        createdb.waitUntilExit()
        guard createdb.terminationStatus == 0 else { throw LiveServerError("createdb \(name) failed") }
        components.path = "/\(name)"
        return components.string ?? url
    }

    /// Signs up `account` to the example game (`com.example.tapper`, sandbox) over plain HTTP and returns its token.
    func signUp(account: String) async throws -> String {
        var request = URLRequest(url: url.appendingPathComponent("v1/accounts"))
        request.httpMethod = "POST"
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.setValue("com.example.tapper", forHTTPHeaderField: "X-GameCenter-Bundle-ID")
        request.setValue("sandbox", forHTTPHeaderField: "X-GameCenter-Environment")
        request.httpBody = try JSONSerialization.data(withJSONObject: ["account": account, "password": "correct horse", "alias": account])
        let (body, _) = try await URLSession.shared.data(for: request)
        guard let token = (try JSONSerialization.jsonObject(with: body) as? [String: Any])?["token"] as? String else {
            throw LiveServerError("sign-up of \(account) failed: \(String(decoding: body, as: UTF8.self))")
        }
        return token
    }

    /// Starts the server (on the previous port after a stop, so devices find it again) and waits for its first lines.
    func start(extraArguments: [String] = []) async throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Self.binary)
        process.arguments =
            [
                "serve", "--port", "\(port)", "--udp-port", "\(udpPort)", "--database", database, "--games", games,
                "--heartbeat-seconds", "\(heartbeatSeconds)", "--log-level", "debug",
            ] + extraArguments
        if let descriptorLimit {
            // The hard limit too, so the server cannot raise its soft limit back.
            process.arguments = ["-c", "ulimit -n \(descriptorLimit) && exec \"$0\" \"$@\"", Self.binary] + (process.arguments ?? [])
            process.executableURL = URL(fileURLWithPath: "/bin/sh")
        }
        if let launcher = launcher.first {
            process.arguments = Array(self.launcher.dropFirst()) + [process.executableURL!.path] + (process.arguments ?? [])
            process.executableURL = URL(fileURLWithPath: launcher)
        }
        process.currentDirectoryURL = folder
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        output.text.withLock { $0 = "" }
        out.fileHandleForReading.readabilityHandler = { [output] handle in
            let data = handle.availableData
            output.text.withLock { $0 += String(decoding: data, as: UTF8.self) }
        }
        err.fileHandleForReading.readabilityHandler = { [errors] handle in
            let data = handle.availableData
            errors.text.withLock { $0 += String(decoding: data, as: UTF8.self) }
        }
        try process.run()
        self.process = process
        for _ in 0..<300 {
            let text = output.text.withLock { $0 }
            if let line = text.split(separator: "\n").first(where: { $0.hasPrefix("listening on http://") }),
                let udpLine = text.split(separator: "\n").first(where: { $0.hasPrefix("udp ") }),
                let parsed = Int(line.split(separator: ":").last ?? "")
            {
                port = parsed
                boundUDPPort = Int(udpLine.split(separator: ":").last ?? "") ?? 0
                return
            }
            if !process.isRunning { break }
            try await Task.sleep(for: .milliseconds(50))
        }
        throw LiveServerError("server did not start: \(errors.text.withLock { $0 })")
    }

    /// The first two lines the server printed.
    var firstLines: [String] { Array(output.text.withLock { $0 }.split(separator: "\n").prefix(2).map(String.init)) }

    /// What the server wrote to standard error.
    var errorOutput: String { errors.text.withLock { $0 } }

    /// Sends SIGTERM and waits for the exit; returns the exit status.
    @discardableResult
    func stop() async throws -> Int32 {
        guard let process else { return 0 }
        process.terminate()
        for _ in 0..<600 where process.isRunning { try await Task.sleep(for: .milliseconds(50)) }
        if process.isRunning {
            // Known open bug (see the closing note): under CI load a server sometimes does not finish its graceful
            // shutdown. Tests that are about stopping check the exit status (a kill makes it non-zero); the others
            // only need the server gone.
            // Live servers log at debug so that ServiceLifecycle, Hummingbird and WebSocket lines show which part of
            // the shutdown never finished; the database drivers' lines (every statement) are left out here.
            let log = errorOutput.split(separator: "\n").filter {
                $0.hasPrefix("20") && !$0.contains("Executing query") && !$0.contains("[PostgresNIO]")
            }
            FileHandle.standardError.write(
                Data(
                    """
                    warning: server did not stop within 30 s of SIGTERM; killed. Its log without database statements:
                    \(log.suffix(80).joined(separator: "\n"))

                    """.utf8))
            kill(process.processIdentifier, SIGKILL)
            // Reap it here: after a kill, Foundation's waitUntilExit() was seen spinning forever on the zombie
            // (swift-testing's exit-test monitor also waits on children).
            var status: Int32 = 0
            for _ in 0..<200 where waitpid(process.processIdentifier, &status, WNOHANG) == 0 {
                try await Task.sleep(for: .milliseconds(50))
            }
            self.process = nil
            return SIGKILL
        }
        self.process = nil
        return process.terminationStatus
    }

    /// Kills the server with SIGKILL (no shutdown of any kind, as a crash or `kill -9`) and reaps it.
    func crash() async throws {
        guard let process else { return }
        kill(process.processIdentifier, SIGKILL)
        var status: Int32 = 0
        for _ in 0..<200 where waitpid(process.processIdentifier, &status, WNOHANG) == 0 {
            try await Task.sleep(for: .milliseconds(50))
        }
        self.process = nil
    }

    /// Sends a signal (e.g. SIGHUP) to the server.
    func signal(_ signal: Int32) {
        if let process { kill(process.processIdentifier, signal) }
    }

    deinit {
        if let process, process.isRunning { process.terminate() }
        try? FileManager.default.removeItem(at: folder)
    }
}

struct LiveServerError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// Text a child process writes, collected from its pipe.
final class TextBuffer: Sendable {
    let text = Mutex("")
}
