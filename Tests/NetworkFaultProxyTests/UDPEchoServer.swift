import NIOCore
import NIOPosix
import Synchronization

/// A UDP server on 127.0.0.1 that records every datagram with its source and, unless told not to, sends it back.
final class UDPEchoServer: Sendable {
    /// A datagram the server received.
    struct Datagram: Sendable {
        let bytes: [UInt8]
        let source: SocketAddress
    }

    /// Records each datagram and echoes it if the server echoes.
    private final class Handler: ChannelInboundHandler {
        typealias InboundIn = AddressedEnvelope<ByteBuffer>
        typealias OutboundOut = AddressedEnvelope<ByteBuffer>

        private let server: UDPEchoServer

        init(server: UDPEchoServer) {
            self.server = server
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            let envelope = unwrapInboundIn(data)
            let datagram = Datagram(bytes: Array(envelope.data.readableBytesView), source: envelope.remoteAddress)
            server.state.withLock { $0.received.append(datagram) }
            if server.echoes {
                context.writeAndFlush(wrapOutboundOut(envelope), promise: nil)
            }
        }
    }

    /// What the lock protects.
    private struct State {
        var received: [Datagram] = []
        var channel: (any Channel)?
    }

    private let state = Mutex(State())
    /// Whether received datagrams are sent back.
    private let echoes: Bool

    private init(echoes: Bool) {
        self.echoes = echoes
    }

    /// Starts the server on an ephemeral port; with `echoes` false it only records (a sink).
    static func start(echoes: Bool = true) async throws -> UDPEchoServer {
        let server = UDPEchoServer(echoes: echoes)
        let channel = try await DatagramBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(Handler(server: server))
                }
            }
            .bind(host: "127.0.0.1", port: 0)
            .get()
        server.state.withLock { $0.channel = channel }
        return server
    }

    /// The port the server listens on.
    var port: Int {
        state.withLock { $0.channel?.localAddress?.port ?? 0 }
    }

    /// Every datagram received so far, in arrival order.
    var received: [Datagram] {
        state.withLock { $0.received }
    }

    /// Closes the socket.
    func stop() async {
        let channel = state.withLock { $0.channel }
        try? await channel?.close()
    }
}
