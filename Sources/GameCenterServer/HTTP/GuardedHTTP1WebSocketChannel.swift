import HummingbirdCore
import HummingbirdWebSocket
import Logging
import NIOCore
import NIOHTTP1

/// Hummingbird's HTTP/1 + WebSocket connection, guarded: connections over a cap of ``GameCenterApp/ConnectionLimits``
/// are answered `503` and closed (``ConnectionRefusal``; closed unanswered while too many are being refused), slow
/// and unparsable requests are closed or answered (``RequestGuard``), upgrades no upgrader takes are ignored or
/// refused (``UpgradeHeaderFilter``), a client that stops reading is closed (``WriteDeadline``), and no connection can
/// hold the server's graceful shutdown open (``ShutdownConnectionGuard``).
struct GuardedHTTP1WebSocketChannel: ServerChildChannel {
    /// A connection let in, or one refused over a cap.
    enum Value: ServerChildChannelValue {
        case accepted(HTTP1WebSocketUpgradeChannel.Value)
        case refused(any Channel)

        /// The connection.
        var channel: any Channel {
            switch self {
            case .accepted(let value): value.channel
            case .refused(let channel): channel
            }
        }
    }

    let inner: HTTP1WebSocketUpgradeChannel
    let limits: GameCenterApp.ConnectionLimits
    let counter: ConnectionCounter

    /// Guards `inner` with `limits`, counting connections in `counter` (one for the whole server).
    init(inner: HTTP1WebSocketUpgradeChannel, limits: GameCenterApp.ConnectionLimits, counter: ConnectionCounter) {
        self.inner = inner
        self.limits = limits
        self.counter = counter
    }

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        // Called on the channel's event loop (from the child channel initializer), where handlers can be added
        // synchronously, without crossing threads.
        let address = channel.remoteAddress?.ipAddress ?? ""
        switch counter.admit(address: address) {
        case .dropped:
            channel.close(promise: nil)
            return channel.eventLoop.makeSucceededFuture(.refused(channel))
        case .refused:
            channel.closeFuture.whenComplete { [counter] _ in counter.refusalEnded() }
            return channel.eventLoop.makeCompletedFuture {
                try channel.pipeline.syncOperations.addHandler(ConnectionRefusal())
                return .refused(channel)
            }
        case .accepted:
            channel.closeFuture.whenComplete { [counter] _ in counter.close(address: address) }
        }
        return channel.eventLoop.makeCompletedFuture {
            try channel.pipeline.syncOperations.addHandlers(WriteDeadline(timeout: limits.writeTimeout), ShutdownConnectionGuard())
        }.flatMap {
            inner.setup(channel: channel, logger: logger)
        }.flatMapThrowing { [limits] value in
            let parser = try channel.pipeline.syncOperations.context(handlerType: ByteToMessageHandler<HTTPRequestDecoder>.self)
            try channel.pipeline.syncOperations.addHandler(RequestGuard(limits: limits), position: .after(parser.handler))
            try channel.pipeline.syncOperations.addHandler(UpgradeHeaderFilter(), position: .after(parser.handler))
            return .accepted(value)
        }
    }

    func handle(value: Value, logger: Logger) async {
        switch value {
        case .accepted(let value): await inner.handle(value: value, logger: logger)
        case .refused: break
        }
    }
}
