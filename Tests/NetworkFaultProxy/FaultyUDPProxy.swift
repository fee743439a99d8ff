import NIOCore
import NIOPosix

/// A UDP proxy: one local port that clients send to, one upstream socket per client address toward the target, with
/// loss, reordering and duplication.
///
/// Faults apply to each datagram in both directions with the settings in force when it is read. All methods are
/// thread-safe. Call `stop()` when done: the proxy runs on `MultiThreadedEventLoopGroup.singleton` and keeps its
/// sockets open until stopped.
public final class FaultyUDPProxy: Sendable {
    /// Settings, counters and capture.
    private let core: UDPProxyCore
    /// The router, on the event loop all the proxy's sockets use.
    private let router: NIOLoopBound<UDPRouter>

    /// The port the proxy listens on (127.0.0.1); point the client under test at it.
    public let port: Int

    /// Creates the proxy around a bound router.
    private init(core: UDPProxyCore, router: NIOLoopBound<UDPRouter>, port: Int) {
        self.core = core
        self.router = router
        self.port = port
    }

    /// Binds 127.0.0.1 on an ephemeral port; datagrams from a client go to `target` from a per-client upstream
    /// socket (so the server sees one distinct source address per client, as with real clients), and the server's
    /// answers on that upstream socket go back to that client.
    ///
    /// `targetHost` is resolved once, here. Upstream sockets bind to loopback in the target's address family and
    /// only datagrams from the target's address are passed back. `seed` fixes every random choice so a failing run
    /// can be repeated; nil picks a random seed.
    public static func start(
        forwardingTo targetHost: String,
        port targetPort: Int,
        seed: UInt64? = nil
    ) async throws -> FaultyUDPProxy {
        let target = try SocketAddress.makeAddressResolvingHost(targetHost, port: targetPort)
        let core = UDPProxyCore(seed: seed ?? UInt64.random(in: .min ... .max))
        let loop = MultiThreadedEventLoopGroup.singleton.next()
        let router = try await loop.submit {
            NIOLoopBound(UDPRouter(core: core, target: target, eventLoop: loop), eventLoop: loop)
        }.get()
        let front = try await DatagramBootstrap(group: loop)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    router.value.front = channel
                    try channel.pipeline.syncOperations.addHandler(
                        UDPDatagramHandler(router: router.value, role: .front)
                    )
                }
            }
            .bind(host: "127.0.0.1", port: 0)
            .get()
        guard let port = front.localAddress?.port else {
            try? await front.close()
            throw NetworkFaultProxyError.noLocalPort
        }
        return FaultyUDPProxy(core: core, router: router, port: port)
    }

    /// Probability (0…1) that a datagram is dropped, each direction.
    public func setLoss(_ probability: Double) {
        core.state.withLock { $0.loss = probability }
    }

    /// Probability that a datagram is held back and sent after the next one (reordering).
    ///
    /// Per client and direction at most one datagram is held; the next one is sent first, then the held one. A
    /// held datagram that nothing follows within 50 ms is sent anyway, so reordering alone never loses data.
    public func setReorder(_ probability: Double) {
        core.state.withLock { $0.reorder = probability }
    }

    /// Probability that a datagram is sent twice (a replay, as an attacker or a broken network would).
    public func setDuplicate(_ probability: Double) {
        core.state.withLock { $0.duplicate = probability }
    }

    /// While true, every datagram in both directions is dropped (UDP blocked, e.g. a firewall).
    public func setBlocked(_ blocked: Bool) {
        core.state.withLock { $0.blocked = blocked }
    }

    /// Every datagram that passed client→server so far, most recent last, at most the last 1000 (for replay tests).
    ///
    /// A datagram is captured when the proxy decides to forward it (dropped ones are not), once even if duplicated.
    public func capturedFromClients() -> [[UInt8]] {
        core.state.withLock { Array($0.captured) }
    }

    /// Sends `bytes` to the target from the upstream socket of the most recent client (a replay / forgery test).
    ///
    /// "Most recent" is the client whose datagram the proxy read last. The datagram bypasses every fault and every
    /// counter; the server's answer goes back to that client as usual. Throws `NetworkFaultProxyError.noClientYet`
    /// if no client has sent anything yet (or the proxy was stopped).
    public func inject(_ bytes: [UInt8]) async throws {
        let router = router
        try await router.eventLoop.flatSubmit { router.value.inject(bytes) }.get()
    }

    /// Counters: forwarded, dropped, reordered, duplicated.
    public var statistics: FaultyUDPProxy.Statistics {
        core.state.withLock { $0.statistics }
    }

    /// Stops listening and closes every socket of the proxy; datagrams held for reordering are dropped.
    ///
    /// Calling it twice is harmless.
    public func stop() async {
        let router = router
        try? await router.eventLoop.flatSubmit { router.value.stop() }.get()
    }
}
