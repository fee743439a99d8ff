/// The first frame on a new connection: who is asking, and how to reach it by UDP.
package struct SessionHello: Equatable, Sendable {
    /// The requester's peer id.
    package var peerID: String
    /// The requester's display name.
    package var displayName: String
    /// The requester's UDP port for unreliable data.
    package var udpPort: UInt16

    /// A hello from `peerID`, named `displayName`, reachable by UDP on `udpPort`.
    package init(peerID: String, displayName: String, udpPort: UInt16) {
        self.peerID = peerID
        self.displayName = displayName
        self.udpPort = udpPort
    }
}
