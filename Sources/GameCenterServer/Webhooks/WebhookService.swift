import Crypto
import Foundation
import GameCenterProtocol
import GameCenterStorage

/// Webhook endpoints and their deliveries, for the admin routes: add, list and remove endpoints; list an endpoint's
/// deliveries (the dead ones are the dead-letter list) and replay a dead one. ``WebhookDispatcher`` delivers.
struct WebhookService: Sendable {
    let database: Database
    let registry: GameRegistry
    let clock: ServerClock

    /// How long a delivery is retried before it is dead.
    static let retryForMillis: Int64 = 24 * 3600 * 1000

    func create(_ request: WebhookEndpointCreateRequest) async throws -> CreatedWebhookEndpoint {
        guard registry.game(bundleID: request.bundleID) != nil else { throw APIError.unknownGame(request.bundleID) }
        guard request.url.count <= 2048, let url = URL(string: request.url), ["http", "https"].contains(url.scheme?.lowercased() ?? ""),
            url.host?.isEmpty == false
        else { throw APIError.invalidParameter("url is an http:// or https:// address of at most 2048 characters") }
        guard !request.events.isEmpty else {
            throw APIError.invalidParameter("events names at least one of: \(WebhookEventType.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        let secret = "whsec_" + Credentials.randomBase64URL(bytes: 32)
        let now = clock.nowMillis()
        let record = try await database.write { storage in
            let record = WebhookEndpointRecord(
                endpointID: "wh_" + UUID().uuidString.lowercased().prefix(13).replacingOccurrences(of: "-", with: ""),
                bundleID: request.bundleID, environment: request.environment.rawValue, url: request.url, secret: secret,
                events: Set(request.events.map(\.rawValue)).sorted(), afterScoreID: try await storage.lastScoreID(),
                afterEventID: try await storage.lastPlayerEventID(), afterGameEventID: try await storage.lastGameEventID(),
                afterOccurrenceID: try await storage.lastOccurrenceEventID(), createdAt: now)
            try await storage.insertWebhookEndpoint(record)
            return record
        }
        return CreatedWebhookEndpoint(endpoint: Self.info(record), secret: record.secret)
    }

    func list(bundleID: String?) async throws -> WebhookEndpointList {
        WebhookEndpointList(endpoints: try await database.read { try await $0.webhookEndpoints(bundleID: bundleID) }.map(Self.info))
    }

    /// Removes an endpoint and its deliveries; answers it as it was.
    func remove(endpointID: String) async throws -> WebhookEndpointInfo {
        let removed = try await database.write { storage -> WebhookEndpointRecord? in
            let endpoint = try await storage.webhookEndpoints().first { $0.endpointID == endpointID }
            if endpoint != nil { _ = try await storage.deleteWebhookEndpoint(id: endpointID) }
            return endpoint
        }
        guard let removed else { throw APIError.webhookUnknown(endpointID) }
        return Self.info(removed)
    }

    func deliveries(endpointID: String, state: String?, limit: Int) async throws -> WebhookDeliveryList {
        guard (1...1000).contains(limit) else { throw APIError.invalidParameter("limit is 1 to 1000; got \(limit)") }
        if let state, !["pending", "delivered", "dead"].contains(state) {
            throw APIError.invalidParameter("state is pending, delivered or dead; got '\(state.prefix(20))'")
        }
        let records = try await database.read { storage -> [WebhookDeliveryRecord]? in
            guard try await storage.webhookEndpoints().contains(where: { $0.endpointID == endpointID }) else { return nil }
            return try await storage.webhookDeliveries(endpointID: endpointID, state: state, limit: limit)
        }
        guard let records else { throw APIError.webhookUnknown(endpointID) }
        return WebhookDeliveryList(
            deliveries: records.map { record in
                WebhookDeliveryInfo(
                    deliveryID: record.deliveryID, eventID: record.eventID, eventType: record.eventType, state: record.state, attempts: record.attempts,
                    nextAttemptAt: StoredTime.date(record.nextAttemptAt), expiresAt: StoredTime.date(record.expiresAt), lastError: record.lastError,
                    createdAt: StoredTime.date(record.createdAt), deliveredAt: record.deliveredAt.map(StoredTime.date), payload: record.payload)
            })
    }

    /// Puts a dead delivery back in line: tried at once, in its place among the endpoint's pending deliveries. Answers
    /// the endpoint.
    func replay(endpointID: String, deliveryID: Int64) async throws -> WebhookEndpointInfo {
        let now = clock.nowMillis()
        let endpoint = try await database.write { storage -> WebhookEndpointRecord? in
            guard try await storage.replayWebhookDelivery(deliveryID, endpointID: endpointID, now: now, expiresAt: now + Self.retryForMillis) else {
                return nil
            }
            return try await storage.webhookEndpoints().first { $0.endpointID == endpointID }
        }
        guard let endpoint else { throw APIError.webhookUnknown("\(endpointID) delivery \(deliveryID) (only a dead delivery is replayed)") }
        return Self.info(endpoint)
    }

    static func info(_ record: WebhookEndpointRecord) -> WebhookEndpointInfo {
        WebhookEndpointInfo(
            endpointID: record.endpointID, bundleID: record.bundleID, environment: GameCenterProtocol.Environment(rawValue: record.environment) ?? .sandbox,
            url: record.url, events: record.events.compactMap(WebhookEventType.init(rawValue:)), createdAt: StoredTime.date(record.createdAt))
    }
}

extension APIError {
    static func webhookUnknown(_ what: String) -> APIError {
        APIError(.webhookUnknown, "no webhook endpoint or delivery \(what.prefix(120))")
    }
}
