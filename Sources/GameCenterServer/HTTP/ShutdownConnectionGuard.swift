import NIOCore

/// First in every connection's pipeline. Closes a connection that has sent nothing when the server starts shutting
/// down at once, and any other that is still open ``shutdownGrace`` after that (a request that never ends; a
/// WebSocket whose close handshake never completes).
///
/// Hummingbird hands a connection to its HTTP handling (which closes idle connections on shutdown) only once the first
/// request has arrived. Until then a graceful shutdown waited for the connection forever: one client that connected
/// and sent nothing, or half a request, kept the server from stopping (seen as live test servers that did not stop
/// within 30 s of SIGTERM; reproduced with one silent TCP connection). A silent connection is also closed at
/// ``GameCenterApp/ConnectionLimits/headerTimeout`` by ``RequestGuard``.
final class ShutdownConnectionGuard: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer

    /// How long open requests and connections get to finish once the server shuts down.
    static let shutdownGrace = TimeAmount.seconds(10)

    private var heard = false
    private var deadline: Scheduled<Void>?

    func handlerRemoved(context: ChannelHandlerContext) {
        deadline?.cancel()
        deadline = nil
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        heard = true
        context.fireChannelRead(data)
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if event is ChannelShouldQuiesceEvent {
            guard heard else {
                context.close(promise: nil)
                return
            }
            closeAfter(Self.shutdownGrace, context: context)
        }
        context.fireUserInboundEventTriggered(event)
    }

    private func closeAfter(_ delay: TimeAmount, context: ChannelHandlerContext) {
        deadline?.cancel()
        let channel = context.channel
        deadline = context.eventLoop.scheduleTask(in: delay) { channel.close(promise: nil) }
    }
}
