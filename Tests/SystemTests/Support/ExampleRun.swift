import Foundation

/// A running copy of one of the package's examples (`Examples/<name>`, built beside the `gamecenter` binary), as a
/// player starts it in a terminal: its standard input open, everything it prints kept.
final class ExampleRun: @unchecked Sendable {
    let process = Process()
    let input = Pipe()
    let output = TextBuffer()

    /// Starts example `name` with `arguments` and exactly `environment`, in `folder` when given.
    init(_ name: String, _ arguments: [String] = [], environment: [String: String], in folder: URL? = nil) throws {
        process.executableURL = URL(fileURLWithPath: LiveServer.binary).deletingLastPathComponent().appendingPathComponent(name)
        process.arguments = arguments
        process.environment = environment
        if let folder { process.currentDirectoryURL = folder }
        let pipe = Pipe()
        process.standardInput = input
        process.standardOutput = pipe
        process.standardError = pipe
        pipe.fileHandleForReading.readabilityHandler = { [output] handle in
            let data = handle.availableData
            output.text.withLock { $0 += String(decoding: data, as: UTF8.self) }
        }
        try process.run()
    }

    /// What it printed so far.
    var printed: String { output.text.withLock { $0 } }

    /// Stops it if it is still running.
    func stop() {
        if process.isRunning { process.terminate() }
    }
}
