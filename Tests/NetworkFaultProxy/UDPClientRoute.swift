import NIOCore

/// One client of a `FaultyUDPProxy`: its address, its own upstream socket, and any datagrams held for reordering.
///
/// Confined to the router's event loop.
final class UDPClientRoute {
    /// A datagram held back for reordering, with the timer that sends it anyway if nothing follows.
    struct HeldDatagram {
        /// The datagram.
        let bytes: ByteBuffer
        /// How many times to send it.
        let copies: Int
        /// Sends it after a while if no later datagram overtakes it first.
        let release: Scheduled<Void>
    }

    /// The client's address, where the server's answers are sent.
    let client: SocketAddress
    /// The socket that talks to the server for this client, once bound.
    var upstream: (any Channel)?
    /// Datagrams for the server that arrived while the upstream socket was still binding.
    var awaitingUpstream: [ByteBuffer] = []
    /// The datagram held back in each direction, if any.
    var held: [UDPProxyCore.Direction: HeldDatagram] = [:]

    /// Creates the route for `client`; the router binds its upstream socket.
    init(client: SocketAddress) {
        self.client = client
    }
}
