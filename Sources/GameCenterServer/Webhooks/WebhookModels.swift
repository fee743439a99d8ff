import Foundation
import GameCenterProtocol

/// The events a webhook endpoint may hear.
public enum WebhookEventType: String, Codable, Sendable, CaseIterable {
    /// A score was stored on a leaderboard (from a device or a game server).
    case scoreAccepted = "score.accepted"
    /// A player completed an achievement (reached 100 %), reported by a device or a game server.
    case achievementCompleted = "achievement.completed"
    /// An invitee answered an invitation to a real-time match (accepted, declined) or joined it as it started.
    case invitationAnswered = "invitation.answered"
    /// A turn-based match changed: a turn passed, was saved or timed out, a participant joined, accepted, declined or
    /// quit, an exchange was sent, cancelled, completed or merged, or the match ended (kind `matchEnded`).
    case turnChanged = "turn.changed"
    /// A player's save changed (another version was saved, or the save came into conflict).
    case saveChanged = "save.changed"
    /// An occurrence of a recurring leaderboard started.
    case occurrenceStarted = "occurrence.started"
    /// An occurrence of a recurring leaderboard ended, with its final standings.
    case occurrenceEnded = "occurrence.ended"
    /// A real-time match ended: its last member left.
    case matchEnded = "match.ended"
    /// A device's score on a board with verification was quarantined (the verifier did not answer in time): it waits
    /// for the studio's release or rejection.
    case scoreQuarantined = "score.quarantined"
    /// A device's score on a board with verification was rejected, by the verifier or the studio, with the reason.
    case scoreRejected = "score.rejected"
    /// Not an event but a question: the endpoint is the game's score verifier, asked about each device's score on a
    /// board with `verification` and answering `{"decision": "accept"}` or `{"decision": "reject", "reason": …}`.
    case scoreVerify = "score.verify"
}

/// `POST /admin/v1/webhooks`: a new endpoint for a game's events.
public struct WebhookEndpointCreateRequest: Codable, Sendable {
    public var bundleID: String
    public var environment: Environment
    /// `http://` or `https://`, at most 2,048 characters.
    public var url: String
    /// At least one event type.
    public var events: [WebhookEventType]

    /// A request for an endpoint.
    public init(bundleID: String, environment: GameCenterProtocol.Environment, url: String, events: [WebhookEventType]) {
        self.bundleID = bundleID
        self.environment = environment
        self.url = url
        self.events = events
    }
}

/// An endpoint as the admin routes show it (never its secret).
public struct WebhookEndpointInfo: Codable, Sendable, Equatable {
    public var endpointID: String
    public var bundleID: String
    public var environment: Environment
    public var url: String
    public var events: [WebhookEventType]
    public var createdAt: Date
}

/// A new endpoint with the secret its deliveries are signed with, shown this once.
public struct CreatedWebhookEndpoint: Codable, Sendable {
    public var endpoint: WebhookEndpointInfo
    /// The HMAC-SHA256 key of `X-GameCenter-Webhook-Signature`.
    public var secret: String
}

/// `GET /admin/v1/webhooks`.
public struct WebhookEndpointList: Codable, Sendable {
    public var endpoints: [WebhookEndpointInfo]
}

/// One event's delivery to one endpoint.
public struct WebhookDeliveryInfo: Codable, Sendable, Equatable {
    public var deliveryID: Int64
    public var eventID: String
    public var eventType: String
    /// `pending`, `delivered` or `dead`.
    public var state: String
    public var attempts: Int64
    /// When it is tried next (pending).
    public var nextAttemptAt: Date
    /// When a pending delivery becomes dead.
    public var expiresAt: Date
    /// Why the last attempt failed.
    public var lastError: String?
    public var createdAt: Date
    public var deliveredAt: Date?
    /// The JSON body posted.
    public var payload: String
}

/// `GET /admin/v1/webhooks/{endpointID}/deliveries`: newest first.
public struct WebhookDeliveryList: Codable, Sendable {
    public var deliveries: [WebhookDeliveryInfo]
}

/// The body of every delivery: one event.
struct WebhookEvent<Data: Encodable>: Encodable {
    /// The same for every attempt and every endpoint: receivers drop an id they have seen (delivery is at least once).
    var id: String
    var type: String
    /// When the event happened, in seconds since 1970.
    var createdAt: Double
    var bundleID: String
    var environment: String
    var data: Data
}

/// `achievement.completed`'s data.
struct AchievementCompletedData: Encodable {
    var playerID: String
    var identifier: String
    /// In seconds since 1970.
    var completedAt: Double
}

/// `score.accepted`'s data.
struct ScoreAcceptedData: Encodable {
    var playerID: String
    var category: String
    var value: Int64
    var context: UInt64
    /// When the score was earned, in seconds since 1970.
    var date: Double
    /// A recurring board's occurrence start, in seconds since 1970.
    var occurrence: Double?
}

/// `invitation.answered`'s data.
struct InvitationAnsweredData: Encodable {
    var matchID: String
    /// The player who invited.
    var inviterID: String
    /// The invitee who answered.
    var playerID: String
    /// `accepted`, `declined` or `connected` (the match started with the invitee in it).
    var state: String
}

/// `turn.changed`'s data: the change and the match after it, the same for every participant (whose turn it became is
/// ``currentIndex``).
struct TurnChangedData: Encodable {
    var matchID: String
    /// Numbers the match's changes: larger, later.
    var version: Int64
    /// `turnPassed`, `turnSaved`, `timedOut`, `participantQuit`, `invited`, `accepted`, `declined`, `joined`,
    /// `exchangeRequest`, `exchangeCancelled`, `exchangeCompleted`, `exchangesMerged` or `matchEnded`.
    var kind: String
    /// GameKit's `GKTurnBasedMatch.Status` raw value: open 1, ended 2, matching 3.
    var status: Int
    /// Whether the match is over.
    var ended: Bool
    /// The seat that acted; nil: the server's clock.
    var actorIndex: Int?
    /// The seat whose turn it is; nil once the match ended.
    var currentIndex: Int?
    /// The last turn's message.
    var message: String?
    /// The exchange concerned (exchange kinds); its data is not included.
    var exchangeID: String?
    var participants: [TurnParticipantData]
}

/// A seat of a turn-based match in `turn.changed`.
struct TurnParticipantData: Encodable {
    /// Nil while the seat waits for auto-match.
    var playerID: String?
    /// GameKit's `GKTurnBasedParticipant.Status` raw value: invited 1, declined 2, matching 3, active 4, done 5.
    var status: Int
    /// GameKit's `GKTurnBasedMatch.Outcome` raw value (0: none yet).
    var outcome: Int
    /// In seconds since 1970.
    var lastTurnDate: Double?
}

/// `save.changed`'s data: the save's current versions (more than one: in conflict), never its data.
struct SaveChangedData: Encodable {
    var playerID: String
    var name: String
    var versions: [SaveVersionData]
}

/// A version of a save in `save.changed`.
struct SaveVersionData: Encodable {
    var versionID: String
    var deviceName: String
    /// In seconds since 1970.
    var modifiedAt: Double
    var size: Int64
    /// SHA-256 of the data, lowercase hex.
    var sha256: String
}

/// `occurrence.started`'s and `occurrence.ended`'s data.
struct OccurrenceData: Encodable {
    var category: String
    /// The occurrence's start and end, in seconds since 1970.
    var occurrence: Double
    var occurrenceEnd: Double
    /// An end's final standings: the top entries (at most 10); nil for a start.
    var standings: [OccurrenceStandingData]?
}

/// One entry of an ended occurrence's final standings.
struct OccurrenceStandingData: Encodable {
    var rank: Int
    var playerID: String
    var alias: String
    var value: Int64
    var context: UInt64
    /// When the score was earned, in seconds since 1970.
    var date: Double
}

/// `match.ended`'s data, stored in `game_events` when a real-time match's last member leaves.
struct MatchEndedData: Codable {
    var matchID: String
    /// Every member the match had, in the order they joined.
    var players: [String]
    /// In seconds since 1970; nil for a match stored before its start was recorded.
    var startedAt: Double?
    var endedAt: Double
}

/// `score.quarantined`'s and `score.rejected`'s data: the submission and why.
struct ScoreSubmissionEventData: Codable {
    var submissionID: String
    var playerID: String
    var category: String
    var value: Int64
    var context: UInt64
    /// When the score was earned, in seconds since 1970.
    var date: Double
    var reason: String
    /// `verifier`, `admin` or the server key that decided.
    var decidedBy: String
}
