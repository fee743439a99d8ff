import NIOCore

/// One UDP datagram received by a ``MulticastSocket``.
public struct ReceivedDatagram: Sendable {
    /// The payload bytes.
    public var bytes: [UInt8]
    /// The sender's address and port.
    public var source: SocketAddress

    /// Creates a datagram record.
    public init(bytes: [UInt8], source: SocketAddress) {
        self.bytes = bytes
        self.source = source
    }
}
