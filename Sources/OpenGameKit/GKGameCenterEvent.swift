import Synchronization

/// Something Game Center told this device on its realtime channel.
public enum GKGameCenterEvent: Sendable {
    /// Another player asked the local player to be friends.
    case friendRequestReceived(GKFriendRequest)
    /// A player accepted the local player's friend request and is now a friend.
    case friendRequestAccepted(playerID: String)
    /// A friend invited the local player to a match and waits for the answer: show it, then
    /// ``GKMatchmaker/accept(_:)`` it (the ``GKMatchmaker/inviteHandler`` then gets it, as the seed's
    /// `acceptedInvite`) or ``GKInvite/decline()`` it. Also listed in ``GKMatchmaker/receivedInvites``.
    case invitationReceived(GKInvite)
    /// A friend ended the friendship.
    case friendRemoved(playerID: String)
    /// The local player completed an achievement of this game (possibly on another device).
    case achievementCompleted(identifier: String)
    /// A report kept in the outbox was dropped: the server refused it when it was finally delivered, or it could not
    /// be delivered within 30 days (the error is then `communicationsFailure`).
    case reportRefused(reportID: String, error: GKError)
    /// Something happened in a turn-based match of this game (see ``GKTurnBasedMatchEvent/Kind``).
    case turnBased(GKTurnBasedMatchEvent)
    /// A save of the local player changed elsewhere, or a save this device kept while offline was uploaded: `versions`
    /// are its current versions (several: a conflict).
    case savedGame(name: String, versions: [GKSavedGame])
    /// A save kept on this device while the server could not be reached (``GKSavedGame/SyncState-swift.enum/pending``)
    /// was refused for good when it was finally uploaded (over one of the game's limits, for example): it was dropped.
    /// `error` says why.
    case savedGameRefused(name: String, error: GKError)
    /// Something happened in one of the local player's challenges in this game: an invitation, a player joining,
    /// leaving or scoring, being overtaken, an hour left, the end.
    case challenge(GKChallengeEvent)
    /// The local player joined a party in the Game Center app: start the activity (``GKGameActivity/start()``) to play
    /// with it (Apple's `player(_:wantsToPlay:)`). Also kept in ``GKGameActivity/pendingGameActivities(in:)`` until
    /// started.
    case wantsToPlay(GKGameActivity)
    /// `playerID` joined the party of the local player's `activity` (which lists them now).
    case partyPlayerJoined(playerID: String, activity: GKGameActivity)
    /// The realtime channel is connected (again); events missed while it was down have been replayed before this.
    case connected
    /// The session ended (signed out here or elsewhere, revoked, or expired).
    case signedOut(reason: String)
}

/// Fans events out to every current subscriber.
final class EventHub: Sendable {
    private let subscribers = Mutex<[Int: AsyncStream<GKGameCenterEvent>.Continuation]>([:])
    private let nextID = Atomic<Int>(0)

    func subscribe() -> AsyncStream<GKGameCenterEvent> {
        let id = nextID.add(1, ordering: .relaxed).newValue
        let (stream, continuation) = AsyncStream.makeStream(of: GKGameCenterEvent.self, bufferingPolicy: .bufferingNewest(1000))
        subscribers.withLock { $0[id] = continuation }
        continuation.onTermination = { [weak self] _ in _ = self?.subscribers.withLock { $0.removeValue(forKey: id) } }
        return stream
    }

    func publish(_ event: GKGameCenterEvent) {
        for continuation in subscribers.withLock({ Array($0.values) }) { continuation.yield(event) }
    }
}
