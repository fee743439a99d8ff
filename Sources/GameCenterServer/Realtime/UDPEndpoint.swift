import Logging
import NIOCore
import NIOPosix
import ServiceLifecycle
import Synchronization

/// The server's UDP socket for unreliable match data and voice. Until the relay is built, every datagram is
/// counted and dropped: nothing arriving here can reach a player.
public final class UDPEndpoint: Service {
    /// Datagrams received and dropped.
    public var droppedDatagrams: Int { dropped.value.load(ordering: .relaxed) }
    private let dropped = DropCount()
    private let channel: any Channel
    private let logger: Logger

    /// Binds the socket; ``run()`` keeps it open until graceful shutdown.
    public init(host: String, port: Int, logger: Logger) async throws {
        self.logger = logger
        let counter = DropCounter(count: dropped)
        let bootstrap = DatagramBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .channelOption(.socketOption(.so_reuseaddr), value: 1)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture { try channel.pipeline.syncOperations.addHandler(counter) }
            }
        self.channel = try await bootstrap.bind(host: host, port: port).get()
    }

    /// The bound port (useful with port 0).
    public var port: Int { channel.localAddress?.port ?? 0 }

    public func run() async throws {
        try? await gracefulShutdown()
        try await channel.close()
    }

    private final class DropCount: Sendable {
        let value = Atomic<Int>(0)
    }

    private final class DropCounter: ChannelInboundHandler, Sendable {
        typealias InboundIn = AddressedEnvelope<ByteBuffer>
        let count: DropCount

        init(count: DropCount) { self.count = count }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            count.value.add(1, ordering: .relaxed)
        }
    }
}
