import NIOCore
import NIOPosix
import Synchronization

/// A UDP client on its own 127.0.0.1 socket that records every datagram it receives.
final class UDPTestClient: Sendable {
    /// Records each datagram into the client's state.
    private final class Collector: ChannelInboundHandler {
        typealias InboundIn = AddressedEnvelope<ByteBuffer>

        private let client: UDPTestClient

        init(client: UDPTestClient) {
            self.client = client
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            let bytes = Array(unwrapInboundIn(data).data.readableBytesView)
            client.state.withLock { $0.received.append(bytes) }
        }
    }

    /// What the lock protects.
    private struct State {
        var received: [[UInt8]] = []
        var channel: (any Channel)?
    }

    private let state = Mutex(State())

    private init() {}

    /// Binds a new socket on an ephemeral port.
    static func bind() async throws -> UDPTestClient {
        let client = UDPTestClient()
        let channel = try await DatagramBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(Collector(client: client))
                }
            }
            .bind(host: "127.0.0.1", port: 0)
            .get()
        client.state.withLock { $0.channel = channel }
        return client
    }

    /// Datagrams received so far, in arrival order.
    var received: [[UInt8]] {
        state.withLock { $0.received }
    }

    /// Sends one datagram to 127.0.0.1:`port`.
    func send(_ bytes: [UInt8], to port: Int) async throws {
        let channel = state.withLock { $0.channel }
        let address = try SocketAddress(ipAddress: "127.0.0.1", port: port)
        try await channel?.writeAndFlush(AddressedEnvelope(remoteAddress: address, data: ByteBuffer(bytes: bytes))).get()
    }

    /// Closes the socket.
    func close() async {
        let channel = state.withLock { $0.channel }
        try? await channel?.close()
    }
}
