import Foundation
import GameCenterStorage

/// Open turn-based matches made up for benchmarks (`gamecenter-bench turns`), stored as the service stores a match
/// its creator started and a second player joined.
package enum TurnBasedSeeding {
    /// The rows of an open two-player match of `bundleID` between `first` (whose turn it is) and `second`.
    package static func openMatch(
        id: String, bundleID: String, environment: String, first: String, second: String, now: Int64
    ) throws -> (record: TurnMatchRecord, members: [TurnMatchMember]) {
        var state = TurnMatchState(
            matchID: id, bundleID: bundleID, creator: first, seats: 2, invitees: [], playerGroup: 0, inviteMessage: nil, now: now)
        _ = try state.apply(.join(player: second), now: now, limits: TurnBasedSettings())
        return (try TurnBasedService.record(state, environment: environment), TurnBasedService.members(state))
    }
}
