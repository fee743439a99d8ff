import Crypto
import Foundation
import Synchronization

/// One column's value of an archived record, on its way to or from a JSON line.
public enum ArchiveValue: Sendable, Equatable {
    /// No value: JSON `null`.
    case null
    /// A 64-bit integer, for `integer` columns.
    case integer(Int64)
    /// A number, for `real` columns.
    case real(Double)
    /// A string, for `text` columns.
    case text(String)
    /// Bytes, for `bytes` columns (written as base64).
    case bytes([UInt8])
}

/// Writes one kind's JSON Lines file: each row as one JSON object with its columns in the catalog's order, buffered,
/// counted and hashed as it goes, so that memory stays flat however many rows there are.
final class ArchiveFileWriter: Sendable {
    private struct State {
        var buffer: [UInt8] = []
        var hash = SHA256()
        var records = 0
    }

    private let handle: FileHandle
    private let columns: [ArchiveColumn]
    private let keys: [[UInt8]]
    private let state = Mutex(State())
    private static let flushSize = 1 << 20

    init(url: URL, columns: [ArchiveColumn]) throws {
        guard FileManager.default.createFile(atPath: url.path, contents: nil) else {
            throw StorageError.unavailable("cannot create \(url.lastPathComponent) in the export folder")
        }
        handle = try FileHandle(forWritingTo: url)
        self.columns = columns
        // `{"name":` once per column, the first without its comma.
        keys = columns.enumerated().map { index, column in Array("\(index == 0 ? "{" : ",")\"\(column.name)\":".utf8) }
    }

    /// Appends one row; `values` holds a value per column, in the catalog's order.
    func append(_ values: [ArchiveValue]) throws {
        try state.withLock { state in
            for (index, value) in values.enumerated() {
                state.buffer.append(contentsOf: keys[index])
                Self.encode(value, into: &state.buffer)
            }
            state.buffer.append(contentsOf: [UInt8(ascii: "}"), UInt8(ascii: "\n")])
            state.records += 1
            if state.buffer.count >= Self.flushSize { try flush(&state) }
        }
    }

    /// Writes what is buffered, closes the file, and returns its entry for the manifest.
    func finish(name: String) throws -> ArchiveFileEntry {
        try state.withLock { state in
            try flush(&state)
            try handle.close()
            let digest = state.hash.finalize().map { String(format: "%02x", $0) }.joined()
            return ArchiveFileEntry(name: name, records: state.records, sha256: digest)
        }
    }

    private func flush(_ state: inout State) throws {
        guard !state.buffer.isEmpty else { return }
        state.hash.update(data: state.buffer)
        try handle.write(contentsOf: state.buffer)
        state.buffer.removeAll(keepingCapacity: true)
    }

    private static func encode(_ value: ArchiveValue, into buffer: inout [UInt8]) {
        switch value {
        case .null:
            buffer.append(contentsOf: Array("null".utf8))
        case .integer(let number):
            buffer.append(contentsOf: Array(String(number).utf8))
        case .real(let number):
            // Swift's description is the shortest text that reads back as the same double, and valid JSON.
            buffer.append(contentsOf: number.isFinite ? Array("\(number)".utf8) : Array("null".utf8))
        case .text(let text):
            encode(string: text, into: &buffer)
        case .bytes(let bytes):
            buffer.append(UInt8(ascii: "\""))
            buffer.append(contentsOf: Array(Data(bytes).base64EncodedString().utf8))
            buffer.append(UInt8(ascii: "\""))
        }
    }

    /// RFC 8259 string: quotes, backslashes and control characters escaped, everything else as its UTF-8 bytes.
    private static func encode(string: String, into buffer: inout [UInt8]) {
        buffer.append(UInt8(ascii: "\""))
        for byte in string.utf8 {
            switch byte {
            case UInt8(ascii: "\""): buffer.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\"")])
            case UInt8(ascii: "\\"): buffer.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\\")])
            case UInt8(ascii: "\n"): buffer.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "n")])
            case UInt8(ascii: "\r"): buffer.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "r")])
            case UInt8(ascii: "\t"): buffer.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "t")])
            case 0..<0x20:
                buffer.append(contentsOf: Array(String(format: "\\u%04x", byte).utf8))
            default: buffer.append(byte)
            }
        }
        buffer.append(UInt8(ascii: "\""))
    }
}
