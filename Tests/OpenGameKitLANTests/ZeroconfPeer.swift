import Foundation

/// Test support: runs `Tests/Interop/zeroconf_peer.py` (python-zeroconf) as an independent mDNS peer.
enum ZeroconfPeer {
    static let script = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Interop/zeroconf_peer.py")

    /// The first python3 that can import `zeroconf`: `$PYTHON3`, then each `python3` on `PATH`, then common paths.
    static let python: String? = {
        let environment = ProcessInfo.processInfo.environment
        let fromPath = (environment["PATH"] ?? "").split(separator: ":").map { "\($0)/python3" }
        let candidates = [environment["PYTHON3"]].compactMap { $0 } + fromPath + ["/usr/local/bin/python3", "/usr/bin/python3"]
        return candidates.first { candidate in
            guard FileManager.default.isExecutableFile(atPath: candidate) else { return false }
            let process = Process()
            process.executableURL = URL(fileURLWithPath: candidate)
            process.arguments = [script.path, "check"]
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            guard (try? process.run()) != nil else { return false }
            process.waitUntilExit()
            return process.terminationStatus == 0
        }
    }()

    /// Whether python3 with the `zeroconf` package is available.
    static var isAvailable: Bool { python != nil }

    static let skipMessage = "python3 with the zeroconf package is required (pip install zeroconf); interop tests skipped"

    /// A running helper process.
    final class Running: @unchecked Sendable {
        let process = Process()
        let stdout = Pipe()
        let stderr = Pipe()
        let stdin = Pipe()

        init(_ arguments: [String]) throws {
            process.executableURL = URL(fileURLWithPath: ZeroconfPeer.python ?? "/usr/bin/python3")
            process.arguments = [ZeroconfPeer.script.path] + arguments
            process.standardOutput = stdout
            process.standardError = stderr
            process.standardInput = stdin
            try process.run()
        }

        /// Waits for the process to exit (killing it after `timeout`) and returns its status and output.
        func finish(timeout: Duration) async -> (status: Int32, stdout: String, stderr: String) {
            let deadline = ContinuousClock.now + timeout
            while process.isRunning, ContinuousClock.now < deadline {
                try? await Task.sleep(for: .milliseconds(50))
            }
            if process.isRunning {
                process.terminate()
                process.waitUntilExit()
            }
            let out = String(decoding: stdout.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            let err = String(decoding: stderr.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            return (process.terminationStatus, out, err)
        }

        /// Closes the helper's stdin, which tells a `register` helper to unregister and exit.
        func closeInput() {
            try? stdin.fileHandleForWriting.close()
        }
    }
}
