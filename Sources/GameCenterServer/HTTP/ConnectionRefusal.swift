import NIOCore

/// The whole pipeline of a connection over a cap of ``GameCenterApp/ConnectionLimits``: answers `503` with the
/// project's JSON error and closes the connection, without reading the request.
final class ConnectionRefusal: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer

    private var answered = false

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { answer(context: context) }
    }

    func channelActive(context: ChannelHandlerContext) {
        answer(context: context)
        context.fireChannelActive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {}

    private func answer(context: ChannelHandlerContext) {
        guard !answered else { return }
        answered = true
        let channel = context.channel
        context.writeAndFlush(NIOAny(APIError.tooManyConnections.closingHTTPResponse)).whenComplete { _ in
            channel.close(promise: nil)
        }
    }
}
