import NIOCore

/// The limits of a `GKSession` (Game Kit Programming Guide, "Peer-to-Peer Connectivity").
package enum SessionLimits {
    /// The largest reliable message: 87 KB (87 × 1024 = 89,088 bytes).
    package static let maxReliableMessage = 87 * 1024
    /// The largest unreliable message sent as one UDP datagram (1000 bytes of payload); larger ones, up to
    /// ``maxReliableMessage``, go on the reliable connection.
    package static let maxUnreliableMessage = 1000
    /// The most peers one session can be connected to at once.
    package static let maxConnectedPeers = 16
    /// How many bytes may wait in one connection's send queue before sends fail.
    package static let maxQueuedBytesPerConnection = 4 * 1024 * 1024
    /// The UDP sockets' send and receive buffer size asked of the kernel (it may give less: `net.core.wmem_max`,
    /// `net.core.rmem_max`). Bursts of unreliable messages wait here instead of being dropped while the receiver is busy.
    package static let datagramSocketBufferBytes = 2 * 1024 * 1024
    /// How many datagrams one `recvmmsg` call may read.
    package static let datagramsPerRead = 64
    /// How many `recvmmsg` calls one wake-up of the event loop may make before it serves its other sockets.
    package static let datagramReadsPerWakeUp: UInt = 8
    /// The receive buffer for one `recvmmsg` call: NIO splits it evenly between the datagrams, so each gets 2 KiB,
    /// more than the largest valid datagram (a longer one is cut there and then rejected as oversized).
    package static let datagramReceiveAllocator = FixedSizeRecvByteBufferAllocator(capacity: datagramsPerRead * 2048)
    /// Reads on session TCP connections: up to 256 KiB at once, so a burst of large messages takes few reads.
    package static let receiveAllocator = AdaptiveRecvByteBufferAllocator(minimum: 1024, initial: 16 * 1024, maximum: 256 * 1024)
    /// The session protocol's version, in the handshake and in every datagram: 2 since sessions are encrypted (1 sent
    /// everything in clear).
    package static let protocolVersion: UInt8 = 2
}
