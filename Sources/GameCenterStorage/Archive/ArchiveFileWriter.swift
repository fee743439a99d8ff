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
    /// Every column's key as a line writes it before the value — `{"name":` for the first, `,"name":` after — one
    /// after the other; column `i`'s is `keyBytes[keyStarts[i]..<keyStarts[i + 1]]`.
    private let keyBytes: [UInt8]
    private let keyStarts: [Int]
    private let state = Mutex(State())
    private static let flushSize = 1 << 20

    init(url: URL, columns: [ArchiveColumn]) throws {
        guard FileManager.default.createFile(atPath: url.path, contents: nil) else {
            throw StorageError.unavailable("cannot create \(url.lastPathComponent) in the export folder")
        }
        handle = try FileHandle(forWritingTo: url)
        self.columns = columns
        let keys = columns.enumerated().map { index, column in Array("\(index == 0 ? "{" : ",")\"\(column.name)\":".utf8) }
        keyBytes = keys.flatMap { $0 }
        keyStarts = keys.reduce(into: [0]) { starts, key in starts.append(starts.last! + key.count) }
    }

    /// Appends one row; `values` holds a value per column, in the catalog's order.
    func append(_ values: [ArchiveValue]) throws {
        try appendRow { column, line in Self.encode(values[column], into: &line) }
    }

    /// Appends one row: writes each column's key and has `writeValue` write the column's value after it, column by
    /// column in the catalog's order; then closes the object and the line.
    func appendRow(_ writeValue: (_ column: Int, _ line: inout [UInt8]) throws -> Void) throws {
        try state.withLock { state in
            try keyBytes.withUnsafeBufferPointer { keys in
                for column in 0..<keyStarts.count - 1 {
                    state.buffer.append(contentsOf: UnsafeBufferPointer(rebasing: keys[keyStarts[column]..<keyStarts[column + 1]]))
                    try writeValue(column, &state.buffer)
                }
            }
            state.buffer.append(contentsOf: [UInt8(ascii: "}"), UInt8(ascii: "\n")])
            state.records += 1
            if state.buffer.count >= Self.flushSize { try flush(&state) }
        }
    }

    /// Appends the lines of another writer's finished file at `url`, which holds `records` of them.
    func append(contentsOf url: URL, records: Int) throws {
        let part = try FileHandle(forReadingFrom: url)
        defer { try? part.close() }
        try state.withLock { state in
            while let chunk = try part.read(upToCount: Self.flushSize), !chunk.isEmpty {
                state.buffer.append(contentsOf: chunk)
                try flush(&state)
            }
            state.records += records
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

    /// Writes `value` as JSON.
    static func encode(_ value: ArchiveValue, into buffer: inout [UInt8]) {
        switch value {
        case .null:
            buffer.append(contentsOf: "null".utf8)
        case .integer(let number):
            buffer.append(contentsOf: String(number).utf8)
        case .real(let number):
            // Swift's description is the shortest text that reads back as the same double, and valid JSON.
            buffer.append(contentsOf: number.isFinite ? "\(number)".utf8 : "null".utf8)
        case .text(var text):
            text.withUTF8 { encode(utf8: UnsafeRawBufferPointer($0), into: &buffer) }
        case .bytes(let bytes):
            buffer.append(UInt8(ascii: "\""))
            buffer.append(contentsOf: Data(bytes).base64EncodedString().utf8)
            buffer.append(UInt8(ascii: "\""))
        }
    }

    /// Writes UTF-8 text as an RFC 8259 string: quotes, backslashes and control characters escaped (the short forms
    /// where JSON has one), everything else as its bytes — runs without an escape copied at once.
    static func encode(utf8 text: UnsafeRawBufferPointer, into buffer: inout [UInt8]) {
        buffer.append(UInt8(ascii: "\""))
        var plain = 0
        for (index, byte) in text.enumerated() where byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") {
            buffer.append(contentsOf: UnsafeRawBufferPointer(rebasing: text[plain..<index]))
            plain = index + 1
            switch byte {
            case UInt8(ascii: "\""): buffer.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\"")])
            case UInt8(ascii: "\\"): buffer.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\\")])
            case UInt8(ascii: "\n"): buffer.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "n")])
            case UInt8(ascii: "\r"): buffer.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "r")])
            case UInt8(ascii: "\t"): buffer.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "t")])
            case 0x08: buffer.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "b")])
            case 0x0C: buffer.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "f")])
            default: buffer.append(contentsOf: String(format: "\\u%04x", byte).utf8)
            }
        }
        buffer.append(contentsOf: UnsafeRawBufferPointer(rebasing: text[plain...]))
        buffer.append(UInt8(ascii: "\""))
    }
}
