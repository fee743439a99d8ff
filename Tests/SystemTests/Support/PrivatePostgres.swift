import Foundation

/// A PostgreSQL server of the test's own (initdb in a temporary folder, a free port), which the test may stop and
/// start again without disturbing the shared one the other tests use. Needs root (it runs the server as `postgres`)
/// and Debian's PostgreSQL, which the test script installs.
final class PrivatePostgres: @unchecked Sendable {
    let folder: URL
    let port: Int
    private let bin: String

    /// The database URL for `gamecenter serve`.
    var url: String { "postgres://postgres@127.0.0.1:\(port)/gamecenter" }

    /// Creates and starts the server with a `gamecenter` database.
    init() throws {
        let versions = (try? FileManager.default.contentsOfDirectory(atPath: "/usr/lib/postgresql")) ?? []
        guard let version = versions.sorted(by: { $0.compare($1, options: .numeric) == .orderedAscending }).last else {
            throw LiveServerError("PostgreSQL is not installed (/usr/lib/postgresql is empty)")
        }
        bin = "/usr/lib/postgresql/\(version)/bin"
        folder = URL(fileURLWithPath: "/tmp").appendingPathComponent("pg-\(UUID().uuidString.prefix(8))")
        port = try FreePort.tcpOutsideEphemeralRange()
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try Self.run("/bin/chown", ["postgres:postgres", folder.path])
        try asPostgres("initdb", ["-D", "\(folder.path)/data", "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-locale", "--no-sync"])
        try start()
        try asPostgres("createdb", ["-h", folder.path, "-p", "\(port)", "-U", "postgres", "gamecenter"])
    }

    /// Starts the server (again) on its port and waits until it accepts connections; a failure says what the
    /// server logged.
    func start() throws {
        do {
            try asPostgres(
                "pg_ctl",
                [
                    "-D", "\(folder.path)/data", "-l", "\(folder.path)/log", "-w",
                    "-o", "-p \(port) -k \(folder.path) -c listen_addresses=127.0.0.1 -c fsync=off", "start",
                ])
        } catch {
            let log = (try? String(contentsOfFile: "\(folder.path)/log", encoding: .utf8)) ?? ""
            throw LiveServerError("\(error)\nthe server's log ends:\n\(log.split(separator: "\n").suffix(15).joined(separator: "\n"))")
        }
    }

    /// Stops the server at once, closing every client connection (`pg_ctl -m fast`).
    func stop() throws {
        try asPostgres("pg_ctl", ["-D", "\(folder.path)/data", "-m", "fast", "-w", "stop"])
    }

    /// Stops the server and deletes its files.
    func remove() {
        try? stop()
        try? FileManager.default.removeItem(at: folder)
    }

    private func asPostgres(_ tool: String, _ arguments: [String]) throws {
        try Self.run("/usr/sbin/runuser", ["-u", "postgres", "--", "\(bin)/\(tool)"] + arguments)
    }

    /// Runs a tool to its end, its output into a file that is shown if it fails.
    ///
    /// posix_spawn and waitpid, not Foundation's `Process`: its `waitUntilExit()` never returned for a `pg_ctl start`
    /// whose server (a daemon) outlives it. The tool inherits no descriptor but its output: a server started while a
    /// test holds hundreds of sockets counted them against its own limit and refused to start.
    static func run(_ path: String, _ arguments: [String]) throws {
        let outputPath = FileManager.default.temporaryDirectory.appendingPathComponent("pg-tool-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: outputPath) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, outputPath, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        guard Self.closeFrom(&actions, 3) == 0 else { throw LiveServerError("posix_spawn_file_actions_addclosefrom_np failed") }
        let argv = ([path] + arguments).map { strdup($0) } + [nil]
        defer { for argument in argv { free(argument) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, path, &actions, nil, argv, environ)
        guard spawned == 0 else { throw LiveServerError("\(path) could not start: \(String(cString: strerror(spawned)))") }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
        // WIFEXITED and WEXITSTATUS, which Swift does not import: a normal exit with status 0.
        guard status & 0x7F == 0, (status >> 8) & 0xFF == 0 else {
            let text = (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? ""
            throw LiveServerError("\(path) \(arguments.joined(separator: " ")) failed (status \(status)): \(text)")
        }
    }

    /// glibc's `posix_spawn_file_actions_addclosefrom_np` (2.34), which Swift's Glibc module does not import.
    private static let closeFrom: @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, CInt) -> CInt = {
        guard let symbol = dlsym(nil, "posix_spawn_file_actions_addclosefrom_np") else {
            fatalError("glibc 2.34 or later is needed: posix_spawn_file_actions_addclosefrom_np is missing")
        }
        return unsafeBitCast(symbol, to: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, CInt) -> CInt).self)
    }()
}
