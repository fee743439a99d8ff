/// One message on a session's TCP connection.
///
/// Wire format: a 4-byte big-endian length `n` (1 ≤ n ≤ ``maxLength``), then `n` bytes: a 1-byte kind and
/// the kind's payload. Strings are a 1-byte length and at most 255 bytes of UTF-8.
///
/// | kind | frame | payload |
/// | --- | --- | --- |
/// | 1 | hello | version (1), token (16), UDP port (2), peer id (string), display name (string) |
/// | 2 | accept | token (16), UDP port (2) |
/// | 3 | deny | reason (1) |
/// | 4 | cancel | — |
/// | 5 | data | the message (0…89,088 bytes) |
/// | 6 | heartbeat | — |
/// | 7 | goodbye | — |
enum SessionFrame: Equatable, Sendable {
    /// A connection request (first frame from the requester).
    case hello(SessionHello)
    /// The request was accepted; the acceptor's token and UDP port.
    case accept(token: ConnectionToken, udpPort: UInt16)
    /// The request was refused.
    case deny(DenyReason)
    /// The requester withdrew its request.
    case cancel
    /// One reliable message.
    case data([UInt8])
    /// Keeps an idle connection alive.
    case heartbeat
    /// The sender disconnects.
    case goodbye

    /// The largest allowed length field: a data frame with an 87 KB message.
    static let maxLength = 1 + SessionLimits.maxReliableMessage

    enum Kind: UInt8 {
        case hello = 1, accept, deny, cancel, data, heartbeat, goodbye
    }

    /// The frame's bytes, length prefix included. Strings longer than 255 bytes are cut at a character boundary.
    func encoded() -> [UInt8] {
        var body: [UInt8]
        switch self {
        case .hello(let hello):
            body = [Kind.hello.rawValue, hello.version] + hello.token.bytes + Self.bytes(hello.udpPort)
            body += Self.string(hello.peerID) + Self.string(hello.displayName)
        case .accept(let token, let udpPort):
            body = [Kind.accept.rawValue] + token.bytes + Self.bytes(udpPort)
        case .deny(let reason):
            body = [Kind.deny.rawValue, reason.rawValue]
        case .cancel:
            body = [Kind.cancel.rawValue]
        case .data(let payload):
            body = [Kind.data.rawValue]
            body.reserveCapacity(1 + payload.count)
            body += payload
        case .heartbeat:
            body = [Kind.heartbeat.rawValue]
        case .goodbye:
            body = [Kind.goodbye.rawValue]
        }
        let length = UInt32(body.count)
        return [UInt8(length >> 24), UInt8((length >> 16) & 0xFF), UInt8((length >> 8) & 0xFF), UInt8(length & 0xFF)] + body
    }

    /// Parses one frame body (kind and payload, without the length prefix).
    static func decode(body: ArraySlice<UInt8>) throws(SessionProtocolError) -> SessionFrame {
        var reader = Reader(bytes: body)
        guard let rawKind = reader.byte() else { throw .emptyFrame }
        guard let kind = Kind(rawValue: rawKind) else { throw .unknownKind(rawKind) }
        let frame: SessionFrame
        switch kind {
        case .hello:
            guard let version = reader.byte(), let token = reader.token(), let port = reader.uint16() else { throw .truncated(kind: rawKind) }
            guard let peerID = try reader.string(), let name = try reader.string() else { throw .truncated(kind: rawKind) }
            frame = .hello(SessionHello(version: version, peerID: peerID, displayName: name, token: token, udpPort: port))
        case .accept:
            guard let token = reader.token(), let port = reader.uint16() else { throw .truncated(kind: rawKind) }
            frame = .accept(token: token, udpPort: port)
        case .deny:
            guard let raw = reader.byte() else { throw .truncated(kind: rawKind) }
            guard let reason = DenyReason(rawValue: raw) else { throw .unknownDenyReason(raw) }
            frame = .deny(reason)
        case .cancel: frame = .cancel
        case .data: return .data(Array(reader.rest()))
        case .heartbeat: frame = .heartbeat
        case .goodbye: frame = .goodbye
        }
        guard reader.isAtEnd else { throw .trailingBytes(kind: rawKind) }
        return frame
    }

    private static func bytes(_ value: UInt16) -> [UInt8] {
        [UInt8(value >> 8), UInt8(value & 0xFF)]
    }

    private static func string(_ value: String) -> [UInt8] {
        var utf8 = Array(value.utf8)
        if utf8.count > 255 {
            var cut = ""
            for character in value {
                if cut.utf8.count + String(character).utf8.count > 255 { break }
                cut.append(character)
            }
            utf8 = Array(cut.utf8)
        }
        return [UInt8(utf8.count)] + utf8
    }

    /// Reads fields from a frame body without ever reading past its end.
    private struct Reader {
        var bytes: ArraySlice<UInt8>

        var isAtEnd: Bool { bytes.isEmpty }

        mutating func byte() -> UInt8? {
            bytes.popFirst()
        }

        mutating func uint16() -> UInt16? {
            guard bytes.count >= 2, let high = bytes.popFirst(), let low = bytes.popFirst() else { return nil }
            return UInt16(high) << 8 | UInt16(low)
        }

        mutating func token() -> ConnectionToken? {
            guard bytes.count >= ConnectionToken.length else { return nil }
            let token = ConnectionToken(bytes: Array(bytes.prefix(ConnectionToken.length)))
            bytes = bytes.dropFirst(ConnectionToken.length)
            return token
        }

        mutating func string() throws(SessionProtocolError) -> String? {
            guard let count = byte(), bytes.count >= Int(count) else { return nil }
            let raw = bytes.prefix(Int(count))
            bytes = bytes.dropFirst(Int(count))
            guard let string = String(validating: raw, as: UTF8.self) else { throw .invalidUTF8 }
            return string
        }

        mutating func rest() -> ArraySlice<UInt8> {
            defer { bytes = [] }
            return bytes
        }
    }
}
