/// A fixed set of connections handed out one caller at a time, first come first served.
actor ConnectionPool<Connection: Sendable> {
    private var idle: [Connection]
    private let total: Int
    private var waiters: [CheckedContinuation<Connection, Never>] = []
    private var drainWaiter: CheckedContinuation<Void, Never>?

    init(_ connections: [Connection]) {
        self.idle = connections
        self.total = connections.count
    }

    /// Waits for a free connection.
    func lease() async -> Connection {
        if let connection = idle.popLast() { return connection }
        return await withCheckedContinuation { waiters.append($0) }
    }

    /// Returns a connection leased with ``lease()``.
    func release(_ connection: Connection) {
        if waiters.isEmpty {
            idle.append(connection)
            if idle.count == total, let drainWaiter {
                self.drainWaiter = nil
                drainWaiter.resume()
            }
        } else {
            waiters.removeFirst().resume(returning: connection)
        }
    }

    /// Runs `body` with a leased connection and returns the connection afterwards, also when `body` throws.
    func withConnection<T: Sendable>(_ body: @Sendable (Connection) async throws -> T) async throws -> T {
        let connection = await lease()
        do {
            let result = try await body(connection)
            release(connection)
            return result
        } catch {
            release(connection)
            throw error
        }
    }

    /// Waits until every connection is back, then takes them all out of the pool, for closing.
    func drain() async -> [Connection] {
        if idle.count < total {
            await withCheckedContinuation { drainWaiter = $0 }
        }
        defer { idle.removeAll() }
        return idle
    }
}
