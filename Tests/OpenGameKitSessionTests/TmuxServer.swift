import Foundation
import LANTestSupport
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Test support: a private tmux server (its own socket, no user configuration) that runs terminal programs in
/// windows, types into them with `send-keys` and reads their screens with `capture-pane`.
///
/// The server runs in the foreground (`tmux -D`) as a child of the test, not as a daemon: a daemon would keep
/// the output pipes and exit monitoring of the command that started it open, so that command would never end.
/// It is spawned with a clean signal mask (a `Process` child inherits the test thread's blocked signals, and a
/// server that cannot see SIGCHLD never notices its programs exit). Every other command uses `-N`.
final class TmuxServer: Sendable {
    let tmux: String
    let socket = "ogk-test-\(UInt32.random(in: 1...UInt32.max))"
    private let serverPID = Mutex<pid_t?>(nil)

    /// A server if tmux is installed.
    init?() {
        guard let tmux = ChildProcess.which("tmux") else { return nil }
        self.tmux = tmux
    }

    static let skipMessage = "tmux is not installed (apt-get install -y tmux; scripts/test.sh installs it)"

    /// Runs a tmux command on this server and returns its output; throws if tmux fails.
    @discardableResult
    func command(_ arguments: [String]) async throws -> String {
        let result = try await ChildProcess.run(tmux, ["-N", "-L", socket, "-f", "/dev/null"] + arguments, timeout: .seconds(20))
        guard result.status == 0 else { throw TmuxError(message: "tmux \(arguments.joined(separator: " ")) failed: \(result.output)") }
        return result.output
    }

    /// Starts the server with a 160×50 idle window; windows keep their screen after their program exits.
    /// The idle window stops the server after 10 minutes, should the test never get to ``stop()``.
    func start() async throws {
        let pid = try Self.spawn(tmux, ["-D", "-L", socket, "-f", "/dev/null"])
        serverPID.withLock { $0 = pid }
        let deadline = ContinuousClock.now + .seconds(20)
        while true {
            do {
                try await command([
                    "new-session", "-d", "-s", "main", "-n", "idle", "-x", "160", "-y", "50",
                    "sleep 600; '\(tmux)' -L '\(socket)' kill-server",
                ])
                break
            } catch  where ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(100))  // the server is not listening yet
            }
        }
        try await command(["set-option", "-g", "remain-on-exit", "on"])
    }

    /// Opens window `name` running `program` with `arguments`. The window's shell waits for the program and then
    /// prints its exit status (see ``exitStatus(_:)``).
    func open(_ name: String, _ program: String, _ arguments: [String]) async throws {
        let line = ([program] + arguments).map { "'" + $0.replacingOccurrences(of: "'", with: "'\\''") + "'" }.joined(separator: " ")
        try await command(["new-window", "-d", "-t", "main", "-n", name, "\(line); echo \"\(Self.exitMarker)$?]\""])
    }

    /// Types `text` and Enter into window `name`.
    func type(_ text: String, into name: String) async throws {
        try await command(["send-keys", "-t", "main:\(name)", "-l", text])
        try await command(["send-keys", "-t", "main:\(name)", "Enter"])
    }

    /// The text of window `name`, its scrollback included.
    func screen(_ name: String) async throws -> String {
        try await command(["capture-pane", "-p", "-J", "-S", "-", "-t", "main:\(name)"])
    }

    /// The exit status of the program in window `name`, or `nil` while it runs: from the line the window's shell
    /// prints after it, or else from tmux's pane status. Each alone was seen to miss an ended program: the tmux server
    /// left ended LANBattle processes unreaped (zombies for over 20 s, the pane not dead), and a pane that tmux
    /// reported dead with status 0 lacked the shell's line.
    func exitStatus(_ name: String) async throws -> Int32? {
        // The line may start with the program's last output when that did not end with a newline.
        let text = try await screen(name)
        if let marker = text.range(of: Self.exitMarker, options: .backwards) {
            return Int32(text[marker.upperBound...].prefix { $0 != "]" })
        }
        let fields = try await command(["display-message", "-p", "-t", "main:\(name)", "#{pane_dead} #{pane_dead_status}"])
            .trimmingCharacters(in: .whitespacesAndNewlines).split(separator: " ")
        guard fields.first == "1", fields.count == 2 else { return nil }
        return Int32(fields[1])
    }

    private static let exitMarker = "[program exited with status "

    /// Polls window `name` until its text satisfies `condition` or `timeout` passes; returns the last text seen.
    func waitFor(_ name: String, timeout: Duration = .seconds(30), _ condition: (String) -> Bool) async throws -> (matched: Bool, screen: String) {
        let deadline = ContinuousClock.now + timeout
        var text = try await screen(name)
        while !condition(text), ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(200))
            text = try await screen(name)
        }
        return (condition(text), text)
    }

    /// Stops the server and every program in it.
    func stop() async {
        _ = try? await command(["kill-server"])
        guard let pid = serverPID.withLock({ $0 }) else { return }
        var status: Int32 = 0
        for _ in 0..<50 where waitpid(pid, &status, WNOHANG) == 0 {
            try? await Task.sleep(for: .milliseconds(100))
        }
        if waitpid(pid, &status, WNOHANG) == 0 {
            kill(pid, SIGKILL)
            waitpid(pid, &status, 0)
        }
    }

    /// Starts `executable` with no signals blocked or ignored and its standard streams on /dev/null.
    private static func spawn(_ executable: String, _ arguments: [String]) throws -> pid_t {
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var none = sigset_t()
        sigemptyset(&none)
        posix_spawnattr_setsigmask(&attributes, &none)
        var reset = sigset_t()
        sigemptyset(&reset)
        for signal in [SIGCHLD, SIGHUP, SIGINT, SIGTERM, SIGPIPE, SIGQUIT] { sigaddset(&reset, signal) }
        posix_spawnattr_setsigdefault(&attributes, &reset)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        var pid = pid_t()
        let result = posix_spawn(&pid, executable, &actions, &attributes, argv, environ)
        guard result == 0 else { throw TmuxError(message: "cannot start \(executable): \(String(cString: strerror(result)))") }
        return pid
    }
}

struct TmuxError: Error, CustomStringConvertible {
    var message: String
    var description: String { message }
}
