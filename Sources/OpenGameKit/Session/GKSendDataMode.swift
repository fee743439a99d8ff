/// How ``GKSession`` delivers a message.
public enum GKSendDataMode: Sendable {
    /// Delivered in order and exactly once over the peer's TCP connection (at most 87 KB per message).
    case reliable
    /// Sent once as a single UDP datagram (at most 1000 bytes); it may be lost, duplicated or reordered.
    case unreliable
}
