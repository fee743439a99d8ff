import GameCenterProtocol
import OpenGameKitSessionWire

/// Where one unreliable message goes and how it is sealed: a connected peer's UDP endpoint, the datagram's header
/// (the peer's datagram id and a counter of its own) and the key.
struct UnreliableTarget: Sendable {
    /// The peer.
    var peerID: String
    /// The peer's IP address.
    var host: String
    /// The peer's UDP port.
    var port: UInt16
    /// The datagram's header.
    var header: UnreliableDatagram
    /// The key of this direction's datagrams.
    var cipher: ChaChaPolyCipher
}
