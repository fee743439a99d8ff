import HummingbirdCore
import HummingbirdWebSocket
import Logging
import NIOCore

/// Hummingbird's HTTP/1 + WebSocket connection, guarded so that no connection can hold the server's graceful
/// shutdown open (see ``ShutdownConnectionGuard``).
///
/// Hummingbird hands a connection to its HTTP handling (which closes idle connections on shutdown) only once the first
/// request has arrived. Until then a graceful shutdown waited for the connection forever: one client that connected
/// and sent nothing, or half a request, kept the server from stopping (seen as live test servers that did not stop
/// within 30 s of SIGTERM; reproduced with one silent TCP connection).
struct GuardedHTTP1WebSocketChannel: ServerChildChannel {
    let inner: HTTP1WebSocketUpgradeChannel

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<HTTP1WebSocketUpgradeChannel.Value> {
        // Called on the channel's event loop (from the child channel initializer), where the handler can be added
        // synchronously, without crossing threads.
        channel.eventLoop.makeCompletedFuture {
            try channel.pipeline.syncOperations.addHandler(ShutdownConnectionGuard())
        }.flatMap {
            inner.setup(channel: channel, logger: logger)
        }
    }

    func handle(value: HTTP1WebSocketUpgradeChannel.Value, logger: Logger) async {
        await inner.handle(value: value, logger: logger)
    }
}

/// First in every connection's pipeline. Closes a connection that sends nothing within ``firstBytesTimeout``, one
/// that has sent nothing when the server starts shutting down at once, and any other that is still open
/// ``shutdownGrace`` after that (a request that never ends; a WebSocket whose close handshake never completes).
final class ShutdownConnectionGuard: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer

    /// How long a new connection may stay silent.
    static let firstBytesTimeout = TimeAmount.seconds(30)
    /// How long open requests and connections get to finish once the server shuts down.
    static let shutdownGrace = TimeAmount.seconds(10)

    private var heard = false
    private var deadline: Scheduled<Void>?

    func handlerAdded(context: ChannelHandlerContext) {
        closeAfter(Self.firstBytesTimeout, context: context)
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        deadline?.cancel()
        deadline = nil
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if !heard {
            heard = true
            deadline?.cancel()
            deadline = nil
        }
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
