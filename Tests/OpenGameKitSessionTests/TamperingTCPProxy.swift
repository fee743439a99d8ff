import NIOCore
import NIOPosix
import Synchronization

/// Test support: a man in the middle. A TCP proxy on 127.0.0.1 that forwards each connection to a target, records the
/// bytes it forwards each way, and on request alters the next chunk one way or injects bytes of its own. Call
/// ``stop()`` when done.
final class TamperingTCPProxy: Sendable {
    /// Which way bytes travel.
    enum Direction: Sendable {
        /// From the client that connected to the proxy to the target.
        case toTarget
        /// From the target back to the client.
        case toClient
    }

    private struct State {
        var listener: (any Channel)?
        var chunks: [Direction: [[UInt8]]] = [.toTarget: [], .toClient: []]
        var alterations: [Direction: @Sendable ([UInt8]) -> [UInt8]] = [:]
        /// The client and target channels of the newest connection.
        var latest: (client: any Channel, target: any Channel)?
    }

    private let state = Mutex(State())

    private init() {}

    /// Starts listening on 127.0.0.1, an ephemeral port; forwards to `host:port`.
    static func start(forwardingTo host: String, port: Int) async throws -> TamperingTCPProxy {
        let proxy = TamperingTCPProxy()
        let listener = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(.autoRead, value: false)
            .childChannelInitializer { client in
                ClientBootstrap(group: client.eventLoop)
                    .channelInitializer { target in
                        target.eventLoop.makeCompletedFuture {
                            try target.pipeline.syncOperations.addHandler(TamperingRelayHandler(proxy: proxy, direction: .toClient, partner: client))
                        }
                    }
                    .connect(host: host, port: port)
                    .flatMap { target in
                        proxy.state.withLock { $0.latest = (client, target) }
                        return client.eventLoop.makeCompletedFuture {
                            try client.pipeline.syncOperations.addHandler(TamperingRelayHandler(proxy: proxy, direction: .toTarget, partner: target))
                        }.flatMap { client.setOption(.autoRead, value: true) }
                    }
            }
            .bind(host: "127.0.0.1", port: 0)
            .get()
        proxy.state.withLock { $0.listener = listener }
        return proxy
    }

    /// The port the proxy listens on.
    var port: Int { state.withLock { $0.listener?.localAddress?.port ?? 0 } }

    /// Every byte forwarded `direction` so far (before any alteration), all connections together.
    func recorded(_ direction: Direction) -> [UInt8] {
        state.withLock { $0.chunks[direction, default: []].flatMap { $0 } }
    }

    /// The chunks forwarded `direction` so far, as they were read.
    func chunks(_ direction: Direction) -> [[UInt8]] {
        state.withLock { $0.chunks[direction, default: []] }
    }

    /// Replaces the next chunk read `direction` with what `transform` makes of it.
    func alterNext(_ direction: Direction, _ transform: @escaping @Sendable ([UInt8]) -> [UInt8]) {
        state.withLock { $0.alterations[direction] = transform }
    }

    /// Writes `bytes` of the proxy's own into the newest connection, `direction`.
    func inject(_ bytes: [UInt8], _ direction: Direction) async throws {
        guard let latest = state.withLock({ $0.latest }) else { return }
        let channel = direction == .toTarget ? latest.target : latest.client
        try await channel.writeAndFlush(ByteBuffer(bytes: bytes))
    }

    /// Closes the listener and the newest connection.
    func stop() async {
        let (listener, latest) = state.withLock { ($0.listener, $0.latest) }
        try? await listener?.close()
        try? await latest?.client.close()
        try? await latest?.target.close()
    }

    /// Records `chunk`, read `direction`, and returns what to forward: the chunk, or what a pending alteration makes of it.
    func pass(_ chunk: [UInt8], _ direction: Direction) -> [UInt8] {
        let alteration = state.withLock { state in
            state.chunks[direction, default: []].append(chunk)
            return state.alterations.removeValue(forKey: direction)
        }
        return alteration.map { $0(chunk) } ?? chunk
    }
}
