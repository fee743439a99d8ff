import NIOCore

/// Passes datagrams read by one of a `FaultyUDPProxy`'s sockets to its router.
final class UDPDatagramHandler: ChannelInboundHandler {
    typealias InboundIn = AddressedEnvelope<ByteBuffer>

    /// Which socket this handler reads.
    enum Role {
        /// The proxy's listening socket, which clients send to.
        case front
        /// The upstream socket of one client, which the server answers on.
        case upstream(UDPClientRoute)
    }

    /// Where datagrams go.
    private let router: UDPRouter
    /// Which socket this is.
    private let role: Role

    /// Creates the handler for a socket of `router` playing `role`.
    init(router: UDPRouter, role: Role) {
        self.router = router
        self.role = role
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let envelope = unwrapInboundIn(data)
        switch role {
        case .front:
            router.received(envelope.data, fromClient: envelope.remoteAddress)
        case .upstream(let route):
            router.received(envelope.data, fromServer: envelope.remoteAddress, for: route)
        }
    }
}
