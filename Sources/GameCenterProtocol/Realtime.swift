import Foundation

/// Kinds of durable events pushed on the realtime channel.
public enum EventKind: String, Codable, Sendable {
    /// Payload: ``FriendRequestInfo``.
    case friendRequestReceived
    /// Payload: ``FriendRequestAccepted``; sent to the request's sender (declines are not announced).
    case friendRequestAccepted
    /// Payload: ``FriendRemoved``.
    case friendRemoved
    /// Payload: ``AchievementCompleted``.
    case achievementCompleted
    /// Payload: ``InvitationInfo``; sent to each invitee.
    case matchInvitation
    /// Payload: ``InvitationCancelled``.
    case invitationCancelled
    /// Payload: ``InviteeAnswered``; sent to the inviter.
    case inviteeAnswered
    /// Payload: ``MatchInfo``; sent to every member when a match starts (and to old members when players are added).
    case matchFound
    /// Payload: ``MatchRequestFailed``.
    case matchRequestFailed
    /// Payload: ``MatchPlayerLeft``; sent to the other members.
    case matchPlayerLeft
    /// Payload: ``PlayWithFriends``; sent to the player who chose friends in the Game Center app (a device of the
    /// game then claims the choice, so that one device gets it once).
    case playWithFriends
    /// Payload: ``InvitationInfo`` with ``InvitationInfo/acceptedAt``; sent to the invitee when they accept the
    /// invitation in the Game Center app (their running game joins it).
    case invitationAccepted
    /// Payload: ``ScreenPresentation``; sent to the player when a page a game presented is shown, left or finished.
    case screenPresentation
    /// Payload: ``TurnBasedEventInfo``; sent to the participants of a turn-based match it concerns, one per change.
    case turnBased
    /// Payload: ``SavedGameEventInfo``; sent to the player when one of their saves changed (another device saved,
    /// or the save came into conflict).
    case savedGame
    /// Payload: ``ChallengeEventInfo``; sent to the participants of a challenge when someone is invited, joins,
    /// leaves or scores, when one hour is left and when it ends.
    case challenge
    /// Payload: ``ActivityEventInfo``; sent to a player who joined a party in the Game Center app (their game starts
    /// the activity) and to a party's players when someone joins it.
    case activity
}

/// A durable event: stored before it is pushed, numbered per player, replayed to a device that missed it.
public struct RealtimeEvent: Codable, Sendable, Equatable {
    /// Per-player sequence number, increasing by one for each event.
    public var seq: Int64
    public var kind: EventKind
    /// The kind's payload as JSON text.
    public var payload: String
    public var createdAt: Date

    public init(seq: Int64, kind: EventKind, payload: String, createdAt: Date) {
        self.seq = seq
        self.kind = kind
        self.payload = payload
        self.createdAt = createdAt
    }
}

/// A JSON text frame from the server on `/v1/realtime`.
public enum ServerFrame: Codable, Sendable, Equatable {
    /// First frame after the upgrade: the heartbeat interval the server expects replies within.
    case hello(heartbeatSeconds: Double, cursor: Int64)
    /// A stored event; the device advances its cursor to `seq`.
    case event(RealtimeEvent)
    /// Liveness probe; the device answers with ``ClientFrame/heartbeat``.
    case heartbeat
    /// The session was revoked or expired; the server closes the channel after this frame.
    case sessionEnded(reason: String)
}

/// A JSON text frame from the device on `/v1/realtime`.
public enum ClientFrame: Codable, Sendable, Equatable {
    /// Answer to a server heartbeat (or a device-initiated liveness probe).
    case heartbeat
}
