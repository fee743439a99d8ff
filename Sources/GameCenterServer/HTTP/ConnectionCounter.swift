import Synchronization

/// The open HTTP connections, in all and per client address, against ``GameCenterApp/ConnectionLimits``' caps.
/// Connections are opened on every event loop, hence the lock.
final class ConnectionCounter: Sendable {
    private struct Counts {
        var total = 0
        var perAddress: [String: Int] = [:]
    }

    let maxConnections: Int
    let maxConnectionsPerAddress: Int
    private let counts = Mutex(Counts())

    /// A counter with these caps.
    init(maxConnections: Int, maxConnectionsPerAddress: Int) {
        self.maxConnections = maxConnections
        self.maxConnectionsPerAddress = maxConnectionsPerAddress
    }

    /// Counts a new connection from `address` unless that would pass a cap; false: refuse it (and do not call
    /// ``close(address:)`` for it).
    func open(address: String) -> Bool {
        counts.withLock { counts in
            let fromAddress = counts.perAddress[address, default: 0]
            guard counts.total < maxConnections, fromAddress < maxConnectionsPerAddress else { return false }
            counts.total += 1
            counts.perAddress[address] = fromAddress + 1
            return true
        }
    }

    /// Uncounts a connection ``open(address:)`` let in.
    func close(address: String) {
        counts.withLock { counts in
            counts.total -= 1
            let remaining = counts.perAddress[address, default: 1] - 1
            counts.perAddress[address] = remaining > 0 ? remaining : nil
        }
    }
}
