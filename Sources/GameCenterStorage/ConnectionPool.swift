/// A fixed set of connections handed out one caller at a time, first come first served.
actor ConnectionPool<Connection: Sendable> {
    private var idle: [Connection]
    private var waiters: [CheckedContinuation<Connection, Never>] = []

    init(_ connections: [Connection]) {
        self.idle = connections
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
        } else {
            waiters.removeFirst().resume(returning: connection)
        }
    }

    /// Takes every idle connection out of the pool, for closing.
    func drain() -> [Connection] {
        defer { idle.removeAll() }
        return idle
    }
}
