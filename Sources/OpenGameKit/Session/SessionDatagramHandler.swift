import NIOCore

/// The NIO edge of a session's UDP socket: hands every received datagram to the session.
final class SessionDatagramHandler: ChannelInboundHandler {
    typealias InboundIn = AddressedEnvelope<ByteBuffer>

    private let inbox: SessionInbox

    /// Creates the handler.
    init(inbox: SessionInbox) {
        self.inbox = inbox
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let envelope = unwrapInboundIn(data)
        inbox.session?.handleDatagram(Array(buffer: envelope.data))
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        // ICMP errors for unreliable datagrams are not fatal.
    }
}
