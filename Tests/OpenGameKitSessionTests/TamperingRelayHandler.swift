import NIOCore

/// Test support: one direction of a ``TamperingTCPProxy`` connection — what one side sends, passed through the proxy
/// and written to the other side; closing either side closes both.
final class TamperingRelayHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer

    private let proxy: TamperingTCPProxy
    private let direction: TamperingTCPProxy.Direction
    private let partner: any Channel

    init(proxy: TamperingTCPProxy, direction: TamperingTCPProxy.Direction, partner: any Channel) {
        self.proxy = proxy
        self.direction = direction
        self.partner = partner
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let chunk = proxy.pass(Array(unwrapInboundIn(data).readableBytesView), direction)
        partner.writeAndFlush(ByteBuffer(bytes: chunk), promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        partner.close(promise: nil)
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }
}
