import Foundation

/// Test support: runs programs the tests need (the built examples, `ip netns exec`, tmux).
public enum ChildProcess {
    /// The directory the package's executables are built into (next to the test bundle).
    public static var binDirectory: URL {
        URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
    }

    /// A built executable of this package, e.g. `LANBattle`.
    public static func built(_ name: String) -> URL {
        binDirectory.appendingPathComponent(name)
    }

    /// The full path of `name` on `PATH` (or in the usual system folders), if it is installed.
    public static func which(_ name: String) -> String? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? ""
        let folders = path.split(separator: ":").map(String.init) + ["/usr/sbin", "/usr/bin", "/sbin", "/bin"]
        return folders.map { "\($0)/\(name)" }.first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    /// Runs `executable` to the end and returns its exit status and its standard output and error, interleaved.
    /// A process still running after `timeout` is terminated (its status then says so). The program must not
    /// leave a daemon behind: that would hold the output open and the run would not end.
    public static func run(_ executable: String, _ arguments: [String], timeout: Duration = .seconds(120)) async throws -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        process.standardInput = FileHandle.nullDevice
        // Read while it runs, so a chatty process never blocks on a full pipe. The read blocks until the process
        // ends, so it runs on a thread of its own: on Swift concurrency's threads, two children running at once took
        // both threads of a 2-core machine and stalled every other test in the process until they ended.
        let (output, deliver) = AsyncStream.makeStream(of: Data.self, bufferingPolicy: .bufferingNewest(1))
        Thread {
            deliver.yield(pipe.fileHandleForReading.readDataToEndOfFile())
            deliver.finish()
        }.start()
        let watchdog = Task.detached {
            try await Task.sleep(for: timeout)
            if process.isRunning { process.terminate() }
        }
        let status: Int32 = try await withCheckedThrowingContinuation { continuation in
            process.terminationHandler = { continuation.resume(returning: $0.terminationStatus) }
            do {
                try process.run()
            } catch {
                process.terminationHandler = nil
                continuation.resume(throwing: error)
            }
        }
        watchdog.cancel()
        var data = Data()
        for await read in output { data = read }
        return (status, String(decoding: data, as: UTF8.self))
    }
}
