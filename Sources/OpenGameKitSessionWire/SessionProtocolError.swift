/// Why bytes received from a peer are not a valid session record, frame or datagram. The connection is closed.
package enum SessionProtocolError: Error, Equatable, Sendable {
    /// A length prefix of zero.
    case emptyRecord
    /// A length prefix larger than ``SessionRecord/maxLength``.
    case recordTooLong(UInt32)
    /// The first record is not a `SessionHandshake` (an OpenGameKit older than protocol version 2, or another
    /// program).
    case notAHandshake
    /// A handshake of another protocol version.
    case incompatibleVersion(UInt8)
    /// A handshake of the wrong size, or whose key agreement gives the all-zero secret (a low-order public key).
    case malformedHandshake
    /// A sealed record that does not open: altered, truncated, out of order, or sealed with other keys (the two
    /// sessions use different passphrases, or only one has one).
    case authenticationFailed
    /// The peer sent more records than there are nonces (2⁶⁴ − 1).
    case recordLimitReached
    /// A sealed record without a frame, after the confirmation record.
    case emptyFrame
    /// An unknown frame kind.
    case unknownKind(UInt8)
    /// A frame shorter than its kind requires.
    case truncated(kind: UInt8)
    /// A frame longer than its kind allows.
    case trailingBytes(kind: UInt8)
    /// A deny frame with an unknown reason.
    case unknownDenyReason(UInt8)
    /// A string that is not valid UTF-8.
    case invalidUTF8
    /// A record or frame that is valid on its own but not at this point of the conversation.
    case unexpectedFrame
}
