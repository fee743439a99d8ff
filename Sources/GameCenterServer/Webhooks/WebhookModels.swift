import Foundation
import GameCenterProtocol

/// The events a webhook endpoint may hear.
public enum WebhookEventType: String, Codable, Sendable, CaseIterable {
    /// A score was stored on a leaderboard (from a device or a game server).
    case scoreAccepted = "score.accepted"
    /// A player completed an achievement (reached 100 %), reported by a device or a game server.
    case achievementCompleted = "achievement.completed"
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
