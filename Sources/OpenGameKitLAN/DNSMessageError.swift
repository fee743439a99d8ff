/// Why a DNS message could not be parsed or encoded.
public enum DNSMessageError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The input ended before the named structure was complete.
    case truncated(String)
    /// A name compression pointer pointed forward, into itself, or out of bounds, or pointers chained too long.
    case badCompressionPointer(offset: Int)
    /// A label used the reserved length prefixes `01` or `10` (extended label types are not supported).
    case unsupportedLabelType(offset: Int)
    /// A name was longer than 255 bytes, or a label was empty or longer than 63 bytes.
    case invalidName(String)
    /// A record's data did not match its declared length or its type's layout.
    case badRecordData(type: DNSRecordType, reason: String)
    /// A TXT string was longer than 255 bytes.
    case txtStringTooLong(Int)

    /// A human-readable explanation.
    public var description: String {
        switch self {
        case .truncated(let what): "message truncated while reading \(what)"
        case .badCompressionPointer(let offset): "bad name compression pointer at offset \(offset)"
        case .unsupportedLabelType(let offset): "unsupported label type at offset \(offset)"
        case .invalidName(let reason): "invalid name: \(reason)"
        case .badRecordData(let type, let reason): "bad \(type) record data: \(reason)"
        case .txtStringTooLong(let length): "TXT string of \(length) bytes exceeds 255"
        }
    }
}
