import Synchronization

/// The open HTTP connections, in all and per client address, and the connections being refused, against
/// ``GameCenterApp/ConnectionLimits``' caps. Connections are opened on every event loop, hence the lock.
final class ConnectionCounter: Sendable {
    /// What becomes of a new connection.
    enum Admission: Equatable {
        /// Let in: call ``close(address:)`` when it closes.
        case accepted
        /// Over a cap: answer `503` and close it; call ``refusalEnded()`` when it closes.
        case refused
        /// Over a cap while as many connections as allowed are being refused: close it at once, unanswered.
        case dropped
    }

    private struct Counts {
        var total = 0
        var perAddress: [String: Int] = [:]
        var refusing = 0
    }

    let maxConnections: Int
    let maxConnectionsPerAddress: Int
    let maxRefusals: Int
    private let counts = Mutex(Counts())

    /// A counter with the caps of `limits`.
    init(limits: GameCenterApp.ConnectionLimits) {
        maxConnections = limits.maxConnections
        maxConnectionsPerAddress = limits.maxConnectionsPerAddress
        maxRefusals = limits.maxRefusals
    }

    /// Counts a new connection from `address`: let in unless that would pass a cap, refused (and counted as such)
    /// while refusals are under their cap, dropped otherwise.
    func admit(address: String) -> Admission {
        counts.withLock { counts in
            let fromAddress = counts.perAddress[address, default: 0]
            if counts.total < maxConnections, fromAddress < maxConnectionsPerAddress {
                counts.total += 1
                counts.perAddress[address] = fromAddress + 1
                return .accepted
            }
            guard counts.refusing < maxRefusals else { return .dropped }
            counts.refusing += 1
            return .refused
        }
    }

    /// Uncounts a connection ``admit(address:)`` let in.
    func close(address: String) {
        counts.withLock { counts in
            counts.total -= 1
            let remaining = counts.perAddress[address, default: 1] - 1
            counts.perAddress[address] = remaining > 0 ? remaining : nil
        }
    }

    /// Uncounts a connection ``admit(address:)`` refused.
    func refusalEnded() {
        counts.withLock { $0.refusing -= 1 }
    }
}
