import NIOCore
import NIOPosix
import Synchronization

/// A TCP server on 127.0.0.1 that writes back every byte it reads and counts what it received.
final class TCPEchoServer: Sendable {
    /// Writes back what it reads and adds it to the server's count.
    private final class EchoHandler: ChannelInboundHandler {
        typealias InboundIn = ByteBuffer
        typealias OutboundOut = ByteBuffer

        private let server: TCPEchoServer

        init(server: TCPEchoServer) {
            self.server = server
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            let bytes = unwrapInboundIn(data)
            server.state.withLock { $0.receivedBytes += bytes.readableBytes }
            context.writeAndFlush(wrapOutboundOut(bytes), promise: nil)
        }

        func errorCaught(context: ChannelHandlerContext, error: any Error) {
            context.close(promise: nil)
        }
    }

    /// What the lock protects.
    private struct State {
        var receivedBytes = 0
        var listener: (any Channel)?
    }

    private let state = Mutex(State())

    private init() {}

    /// Starts the server on an ephemeral port.
    static func start() async throws -> TCPEchoServer {
        let server = TCPEchoServer()
        let listener = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(EchoHandler(server: server))
                }
            }
            .bind(host: "127.0.0.1", port: 0)
            .get()
        server.state.withLock { $0.listener = listener }
        return server
    }

    /// The port the server listens on.
    var port: Int {
        state.withLock { $0.listener?.localAddress?.port ?? 0 }
    }

    /// Bytes received so far over all connections.
    var receivedBytes: Int {
        state.withLock { $0.receivedBytes }
    }

    /// Stops listening (open connections are left to their peers).
    func stop() async {
        let listener = state.withLock { $0.listener }
        try? await listener?.close()
    }
}
