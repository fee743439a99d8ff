import Hummingbird

/// Admin HTTP for webhooks (behind ``AdminMiddleware``): endpoints, their deliveries (the dead ones are the dead-letter
/// list), and replaying a dead delivery.
struct WebhookAdminRoutes {
    let webhooks: WebhookService
    let dispatcher: WebhookDispatcher
    let audit: AuditLog

    func add(to group: RouterGroup<AppRequestContext>) {
        group.post("webhooks") { request, context -> EditedResponse<CreatedWebhookEndpoint> in
            let body = try await request.decode(as: WebhookEndpointCreateRequest.self, context: context)
            let created = try await webhooks.create(body)
            dispatcher.endpointsChanged()
            try await audit.record(
                bundleID: body.bundleID, actor: AuditLog.admin, action: "webhook.added", subject: created.endpoint.endpointID,
                detail: ["url": body.url, "events": body.events.map(\.rawValue).joined(separator: " ")])
            return EditedResponse(status: .created, response: created)
        }
        group.get("webhooks") { request, _ -> WebhookEndpointList in
            try await webhooks.list(bundleID: request.uri.queryParameters["bundleID"].map(String.init))
        }
        group.delete("webhooks/{endpointID}") { _, context -> HTTPResponse.Status in
            let endpointID = try context.parameters.require("endpointID")
            let removed = try await webhooks.remove(endpointID: endpointID)
            dispatcher.endpointsChanged()
            try await audit.record(bundleID: removed.bundleID, actor: AuditLog.admin, action: "webhook.removed", subject: endpointID)
            return .noContent
        }
        group.get("webhooks/{endpointID}/deliveries") { request, context -> WebhookDeliveryList in
            let query = request.uri.queryParameters
            let limitText = query["limit"].map(String.init) ?? "100"
            guard let limit = Int(limitText) else { throw APIError.invalidParameter("limit is a whole number from 1 to 1000") }
            return try await webhooks.deliveries(
                endpointID: context.parameters.require("endpointID"), state: query["state"].map(String.init), limit: limit)
        }
        group.post("webhooks/{endpointID}/deliveries/{deliveryID}/replay") { _, context -> HTTPResponse.Status in
            guard let deliveryID = Int64(try context.parameters.require("deliveryID")) else {
                throw APIError.invalidParameter("deliveryID is a whole number")
            }
            let endpointID = try context.parameters.require("endpointID")
            let endpoint = try await webhooks.replay(endpointID: endpointID, deliveryID: deliveryID)
            try await audit.record(
                bundleID: endpoint.bundleID, actor: AuditLog.admin, action: "webhook.replayed", subject: endpointID, detail: ["delivery": "\(deliveryID)"])
            return .accepted
        }
    }
}

extension WebhookAdminRoutes {
    /// The same for server keys with `admin`, on the key's game and environment only (`/server/v1/webhooks…`): a
    /// studio's deploy registers its own endpoints, and its verifier, without the admin key.
    func addServer(to group: RouterGroup<AppRequestContext>) {
        group.post("webhooks") { request, context -> EditedResponse<CreatedWebhookEndpoint> in
            let caller = try context.requireServerCaller()
            try caller.require(.admin)
            let body = try await request.decode(as: ServerWebhookCreateRequest.self, context: context)
            let created = try await webhooks.create(
                WebhookEndpointCreateRequest(bundleID: caller.game.bundleID, environment: caller.environment, url: body.url, events: body.events))
            dispatcher.endpointsChanged()
            try await audit.record(
                bundleID: caller.game.bundleID, actor: caller.keyID, action: "webhook.added", subject: created.endpoint.endpointID,
                detail: ["url": body.url, "events": body.events.map(\.rawValue).joined(separator: " ")])
            return EditedResponse(status: .created, response: created)
        }
        group.get("webhooks") { _, context -> WebhookEndpointList in
            let caller = try context.requireServerCaller()
            try caller.require(.admin)
            return WebhookEndpointList(endpoints: try await own(caller))
        }
        group.delete("webhooks/{endpointID}") { _, context -> HTTPResponse.Status in
            let caller = try context.requireServerCaller()
            try caller.require(.admin)
            let endpointID = try context.parameters.require("endpointID")
            guard try await own(caller).contains(where: { $0.endpointID == endpointID }) else { throw APIError.webhookUnknown(endpointID) }
            _ = try await webhooks.remove(endpointID: endpointID)
            dispatcher.endpointsChanged()
            try await audit.record(bundleID: caller.game.bundleID, actor: caller.keyID, action: "webhook.removed", subject: endpointID)
            return .noContent
        }
        group.get("webhooks/{endpointID}/deliveries") { request, context -> WebhookDeliveryList in
            let caller = try context.requireServerCaller()
            try caller.require(.admin)
            let endpointID = try context.parameters.require("endpointID")
            guard try await own(caller).contains(where: { $0.endpointID == endpointID }) else { throw APIError.webhookUnknown(endpointID) }
            let query = request.uri.queryParameters
            guard let limit = Int(query["limit"].map(String.init) ?? "100") else {
                throw APIError.invalidParameter("limit is a whole number from 1 to 1000")
            }
            return try await webhooks.deliveries(endpointID: endpointID, state: query["state"].map(String.init), limit: limit)
        }
    }

    /// The endpoints of the key's game and environment.
    private func own(_ caller: ServerCaller) async throws -> [WebhookEndpointInfo] {
        try await webhooks.list(bundleID: caller.game.bundleID).endpoints.filter { $0.environment == caller.environment }
    }
}

/// `POST /server/v1/webhooks`: an endpoint of the key's game and environment.
public struct ServerWebhookCreateRequest: Codable, Sendable {
    /// `http://` or `https://`, at most 2,048 characters.
    public var url: String
    /// At least one event type.
    public var events: [WebhookEventType]
}

extension CreatedWebhookEndpoint: ResponseEncodable {}
extension WebhookEndpointList: ResponseEncodable {}
extension WebhookDeliveryList: ResponseEncodable {}
