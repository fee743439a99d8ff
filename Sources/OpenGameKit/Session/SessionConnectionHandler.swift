import NIOCore
import OpenGameKitSessionWire

/// The NIO edge of one session TCP connection. It sends this side's handshake when the connection comes up, splits
/// the received bytes into records and runs them through the connection's ``SessionChannelSecurity``: once the keys
/// are agreed it has the outbox seal (starting with the confirmation record), once the peer's confirmation opens it
/// tells the session the connection is secured, and it hands the frames to the session once per read cycle.
/// Anything invalid — a record that does not open above all — closes the connection.
final class SessionConnectionHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private let inbox: SessionInbox
    private let id: ConnectionID
    private let outbox: ChannelOutbox
    private var security: SessionChannelSecurity
    private var decoder = SessionRecordDecoder()
    private var frames: [SessionFrame] = []
    private var handshakeSent = false
    private var failed = false

    /// Creates the handler for connection `id`, whose sealed records go out through `outbox`.
    init(inbox: SessionInbox, id: ConnectionID, outbox: ChannelOutbox, security: SessionChannelSecurity) {
        self.inbox = inbox
        self.id = id
        self.outbox = outbox
        self.security = security
    }

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { sendHandshake(context: context) }
    }

    func channelActive(context: ChannelHandlerContext) {
        sendHandshake(context: context)
        context.fireChannelActive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !failed else { return }
        decoder.feed(unwrapInboundIn(data))
        do {
            while let event = try decoder.next({ record throws(SessionProtocolError) in try security.receive(record) }) {
                switch event {
                case .keysAgreed(let sealer):
                    outbox.startSealing(with: sealer)
                case .confirmed(let datagrams):
                    inbox.session?.handleSecured(id, datagrams: datagrams)
                case .frame(let frame):
                    frames.append(frame)
                }
            }
        } catch {
            failed = true
            deliver()
            inbox.session?.handleProtocolViolation(on: id, error: error)
            // After what is queued: when the peer's handshake and its bad confirmation came in one read, our own
            // confirmation is queued and not yet written. Closing first would leave the peer to see a connection
            // closed mid-handshake instead of a confirmation that does not open (authenticationFailed).
            outbox.closeAfterFlush()
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

    /// Writes the clear handshake, the first bytes on the connection, once.
    private func sendHandshake(context: ChannelHandlerContext) {
        guard !handshakeSent else { return }
        handshakeSent = true
        var buffer = context.channel.allocator.buffer(capacity: SessionRecord.lengthPrefixSize + SessionHandshake.bodyLength)
        security.handshake.write(to: &buffer)
        context.writeAndFlush(wrapOutboundOut(buffer), promise: nil)
    }

    private func deliver() {
        guard !frames.isEmpty else { return }
        let batch = frames
        frames.removeAll(keepingCapacity: true)
        inbox.session?.handle(batch, on: id)
    }
}
