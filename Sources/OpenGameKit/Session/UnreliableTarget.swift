/// Where one unreliable message goes: a connected peer's UDP endpoint and the token it expects.
struct UnreliableTarget: Equatable, Sendable {
    /// The peer.
    var peerID: String
    /// The peer's IP address.
    var host: String
    /// The peer's UDP port.
    var port: UInt16
    /// The token the peer handed out.
    var token: ConnectionToken
}
