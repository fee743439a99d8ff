import Foundation
import GameCenterProtocol
import Synchronization

/// One seat of a turn-based match and the player in it.
public final class GKTurnBasedParticipant: Sendable {
    /// GameKit's participant states.
    public enum Status: Int, Sendable {
        case unknown = 0, invited, declined, matching, active, done
    }

    /// The seat's place in ``GKTurnBasedMatch/participants``.
    let index: Int
    let matchID: String
    /// The player in the seat; nil while the seat waits for auto-match.
    public let playerID: String?
    /// Where the participant stands in the match.
    public let status: Status
    /// When the participant last ended a turn.
    public let lastTurnDate: Date?
    /// When the turn passes on if this participant does not take it (only while it is theirs).
    public let timeoutDate: Date?
    private let outcome: Mutex<GKTurnBasedMatch.Outcome>

    init(info: TurnBasedParticipantInfo, index: Int, matchID: String) {
        self.index = index
        self.matchID = matchID
        playerID = info.playerID
        status = Status(rawValue: info.status) ?? .unknown
        lastTurnDate = info.lastTurnDate
        timeoutDate = info.timeoutDate
        outcome = Mutex(GKTurnBasedMatch.Outcome(rawValue: info.outcome))
    }

    /// The participant's result: set it for every player still playing before ``GKTurnBasedMatch/endMatchInTurn(withMatch:)``.
    public var matchOutcome: GKTurnBasedMatch.Outcome {
        get { outcome.withLock { $0 } }
        set { outcome.withLock { $0 = newValue } }
    }
}
