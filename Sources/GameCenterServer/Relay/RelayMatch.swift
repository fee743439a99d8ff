import GameCenterProtocol
import Synchronization

/// One relayed match in memory: its rules' state under a lock, and where it belongs.
final class RelayMatch: Sendable {
    let matchID: String
    let timeout: Duration
    let state: Mutex<RelayMatchState>

    init(matchID: String, timeout: Duration, limits: RelayLimits) {
        self.matchID = matchID
        self.timeout = timeout
        self.state = Mutex(RelayMatchState(limits: limits, timeout: timeout))
    }
}

/// Where an authentic datagram's connection belongs.
struct DatagramRoute: Sendable {
    let match: RelayMatch
    let memberIndex: UInt8
    let key: RelayKey
}
