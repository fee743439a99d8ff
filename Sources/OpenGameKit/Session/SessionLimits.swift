/// The limits of a ``GKSession`` (Game Kit Programming Guide, "Peer-to-Peer Connectivity").
enum SessionLimits {
    /// The largest reliable message: 87 KB (87 × 1024 = 89,088 bytes).
    static let maxReliableMessage = 87 * 1024
    /// The largest unreliable message: one UDP datagram of at most 1000 bytes of payload.
    static let maxUnreliableMessage = 1000
    /// The most peers one session can be connected to at once.
    static let maxConnectedPeers = 16
    /// How many bytes may wait in one connection's send queue before sends fail.
    static let maxQueuedBytesPerConnection = 4 * 1024 * 1024
    /// How many bytes of unreliable datagrams may wait to be sent before new ones are dropped.
    static let maxQueuedDatagramBytes = 256 * 1024
    /// The protocol version carried in the hello frame.
    static let protocolVersion: UInt8 = 1
}
