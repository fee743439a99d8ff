import Foundation

/// Runs a program to its end on a thread of its own and answers its exit status and what it wrote to standard output:
/// waiting for a process blocks the thread that waits, and one of Swift's cooperative threads (two on a 2-core
/// machine) is half of what runs every other test of the run.
enum ChildProcess {
    static func run(_ executable: String, _ arguments: [String]) async throws -> (status: Int32, output: Data) {
        try await withCheckedThrowingContinuation { continuation in
            Thread {
                continuation.resume(
                    with: Result {
                        let process = Process()
                        process.executableURL = URL(fileURLWithPath: executable)
                        process.arguments = arguments
                        let output = Pipe()
                        process.standardOutput = output
                        try process.run()
                        let data = output.fileHandleForReading.readDataToEndOfFile()
                        process.waitUntilExit()
                        return (process.terminationStatus, data)
                    })
            }.start()
        }
    }
}
