/// Why bytes received from a peer are not a valid session frame or datagram. The connection is closed.
package enum SessionProtocolError: Error, Equatable, Sendable {
    /// A length prefix of zero.
    case emptyFrame
    /// A length prefix larger than ``SessionFrame/maxLength``.
    case frameTooLong(UInt32)
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
    /// A frame that is valid on its own but not at this point of the conversation.
    case unexpectedFrame
}
