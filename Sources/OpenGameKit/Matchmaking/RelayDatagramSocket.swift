import NIOCore
import NIOPosix

/// A device's UDP socket to the match relay: sends sealed datagrams to the relay's address and hands every
/// datagram that arrives to `onDatagram` (on the socket's event loop).
final class RelayDatagramSocket: Sendable {
    private let channel: any Channel
    private let relay: SocketAddress

    private init(channel: any Channel, relay: SocketAddress) {
        self.channel = channel
        self.relay = relay
    }

    /// Opens a socket on an ephemeral port for datagrams to and from `host:port`.
    static func open(host: String, port: Int, onDatagram: @escaping @Sendable (ByteBuffer) -> Void) async throws -> RelayDatagramSocket {
        let relay = try SocketAddress.makeAddressResolvingHost(host, port: port)
        let bootstrap = DatagramBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            // NIO splits the read buffer into one 2 KB slot per datagram of a vector read.
            .channelOption(.datagramVectorReadMessageCount, value: 8)
            .channelOption(.recvAllocator, value: FixedSizeRecvByteBufferAllocator(capacity: 8 * 2048))
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(Receiver(onDatagram: onDatagram))
                }
            }
        let bindHost = relay.protocol == .inet6 ? "::" : "0.0.0.0"
        let channel = try await bootstrap.bind(host: bindHost, port: 0).get()
        return RelayDatagramSocket(channel: channel, relay: relay)
    }

    /// Sends one datagram to the relay (lost datagrams are the nature of unreliable data: errors are ignored).
    func send(_ datagram: ByteBuffer) {
        channel.writeAndFlush(AddressedEnvelope(remoteAddress: relay, data: datagram), promise: nil)
    }

    /// Closes the socket.
    func close() {
        channel.close(promise: nil)
    }

    private final class Receiver: ChannelInboundHandler {
        typealias InboundIn = AddressedEnvelope<ByteBuffer>
        let onDatagram: @Sendable (ByteBuffer) -> Void

        init(onDatagram: @escaping @Sendable (ByteBuffer) -> Void) {
            self.onDatagram = onDatagram
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            onDatagram(unwrapInboundIn(data).data)
        }

        /// An ICMP "port unreachable" for an earlier send must not close the socket.
        func errorCaught(context: ChannelHandlerContext, error: any Error) {}
    }
}
