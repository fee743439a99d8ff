import Crypto
import Foundation

/// Reads a JSON Lines file a chunk at a time, handing out one line at a time (without its newline) and hashing
/// every byte, so that a file of any size is read in constant memory.
struct ArchiveLineReader {
    private let handle: FileHandle
    private var buffer: [UInt8] = []
    private var start = 0
    private var hash = SHA256()
    private var ended = false
    /// Lines handed out so far.
    private(set) var lineNumber = 0
    private static let chunkSize = 1 << 20

    init(url: URL) throws {
        handle = try FileHandle(forReadingFrom: url)
    }

    /// The next line, or nil at the end of the file (a last line without a newline is still a line).
    mutating func nextLine() throws -> ArraySlice<UInt8>? {
        while true {
            if let newline = buffer[start...].firstIndex(of: UInt8(ascii: "\n")) {
                let line = buffer[start..<newline]
                start = newline + 1
                lineNumber += 1
                return line
            }
            if ended {
                guard start < buffer.count else { return nil }
                let line = buffer[start...]
                start = buffer.count
                lineNumber += 1
                return line
            }
            buffer.removeFirst(start)
            start = 0
            let chunk = try handle.read(upToCount: Self.chunkSize) ?? Data()
            if chunk.isEmpty {
                ended = true
            } else {
                hash.update(data: chunk)
                buffer.append(contentsOf: chunk)
            }
        }
    }

    /// Closes the file and returns the SHA-256 of everything read, lowercase hex.
    mutating func finish() throws -> String {
        try handle.close()
        return hash.finalize().map { String(format: "%02x", $0) }.joined()
    }
}
