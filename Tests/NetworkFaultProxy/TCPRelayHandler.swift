import NIOCore

/// Passes what one side of a `TCPConnection` reads, and its close, to that connection.
///
/// One instance sits in the client channel's pipeline and one in the upstream channel's; both run on the same
/// event loop as the connection.
final class TCPRelayHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer

    /// The connection this channel belongs to.
    private let connection: TCPConnection
    /// Which side of the connection this channel is.
    private let side: TCPConnection.Side

    /// Creates the handler for the `side` channel of `connection`.
    init(connection: TCPConnection, side: TCPConnection.Side) {
        self.connection = connection
        self.side = side
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        connection.received(unwrapInboundIn(data), from: side)
    }

    func channelInactive(context: ChannelHandlerContext) {
        connection.peerClosed(side)
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }
}
