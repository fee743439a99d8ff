import Foundation
import Hummingbird
import NIOCore

/// An answer that writes its own JSON (see ``JSONWriter``).
protocol JSONWritable {
    /// Writes this value as one JSON value.
    func write(to json: inout JSONWriter)
}

/// Writes JSON straight into a byte buffer, for the answers sent many times a second (leaderboard pages, score
/// reports, player lookups): Foundation's `JSONEncoder` first builds a tree of boxed values and cost more than the
/// database read of such a request (measured: 18 % of a leaderboard page's CPU).
///
/// The output is what the wire's decoders read (`WireCoding`: dates as seconds since 1970; a nil optional is left
/// out, as `JSONEncoder` does). `JSONWriterTests` compares it, key by key, with `JSONEncoder`'s for every type that
/// uses it, so a field added to one of them and not here fails a test.
struct JSONWriter {
    private(set) var buffer: ByteBuffer

    init(capacity: Int = 1024) {
        buffer = ByteBufferAllocator().buffer(capacity: capacity)
    }

    /// A JSON answer (200 unless told) holding `value`.
    static func response(_ value: some JSONWritable, status: HTTPResponse.Status = .ok) -> Response {
        var json = JSONWriter()
        value.write(to: &json)
        return Response(status: status, headers: [.contentType: "application/json; charset=utf-8"], body: .init(byteBuffer: json.buffer))
    }

    /// Writes `{`, the fields `body` writes, and `}`.
    mutating func object(_ body: (inout JSONWriter) -> Void) {
        separate()
        buffer.writeInteger(UInt8(ascii: "{"))
        body(&self)
        buffer.writeInteger(UInt8(ascii: "}"))
    }

    /// Writes an array of `elements`.
    mutating func array<Element>(_ elements: [Element], _ write: (inout JSONWriter, Element) -> Void) {
        separate()
        buffer.writeInteger(UInt8(ascii: "["))
        for element in elements { write(&self, element) }
        buffer.writeInteger(UInt8(ascii: "]"))
    }

    /// Writes `"key":` inside an object. Keys are the wire's field names: plain ASCII, written as they are.
    mutating func key(_ key: StaticString) {
        separate()
        buffer.writeInteger(UInt8(ascii: "\""))
        buffer.writeStaticString(key)
        buffer.writeStaticString("\":")
    }

    mutating func string(_ value: String) {
        separate()
        buffer.writeInteger(UInt8(ascii: "\""))
        var value = value
        value.withUTF8 { bytes in
            if bytes.contains(where: Self.needsEscape) {
                for byte in bytes { writeEscaped(byte) }
            } else {
                buffer.writeBytes(bytes)
            }
        }
        buffer.writeInteger(UInt8(ascii: "\""))
    }

    mutating func integer(_ value: some BinaryInteger) {
        separate()
        if value < 0 {
            buffer.writeInteger(UInt8(ascii: "-"))
        }
        writeDigits(UInt64(value.magnitude))
    }

    mutating func bool(_ value: Bool) {
        separate()
        buffer.writeStaticString(value ? "true" : "false")
    }

    /// A date as seconds since 1970: the shortest decimal that reads back as the same `Double`.
    mutating func date(_ value: Date) {
        separate()
        buffer.writeString(value.timeIntervalSince1970.description)
    }

    /// Writes a comma before a value or key unless it opens its object or array, or follows its key.
    private mutating func separate() {
        guard buffer.writerIndex > 0, let last = buffer.getInteger(at: buffer.writerIndex - 1, as: UInt8.self) else { return }
        switch last {
        case UInt8(ascii: "{"), UInt8(ascii: "["), UInt8(ascii: ":"): return
        default: buffer.writeInteger(UInt8(ascii: ","))
        }
    }

    private mutating func writeDigits(_ magnitude: UInt64) {
        var value = magnitude
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { digits in
            var start = digits.count
            repeat {
                start -= 1
                digits[start] = UInt8(ascii: "0") + UInt8(value % 10)
                value /= 10
            } while value > 0
            buffer.writeBytes(UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(digits)[start...]))
        }
    }

    private static func needsEscape(_ byte: UInt8) -> Bool {
        byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\")
    }

    private mutating func writeEscaped(_ byte: UInt8) {
        switch byte {
        case UInt8(ascii: "\""): buffer.writeStaticString("\\\"")
        case UInt8(ascii: "\\"): buffer.writeStaticString("\\\\")
        case UInt8(ascii: "\n"): buffer.writeStaticString("\\n")
        case UInt8(ascii: "\r"): buffer.writeStaticString("\\r")
        case UInt8(ascii: "\t"): buffer.writeStaticString("\\t")
        case ..<0x20:
            let hex: [UInt8] = Array("0123456789abcdef".utf8)
            buffer.writeBytes([UInt8(ascii: "\\"), UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0"), hex[Int(byte >> 4)], hex[Int(byte & 0xF)]])
        default: buffer.writeInteger(byte)
        }
    }
}
