import NIOCore

/// The NIO edge of one session TCP connection: splits bytes into frames with ``SessionFrameDecoder`` and hands
/// them to the session; malformed input closes the connection.
final class SessionConnectionHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer

    private let inbox: SessionInbox
    private let id: ConnectionID
    private var decoder = SessionFrameDecoder()
    private var failed = false

    /// Creates the handler for connection `id`.
    init(inbox: SessionInbox, id: ConnectionID) {
        self.inbox = inbox
        self.id = id
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !failed else { return }
        let buffer = unwrapInboundIn(data)
        decoder.feed(buffer.readableBytesView)
        while true {
            do {
                guard let frame = try decoder.next() else { return }
                inbox.session?.handle(frame, on: id)
            } catch {
                failed = true
                inbox.session?.handleProtocolViolation(on: id, error: error)
                context.close(promise: nil)
                return
            }
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        inbox.session?.handleConnectionClosed(id)
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }
}
