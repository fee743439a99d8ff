/// The first frame on a new connection: who is asking, and how to reach it by UDP.
package struct SessionHello: Equatable, Sendable {
    /// The protocol version (``SessionLimits/protocolVersion``).
    var version: UInt8
    /// The requester's peer id.
    var peerID: String
    /// The requester's display name.
    var displayName: String
    /// The token the requester wants in every unreliable datagram sent to it.
    var token: ConnectionToken
    /// The requester's UDP port for unreliable data.
    var udpPort: UInt16
}
