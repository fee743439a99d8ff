import NIOCore

/// Why decoding a relay frame or datagram failed.
///
/// Every relay decoder throws only this type, so a caller can drop the offending frame or close the connection
/// without inspecting anything else. Compare against the static members (`error == .truncated`); the cases carry
/// no payload bytes, so the description is safe to log.
public struct RelayWireError: Error, Sendable, Equatable, CustomStringConvertible {
    private enum Kind: Sendable, Equatable {
        case truncated
        case unknownType(UInt8)
        case invalidUTF8
        case invalidValue(String)
        case trailingBytes
        case authenticationFailed
    }

    private let kind: Kind

    private init(_ kind: Kind) {
        self.kind = kind
    }

    /// The bytes ended before the layout did.
    public static let truncated = RelayWireError(.truncated)

    /// The type or kind byte names no known frame or datagram.
    ///
    /// - Parameter byte: The unrecognised type byte, kept for the description.
    public static func unknownType(_ byte: UInt8) -> RelayWireError {
        RelayWireError(.unknownType(byte))
    }

    /// A string field was not valid UTF-8.
    public static let invalidUTF8 = RelayWireError(.invalidUTF8)

    /// A field held a value outside its allowed set, such as a member state of 3 or an empty player id.
    ///
    /// - Parameter what: Names the field and the problem; it is part of equality.
    public static func invalidValue(_ what: String) -> RelayWireError {
        RelayWireError(.invalidValue(what))
    }

    /// Bytes followed the end of a frame whose layout has no open-ended payload.
    public static let trailingBytes = RelayWireError(.trailingBytes)

    /// A datagram was tampered with, sealed under another key or for the other direction, or has an unknown kind.
    public static let authenticationFailed = RelayWireError(.authenticationFailed)

    /// Says what was wrong, for logs, for example "relay frame truncated".
    public var description: String {
        switch kind {
        case .truncated:
            "relay frame truncated"
        case .unknownType(let byte):
            "unknown relay frame type 0x\(String(byte, radix: 16))"
        case .invalidUTF8:
            "relay frame holds invalid UTF-8"
        case .invalidValue(let what):
            "invalid value in relay frame: \(what)"
        case .trailingBytes:
            "relay frame has trailing bytes"
        case .authenticationFailed:
            "relay datagram failed authentication"
        }
    }
}

// MARK: - Reading and writing the relay's field types

extension ByteBuffer {
    /// Reads a big-endian integer or throws `truncated`.
    mutating func readRelayInteger<Integer: FixedWidthInteger>(
        as: Integer.Type = Integer.self
    ) throws(RelayWireError) -> Integer {
        guard let value = readInteger(as: Integer.self) else { throw .truncated }
        return value
    }

    /// Reads `byteCount` bytes as strictly validated UTF-8.
    mutating func readRelayString(byteCount: Int) throws(RelayWireError) -> String {
        guard readableBytes >= byteCount else { throw .truncated }
        // NIO's readString repairs invalid UTF-8 with U+FFFD; hostile input must be rejected instead.
        let string = withUnsafeReadableBytes { bytes in
            String(validating: UnsafeRawBufferPointer(rebasing: bytes.prefix(byteCount)), as: UTF8.self)
        }
        moveReaderIndex(forwardBy: byteCount)
        guard let string else { throw .invalidUTF8 }
        return string
    }

    /// Reads a UInt16 length followed by that many UTF-8 bytes.
    mutating func readRelayMessage() throws(RelayWireError) -> String {
        try readRelayString(byteCount: Int(readRelayInteger(as: UInt16.self)))
    }

    /// Writes a UInt16 length and the string's UTF-8 bytes; the caller keeps the string within 65,535 bytes.
    mutating func writeRelayMessage(_ message: String) {
        let byteCount = message.utf8.count
        precondition(byteCount <= Int(UInt16.max), "relay message longer than 65,535 UTF-8 bytes")
        writeInteger(UInt16(byteCount))
        writeString(message)
    }

    /// Reads a recipient count byte and that many member indices.
    mutating func readRelayRecipients() throws(RelayWireError) -> [UInt8] {
        let count = Int(try readRelayInteger(as: UInt8.self))
        guard let recipients = readBytes(length: count) else { throw .truncated }
        return recipients
    }

    /// Writes a recipient count byte and the indices; the caller keeps the list within 255 entries.
    mutating func writeRelayRecipients(_ recipients: [UInt8]) {
        precondition(recipients.count <= Int(UInt8.max), "more than 255 relay recipients")
        writeInteger(UInt8(recipients.count))
        writeBytes(recipients)
    }

    /// Takes every remaining readable byte as a slice sharing this buffer's storage.
    mutating func readRelayPayload() -> ByteBuffer {
        // A slice of exactly the readable bytes always exists.
        readSlice(length: readableBytes)!
    }

    /// Throws `trailingBytes` unless every byte was consumed.
    func expectRelayEnd() throws(RelayWireError) {
        guard readableBytes == 0 else { throw .trailingBytes }
    }
}
