import Foundation

/// The lines typed on standard input, as an `AsyncStream`; it finishes at end of input.
enum StandardInputLines {
    /// One shared reader, so several pickers in a row read the same input without racing.
    static let shared: AsyncStream<String> = {
        let (stream, continuation) = AsyncStream.makeStream(of: String.self)
        let thread = Thread {
            while let line = readLine() { continuation.yield(line) }
            continuation.finish()
        }
        thread.start()
        return stream
    }()
}
