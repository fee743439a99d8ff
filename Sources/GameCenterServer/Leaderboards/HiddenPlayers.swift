import Synchronization

/// The players a studio hid from a game's boards, as this node knows them: ``LeaderboardIndex`` ranks none of their
/// reports while they are hidden (``HiddenPlayerFollower`` keeps the set current from storage).
final class HiddenPlayers: Sendable {
    private let state = Mutex<(byGame: [String: Set<String>], changes: Int)>(([:], 0))

    /// The hidden players of a game.
    func players(in bundleID: String) -> Set<String> {
        state.withLock { $0.byGame[bundleID] ?? [] }
    }

    /// Marks one player hidden or shown; whether that changed anything.
    func set(_ playerID: String, in bundleID: String, hidden: Bool) -> Bool {
        state.withLock { state in
            state.changes += 1
            return hidden ? state.byGame[bundleID, default: []].insert(playerID).inserted : state.byGame[bundleID]?.remove(playerID) != nil
        }
    }

    /// Counts the changes made on this node (``set(_:in:hidden:)``): a read of storage begun before one is stale.
    var changes: Int { state.withLock { $0.changes } }

    /// Replaces every game's set with storage's, read when ``changes`` was `readAfter` (nil: whenever); answers who
    /// became hidden and who was shown again, or nil (nothing replaced) when this node changed the set since.
    func replace(with stored: [String: Set<String>], readAfter: Int? = nil)
        -> (hidden: [(bundleID: String, playerID: String)], shown: [(bundleID: String, playerID: String)])?
    {
        state.withLock { state in
            if let readAfter, state.changes != readAfter { return nil }
            let byGame = state.byGame
            var hidden: [(String, String)] = []
            var shown: [(String, String)] = []
            for bundleID in Set(byGame.keys).union(stored.keys) {
                let before = byGame[bundleID] ?? []
                let after = stored[bundleID] ?? []
                hidden += after.subtracting(before).map { (bundleID, $0) }
                shown += before.subtracting(after).map { (bundleID, $0) }
            }
            state.byGame = stored
            return (hidden, shown)
        }
    }
}
