import NIOCore
import NIOPosix

/// A TCP proxy on 127.0.0.1 that forwards each accepted connection to a target, with faults a test turns on and off.
///
/// Each accepted connection gets its own upstream connection to the target; bytes are forwarded in both directions
/// with the faults in force when they are read. All methods are thread-safe. Call `stop()` when done: the proxy
/// runs on `MultiThreadedEventLoopGroup.singleton` and keeps its socket open until stopped.
public final class FaultyTCPProxy: Sendable {
    /// Settings, counters and open connections.
    private let core: TCPProxyCore
    /// The listening channel.
    private let listener: any Channel

    /// The port the proxy listens on (127.0.0.1); point the client under test at it.
    public let port: Int

    /// Creates the proxy around a bound listener.
    private init(core: TCPProxyCore, listener: any Channel, port: Int) {
        self.core = core
        self.listener = listener
        self.port = port
    }

    /// Starts listening on 127.0.0.1, an ephemeral port; forwards to `target` (host, port).
    ///
    /// The upstream connection is opened when a client connects, and the client's bytes are read only once it is
    /// up; if the target is unreachable the client's connection is reset. `seed` fixes every random choice (delays,
    /// byte limits) so a failing run can be repeated; nil picks a random seed.
    public static func start(
        forwardingTo targetHost: String,
        port targetPort: Int,
        seed: UInt64? = nil
    ) async throws -> FaultyTCPProxy {
        let core = TCPProxyCore(
            targetHost: targetHost,
            targetPort: targetPort,
            seed: seed ?? UInt64.random(in: .min ... .max)
        )
        let listener = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(ChannelOptions.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(ChannelOptions.autoRead, value: false)
            .childChannelInitializer { child in
                child.eventLoop.makeCompletedFuture { try core.setUp(accepted: child) }
            }
            .bind(host: "127.0.0.1", port: 0)
            .get()
        guard let port = listener.localAddress?.port else {
            try? await listener.close()
            throw NetworkFaultProxyError.noLocalPort
        }
        return FaultyTCPProxy(core: core, listener: listener, port: port)
    }

    /// Adds a random delay in `range` to every chunk in both directions, preserving byte order per direction.
    ///
    /// Each chunk is written at max(now + a random delay, the previous chunk's time), so byte order is kept.
    /// Applies to chunks read from now on; nil removes the delay.
    public func setDelay(_ range: ClosedRange<Duration>?) {
        core.state.withLock { $0.delay = range }
    }

    /// Closes every open connection abruptly (both sides), DISCARDING bytes the proxy holds but has not yet
    /// written (that is the "loss" a TCP connection can suffer: what was in flight when it broke).
    ///
    /// Both peers get a reset. `cutConnections` already includes these connections when this returns; the resets
    /// themselves happen on the connections' event loops a moment later, but nothing read from them after this returns
    /// is passed on.
    public func cutAllConnections() {
        for connection in core.removeAll(asCut: true, stopping: false) {
            connection.eventLoop.execute { connection.value.abort() }
        }
    }

    /// While true, new connections are refused (accepted and closed at once) — "server unreachable".
    ///
    /// A refused connection is reset as soon as it is accepted, so the client sees either a failed connect or a
    /// connection that ends at once. Connections already open are not affected. Refused connections count in
    /// `acceptedConnections` but not in `cutConnections`.
    public func setRefusing(_ refusing: Bool) {
        core.state.withLock { $0.refusing = refusing }
    }

    /// While true, bytes are read and silently dropped in both directions but connections stay open — a black hole
    /// (the peers hear nothing and must time out).
    ///
    /// Bytes read while it is on are lost for good; bytes read after it is turned off flow again.
    public func setBlackHole(_ on: Bool) {
        core.state.withLock { $0.blackHole = on }
    }

    /// Cuts each connection after a random number of bytes in `range` have passed in either direction, repeatedly
    /// (each new connection draws a new limit); nil turns it off. Used for "connection drops every now and then".
    ///
    /// The limit is drawn when a connection is accepted, so changing it affects new connections only. Bytes are
    /// counted per chunk read, both directions together; the chunk that reaches the limit is discarded and the
    /// connection is cut as by `cutAllConnections` (and counted in `cutConnections`).
    public func setCutAfterBytes(_ range: ClosedRange<Int>?) {
        core.state.withLock { $0.cutAfterBytes = range }
    }

    /// Connections accepted so far, refused ones included.
    public var acceptedConnections: Int {
        core.state.withLock { $0.accepted }
    }

    /// Connections cut by the proxy so far (by `cutAllConnections` or a byte limit; not refusals or `stop`).
    public var cutConnections: Int {
        core.state.withLock { $0.cut }
    }

    /// Bytes the proxy holds now: read, and waiting for their delay before they are written.
    public var heldBytes: Int {
        core.state.withLock { $0.held }
    }

    /// Bytes a black hole has read and dropped so far (see `setBlackHole`); they never arrive.
    public var swallowedBytes: Int {
        core.state.withLock { $0.swallowed }
    }

    /// Bytes dropped so far because their connection ended: held when it was cut (`cutAllConnections`, a byte
    /// limit, `stop`) or when the peer they were heading to closed, and each chunk that reached a byte limit. They
    /// never arrive.
    public var discardedBytes: Int {
        core.state.withLock { $0.discarded }
    }

    /// Stops listening and closes everything.
    ///
    /// Open connections are reset and awaited; later connection attempts fail. Calling it twice is harmless.
    public func stop() async {
        let connections = core.removeAll(asCut: false, stopping: true)
        try? await listener.close()
        for connection in connections {
            try? await connection.eventLoop.flatSubmit { connection.value.abortAndWait() }.get()
        }
    }
}
