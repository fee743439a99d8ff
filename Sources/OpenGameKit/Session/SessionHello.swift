/// The first frame on a new connection: who is asking, and how to reach it by UDP.
package struct SessionHello: Equatable, Sendable {
    /// The requester's peer id.
    var peerID: String
    /// The requester's display name.
    var displayName: String
    /// The requester's UDP port for unreliable data.
    var udpPort: UInt16
}
