/// Where a state machine wants a message sent.
public enum MDNSDestination: Hashable, Sendable {
    /// To the mDNS group 224.0.0.251, port 5353.
    case multicast
    /// Back to the address and port the triggering message came from (legacy unicast replies, RFC 6762 §6.7).
    case replyToSender
}
