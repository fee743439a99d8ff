import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A server process the bench starts and measures from outside: its port (from its first output line), its
/// resident memory and its CPU time, so the bench's own devices are not counted in either. Sendable: its state is set
/// once, and what it reads of the child comes from `/proc` at each call.
final class ChildServer: @unchecked Sendable {
    private let process: Process
    /// The HTTP and WebSocket port the child printed.
    let port: Int

    /// Starts `executable` with `arguments` and waits (up to 30 s) for a first line `listening on http://HOST:PORT`.
    init(executable: String, arguments: [String]) throws {
        process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.standardError
        try process.run()
        let deadline = Date().addingTimeInterval(30)
        var text = ""
        while Date() < deadline, !text.contains("\n") {
            let chunk = output.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            text += String(decoding: chunk, as: UTF8.self)
        }
        guard let line = text.split(separator: "\n").first, line.hasPrefix("listening on http://"),
            let port = line.split(separator: ":").last.flatMap({ Int($0) })
        else {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            throw BenchError("\(executable) did not say where it listens; it printed: \(text)")
        }
        self.port = port
    }

    deinit {
        stop()
    }

    /// Stops the child (SIGTERM, then SIGKILL after 5 s).
    func stop() {
        guard process.isRunning else { return }
        process.terminate()
        for _ in 0..<50 where process.isRunning { usleep(100_000) }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }

    /// The child's memory in bytes, from /proc/PID/status: `resident` is everything in RAM (`VmRSS`), `anonymous`
    /// only its private memory (`RssAnon`: heap, stacks), without file-backed pages such as its code and SQLite's
    /// memory-mapped database, which are shared with the page cache and do not grow with what the server holds.
    func memoryBytes() -> (resident: Int, anonymous: Int) {
        guard let status = try? String(contentsOfFile: "/proc/\(process.processIdentifier)/status", encoding: .utf8) else { return (0, 0) }
        func kilobytes(_ field: String) -> Int {
            status.split(separator: "\n").first { $0.hasPrefix(field) }.flatMap { $0.split(separator: " ").dropFirst().first }.flatMap { Int($0) } ?? 0
        }
        return (kilobytes("VmRSS:") * 1024, kilobytes("RssAnon:") * 1024)
    }

    /// CPU seconds the child has used, user and system (/proc/PID/stat fields 14 and 15).
    func cpuSeconds() -> Double {
        guard let stat = try? String(contentsOfFile: "/proc/\(process.processIdentifier)/stat", encoding: .utf8),
            let afterName = stat.range(of: ") ")
        else { return 0 }
        // Fields after the command name start at field 3 (state); utime and stime are fields 14 and 15.
        let fields = stat[afterName.upperBound...].split(separator: " ")
        guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else { return 0 }
        return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }
}
