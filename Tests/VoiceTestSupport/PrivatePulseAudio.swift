import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A PulseAudio server of the test's own (Debian's `pulseaudio`), with nothing loaded but a native-protocol socket
/// in a temporary folder and one null sink, `PrivatePulseAudio.sinkName`, whose monitor source records what is played
/// to it: real PulseAudio on a machine with no sound card and no session daemon.
///
/// It is started with `posix_spawn`, not Foundation's `Process`: pulseaudio closes the descriptors it inherits,
/// which Foundation takes for the child's exit; its process thread then blocks in `waitpid` on the live server,
/// and no other `Process` of the test (espeak-ng) is ever seen to end.
/// `@unchecked Sendable`: `pid` is set once in `init` and cleared only by `stop()`, which the owner calls once.
public final class PrivatePulseAudio: @unchecked Sendable {
    /// Where Debian installs the server.
    public static let executable = "/usr/bin/pulseaudio"
    /// Whether the server is installed (the test script installs it).
    public static var isInstalled: Bool { FileManager.default.isExecutableFile(atPath: executable) }
    /// The null sink's name; its monitor source is `sinkName + ".monitor"`.
    public static let sinkName = "ogk_test"

    /// The server address for `pa_simple_new` (`unix:PATH`).
    public let server: String
    private var pid: pid_t = 0
    private let folder: URL

    /// Starts the server and waits (at most 10 s) until its socket answers.
    public init() throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("pulse-\(UUID().uuidString.prefix(8))", isDirectory: true)
        let runtime = folder.appendingPathComponent("run", isDirectory: true)
        try FileManager.default.createDirectory(at: runtime, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let socket = folder.appendingPathComponent("native").path
        server = "unix:\(socket)"
        let arguments = [
            Self.executable, "-n", "--daemonize=no", "--exit-idle-time=-1", "--use-pid-file=no", "--log-target=stderr", "--log-level=error",
            "-L", "module-native-protocol-unix socket=\(socket) auth-anonymous=1",
            "-L", "module-null-sink sink_name=\(Self.sinkName) rate=48000",
        ]
        var environment = ProcessInfo.processInfo.environment
        environment["HOME"] = folder.path
        environment["XDG_RUNTIME_DIR"] = runtime.path
        environment["XDG_CONFIG_HOME"] = folder.appendingPathComponent("config").path
        let argv = arguments.map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { for pointer in argv + envp { free(pointer) } }
        let status = posix_spawn(&pid, Self.executable, nil, nil, argv, envp)
        guard status == 0 else {
            throw CocoaError(.fileReadUnknown, userInfo: [NSLocalizedDescriptionKey: "posix_spawn \(Self.executable) failed: \(status)"])
        }
        let deadline = Date().addingTimeInterval(10)
        while !FileManager.default.fileExists(atPath: socket) {
            var exit: Int32 = 0
            guard waitpid(pid, &exit, WNOHANG) == 0, Date() < deadline else {
                stop()
                throw CocoaError(.fileNoSuchFile, userInfo: [NSLocalizedDescriptionKey: "pulseaudio did not open \(socket)"])
            }
            Thread.sleep(forTimeInterval: 0.02)
        }
    }

    /// Stops the server, reaps it, and removes its folder.
    public func stop() {
        if pid > 0 {
            kill(pid, SIGTERM)
            var exit: Int32 = 0
            waitpid(pid, &exit, 0)
            pid = 0
        }
        try? FileManager.default.removeItem(at: folder)
    }

    deinit { stop() }
}
