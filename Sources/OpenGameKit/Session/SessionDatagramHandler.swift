import NIOCore

/// The NIO edge of a session's UDP socket: hands the datagrams of each read cycle to the session together.
final class SessionDatagramHandler: ChannelInboundHandler {
    typealias InboundIn = AddressedEnvelope<ByteBuffer>

    private let inbox: SessionInbox
    private var batch: [ByteBuffer] = []

    /// Creates the handler.
    init(inbox: SessionInbox) {
        self.inbox = inbox
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        batch.append(unwrapInboundIn(data).data)
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        if !batch.isEmpty {
            let datagrams = batch
            batch.removeAll(keepingCapacity: true)
            inbox.session?.handleDatagrams(datagrams)
        }
        context.fireChannelReadComplete()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        // ICMP errors for unreliable datagrams are not fatal.
    }
}
