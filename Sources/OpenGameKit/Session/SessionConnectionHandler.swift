import NIOCore

/// The NIO edge of one session TCP connection: splits bytes into frames with ``SessionFrameDecoder`` and hands
/// them to the session once per read cycle; malformed input closes the connection.
final class SessionConnectionHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer

    private let inbox: SessionInbox
    private let id: ConnectionID
    private var decoder = SessionFrameDecoder()
    private var frames: [SessionFrame] = []
    private var failed = false

    /// Creates the handler for connection `id`.
    init(inbox: SessionInbox, id: ConnectionID) {
        self.inbox = inbox
        self.id = id
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !failed else { return }
        decoder.feed(unwrapInboundIn(data))
        do {
            while let frame = try decoder.next() { frames.append(frame) }
        } catch {
            failed = true
            deliver()
            inbox.session?.handleProtocolViolation(on: id, error: error)
            context.close(promise: nil)
        }
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        deliver()
        context.fireChannelReadComplete()
    }

    func channelInactive(context: ChannelHandlerContext) {
        deliver()
        inbox.session?.handleConnectionClosed(id)
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }

    private func deliver() {
        guard !frames.isEmpty else { return }
        let batch = frames
        frames.removeAll(keepingCapacity: true)
        inbox.session?.handle(batch, on: id)
    }
}
