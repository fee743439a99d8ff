import GameCenterProtocol
import Synchronization

/// One relayed match in memory: its rules' state under a lock, and where it belongs.
final class RelayMatch: Sendable {
    let matchID: String
    let timeout: Duration
    let state: Mutex<RelayMatchState>

    /// `peerToPeer` false keeps every member's traffic on the relay (the game's `matchmaking.relayOnly`).
    init(matchID: String, timeout: Duration, limits: RelayLimits, peerToPeer: Bool = true) {
        self.matchID = matchID
        self.timeout = timeout
        self.state = Mutex(RelayMatchState(limits: limits, timeout: timeout, peerToPeer: peerToPeer))
    }
}

/// Where an authentic datagram's connection belongs.
struct DatagramRoute: Sendable {
    let match: RelayMatch
    let memberIndex: UInt8
    let key: RelayKey
}
