import NIOCore

/// The limits of a ``GKSession`` (Game Kit Programming Guide, "Peer-to-Peer Connectivity").
enum SessionLimits {
    /// The largest reliable message: 87 KB (87 × 1024 = 89,088 bytes).
    static let maxReliableMessage = 87 * 1024
    /// The largest unreliable message sent as one UDP datagram (1000 bytes of payload); larger ones, up to
    /// ``maxReliableMessage``, go on the reliable connection.
    static let maxUnreliableMessage = 1000
    /// The most peers one session can be connected to at once.
    static let maxConnectedPeers = 16
    /// How many bytes may wait in one connection's send queue before sends fail.
    static let maxQueuedBytesPerConnection = 4 * 1024 * 1024
    /// The UDP sockets' send and receive buffer size asked of the kernel (it may give less: `net.core.wmem_max`,
    /// `net.core.rmem_max`). Bursts of unreliable messages wait here instead of being dropped while the receiver is busy.
    static let datagramSocketBufferBytes = 2 * 1024 * 1024
    /// How many datagrams one `recvmmsg` call may read.
    static let datagramsPerRead = 64
    /// How many `recvmmsg` calls one wake-up of the event loop may make before it serves its other sockets.
    static let datagramReadsPerWakeUp: UInt = 8
    /// The receive buffer for one `recvmmsg` call: NIO splits it evenly between the datagrams, so each gets 2 KiB,
    /// more than the largest valid datagram (a longer one is cut there and then rejected as oversized).
    static let datagramReceiveAllocator = FixedSizeRecvByteBufferAllocator(capacity: datagramsPerRead * 2048)
    /// Reads on session TCP connections: up to 256 KiB at once, so a burst of large messages takes few reads.
    static let receiveAllocator = AdaptiveRecvByteBufferAllocator(minimum: 1024, initial: 16 * 1024, maximum: 256 * 1024)
    /// The session protocol's version, in the handshake and in every datagram: 2 since sessions are encrypted (1 sent
    /// everything in clear).
    static let protocolVersion: UInt8 = 2
}
