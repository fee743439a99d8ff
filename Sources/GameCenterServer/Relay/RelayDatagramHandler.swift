import NIOCore

/// Hands the UDP socket's datagrams to the relay and sends what it answers, flushing once per read burst (so a
/// burst goes out in one `sendmmsg`).
final class RelayDatagramHandler: ChannelInboundHandler {
    typealias InboundIn = AddressedEnvelope<ByteBuffer>
    typealias OutboundOut = AddressedEnvelope<ByteBuffer>

    private let relay: RelayService
    private var outgoing: RelayMatchState.Datagrams = []
    private var unflushed = false

    init(relay: RelayService) {
        self.relay = relay
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let envelope = unwrapInboundIn(data)
        relay.receiveDatagram(envelope.data, from: envelope.remoteAddress, into: &outgoing)
        guard !outgoing.isEmpty else { return }
        for datagram in outgoing {
            context.write(wrapOutboundOut(AddressedEnvelope(remoteAddress: datagram.address, data: datagram.bytes)), promise: nil)
        }
        outgoing.removeAll(keepingCapacity: true)
        unflushed = true
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        if unflushed {
            unflushed = false
            context.flush()
        }
    }

    /// A send that failed (the device's port closed) must not close the server's socket.
    func errorCaught(context: ChannelHandlerContext, error: any Error) {}
}
