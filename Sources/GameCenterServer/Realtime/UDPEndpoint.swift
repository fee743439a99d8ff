import Logging
import NIOCore
import NIOPosix
import ServiceLifecycle

/// The server's UDP socket: unreliable match data for the relay (and, later, voice).
public final class UDPEndpoint: Service {
    private let channel: any Channel
    /// Datagrams read per system call.
    static let datagramsPerRead = 32

    /// Binds the socket and hands its datagrams to `relay`; ``run()`` keeps it open until graceful shutdown.
    init(host: String, port: Int, relay: RelayService) async throws {
        let bootstrap = DatagramBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .channelOption(.socketOption(.so_reuseaddr), value: 1)
            // Reads several datagrams per system call (NIO splits one buffer into that many 2 KB slots), and keeps
            // the socket's queue deep enough for bursts.
            .channelOption(.datagramVectorReadMessageCount, value: Self.datagramsPerRead)
            .channelOption(.recvAllocator, value: FixedSizeRecvByteBufferAllocator(capacity: Self.datagramsPerRead * 2048))
            .channelOption(.socketOption(.so_rcvbuf), value: 4 << 20)
            .channelOption(.socketOption(.so_sndbuf), value: 4 << 20)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(RelayDatagramHandler(relay: relay))
                }
            }
        self.channel = try await bootstrap.bind(host: host, port: port).get()
        relay.useDatagramChannel(channel)
    }

    /// The bound port (useful with port 0).
    public var port: Int { channel.localAddress?.port ?? 0 }

    public func run() async throws {
        try? await gracefulShutdown()
        try await channel.close()
    }
}
