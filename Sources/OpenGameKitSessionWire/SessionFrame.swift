import Foundation
import NIOCore

/// One message on a session's TCP connection, carried sealed in one ``SessionRecord`` after the handshake.
///
/// A frame is a 1-byte kind and the kind's payload. Strings are a 1-byte length and at most 255 bytes of UTF-8.
///
/// | kind | frame | payload |
/// | --- | --- | --- |
/// | 1 | hello | UDP port (2), peer id (string), display name (string) |
/// | 2 | accept | UDP port (2) |
/// | 3 | deny | reason (1) |
/// | 4 | cancel | — |
/// | 5 | data | the message (0…89,088 bytes) |
/// | 6 | heartbeat | — |
/// | 7 | goodbye | — |
package enum SessionFrame: Equatable, Sendable {
    /// A connection request (first frame from the requester).
    case hello(SessionHello)
    /// The request was accepted; the acceptor's UDP port.
    case accept(udpPort: UInt16)
    /// The request was refused.
    case deny(DenyReason)
    /// The requester withdrew its request.
    case cancel
    /// One reliable message.
    case data(Data)
    /// Keeps an idle connection alive.
    case heartbeat
    /// The sender disconnects.
    case goodbye

    /// The longest frame: a data frame with an 87 KB message.
    package static let maxLength = 1 + SessionLimits.maxReliableMessage

    package enum Kind: UInt8 {
        case hello = 1, accept, deny, cancel, data, heartbeat, goodbye
    }

    /// The frame's bytes. Strings longer than 255 bytes are cut at a character boundary.
    package func encoded() -> [UInt8] {
        var buffer = ByteBuffer()
        encode(into: &buffer)
        return Array(buffer.readableBytesView)
    }

    /// Appends the frame's bytes to `buffer` (the payload of a data frame is copied once).
    package func encode(into buffer: inout ByteBuffer) {
        switch self {
        case .hello(let hello):
            buffer.writeInteger(Kind.hello.rawValue)
            buffer.writeInteger(hello.udpPort)
            Self.writeString(hello.peerID, to: &buffer)
            Self.writeString(hello.displayName, to: &buffer)
        case .accept(let udpPort):
            buffer.writeInteger(Kind.accept.rawValue)
            buffer.writeInteger(udpPort)
        case .deny(let reason):
            buffer.writeInteger(Kind.deny.rawValue)
            buffer.writeInteger(reason.rawValue)
        case .cancel:
            buffer.writeInteger(Kind.cancel.rawValue)
        case .data(let payload):
            buffer.reserveCapacity(minimumWritableBytes: 1 + payload.count + SessionRecord.tagSize)
            buffer.writeInteger(Kind.data.rawValue)
            buffer.writeBytes(payload)
        case .heartbeat:
            buffer.writeInteger(Kind.heartbeat.rawValue)
        case .goodbye:
            buffer.writeInteger(Kind.goodbye.rawValue)
        }
    }

    /// Parses one frame (kind and payload). A data frame's message is copied out of `body` once.
    package static func decode(body: ByteBuffer) throws(SessionProtocolError) -> SessionFrame {
        var body = body
        guard let rawKind = body.readInteger(as: UInt8.self) else { throw .emptyFrame }
        guard let kind = Kind(rawValue: rawKind) else { throw .unknownKind(rawKind) }
        let frame: SessionFrame
        switch kind {
        case .hello:
            guard let port = body.readInteger(as: UInt16.self), let peerID = try readString(&body), let name = try readString(&body) else {
                throw .truncated(kind: rawKind)
            }
            frame = .hello(SessionHello(peerID: peerID, displayName: name, udpPort: port))
        case .accept:
            guard let port = body.readInteger(as: UInt16.self) else { throw .truncated(kind: rawKind) }
            frame = .accept(udpPort: port)
        case .deny:
            guard let raw = body.readInteger(as: UInt8.self) else { throw .truncated(kind: rawKind) }
            guard let reason = DenyReason(rawValue: raw) else { throw .unknownDenyReason(raw) }
            frame = .deny(reason)
        case .cancel: frame = .cancel
        case .data: return .data(Data(body.readableBytesView))
        case .heartbeat: frame = .heartbeat
        case .goodbye: frame = .goodbye
        }
        guard body.readableBytes == 0 else { throw .trailingBytes(kind: rawKind) }
        return frame
    }

    private static func writeString(_ value: String, to buffer: inout ByteBuffer) {
        var utf8 = Array(value.utf8)
        if utf8.count > 255 {
            var cut = ""
            for character in value {
                if cut.utf8.count + String(character).utf8.count > 255 { break }
                cut.append(character)
            }
            utf8 = Array(cut.utf8)
        }
        buffer.writeInteger(UInt8(utf8.count))
        buffer.writeBytes(utf8)
    }

    /// Reads a 1-byte length and that many bytes of UTF-8; `nil` if the body is too short.
    private static func readString(_ body: inout ByteBuffer) throws(SessionProtocolError) -> String? {
        guard let count = body.readInteger(as: UInt8.self), let raw = body.readSlice(length: Int(count)) else { return nil }
        guard let string = String(validating: raw.readableBytesView, as: UTF8.self) else { throw .invalidUTF8 }
        return string
    }
}
