import NIOCore
import Synchronization

/// The shared, lock-protected heart of a `FaultyTCPProxy`: fault settings, counters and the open connections.
///
/// Every method is thread-safe. Connections call back into it from their event loops; the public proxy calls it
/// from any task.
final class TCPProxyCore: Sendable {
    /// Everything the lock protects.
    struct State: Sendable {
        /// Delay range added to each chunk, or nil for none.
        var delay: ClosedRange<Duration>?
        /// Whether new connections are closed at once.
        var refusing = false
        /// Whether bytes are read and dropped.
        var blackHole = false
        /// Range a new connection draws its byte limit from, or nil for no limit.
        var cutAfterBytes: ClosedRange<Int>?
        /// Connections accepted so far, refused ones included.
        var accepted = 0
        /// Connections the proxy has cut so far.
        var cut = 0
        /// Bytes read and waiting for their delay to pass.
        var held = 0
        /// Bytes a black hole has read and dropped so far.
        var swallowed = 0
        /// Bytes dropped so far because their connection ended (see `FaultyTCPProxy.discardedBytes`).
        var discarded = 0
        /// Set by `stop`; later connections are refused.
        var stopped = false
        /// The seeded source of every random choice.
        var random: SplitMix64
        /// Connections that are still forwarding, by id.
        var connections: [Int: NIOLoopBound<TCPConnection>] = [:]
        /// The ids of the connections `removeAll(asCut: true)` cut: they pass nothing on from then, even before their
        /// reset has run on their event loop.
        var cutIDs: Set<Int> = []
        /// The id the next accepted connection gets.
        var nextID = 0
    }

    /// Host the proxy forwards to.
    let targetHost: String
    /// Port the proxy forwards to.
    let targetPort: Int
    /// Settings, counters and the connection registry.
    let state: Mutex<State>

    /// Creates the core for a proxy forwarding to `targetHost`:`targetPort`, drawing randomness from `seed`.
    init(targetHost: String, targetPort: Int, seed: UInt64) {
        self.targetHost = targetHost
        self.targetPort = targetPort
        state = Mutex(State(random: SplitMix64(seed: seed)))
    }

    /// Sets up a freshly accepted client channel: refuses it, or wires it to a new upstream connection.
    ///
    /// Must run on `client`'s event loop (it is the server bootstrap's child channel initializer).
    func setUp(accepted client: any Channel) throws {
        guard let connection = admit(client) else {
            try client.pipeline.syncOperations.addHandler(TCPRefusalHandler())
            return
        }
        try client.pipeline.syncOperations.addHandler(TCPRelayHandler(connection: connection.value, side: .client))
        connection.value.connectUpstream(host: targetHost, port: targetPort)
    }

    /// Counts an accepted connection and, unless refusing or stopped, registers a new `TCPConnection` for it.
    private func admit(_ client: any Channel) -> NIOLoopBound<TCPConnection>? {
        state.withLock { state in
            state.accepted += 1
            guard !state.refusing, !state.stopped else { return nil }
            let id = state.nextID
            state.nextID += 1
            let limit = state.cutAfterBytes.map { Int.random(in: $0, using: &state.random) }
            let connection = NIOLoopBound(
                TCPConnection(id: id, byteLimit: limit, client: client, core: self),
                eventLoop: client.eventLoop
            )
            state.connections[id] = connection
            return connection
        }
    }

    /// Decides what happens to a chunk of `size` bytes just read: nil drops it (black hole, counted as swallowed),
    /// otherwise the delay to apply.
    func delayForChunk(of size: Int) -> TimeAmount? {
        state.withLock { state in
            if state.blackHole {
                state.swallowed += size
                return nil
            }
            guard let range = state.delay else { return .zero }
            let lower = max(0, range.lowerBound.nanoseconds)
            let upper = max(lower, range.upperBound.nanoseconds)
            return .nanoseconds(Int64.random(in: lower...upper, using: &state.random))
        }
    }

    /// Counts `size` bytes a connection started (positive) or stopped (negative) holding for a delay.
    func held(_ size: Int) {
        state.withLock { $0.held += size }
    }

    /// Counts `size` bytes dropped because their connection ended; `wereHeld` when they were counted as held until now.
    func discarded(_ size: Int, wereHeld: Bool) {
        state.withLock { state in
            state.discarded += size
            if wereHeld { state.held -= size }
        }
    }

    /// Whether connection `id` was cut by `removeAll(asCut: true)`.
    func wasCut(_ id: Int) -> Bool {
        state.withLock { $0.cutIDs.contains(id) }
    }

    /// Removes a connection from the registry; counts it as cut when `asCut` and it was still registered.
    func remove(_ id: Int, asCut: Bool) {
        state.withLock { state in
            if state.connections.removeValue(forKey: id) != nil, asCut {
                state.cut += 1
            }
        }
    }

    /// Removes and returns every registered connection, counting them as cut when `asCut`; `stopping` refuses
    /// all later connections.
    func removeAll(asCut: Bool, stopping: Bool) -> [NIOLoopBound<TCPConnection>] {
        state.withLock { state in
            let connections = Array(state.connections.values)
            if asCut {
                state.cut += connections.count
                state.cutIDs.formUnion(state.connections.keys)
            }
            state.connections.removeAll()
            if stopping { state.stopped = true }
            return connections
        }
    }
}

extension Duration {
    /// This duration in whole nanoseconds (sub-nanosecond parts are dropped).
    fileprivate var nanoseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds * 1_000_000_000 + attoseconds / 1_000_000_000
    }
}
