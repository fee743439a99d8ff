import NIOCore

/// Resets a connection as soon as it is active: what `FaultyTCPProxy` does to new connections while refusing.
final class TCPRefusalHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer

    func channelActive(context: ChannelHandlerContext) {
        context.channel.abort()
    }
}
