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

extension CreatedWebhookEndpoint: ResponseEncodable {}
extension WebhookEndpointList: ResponseEncodable {}
extension WebhookDeliveryList: ResponseEncodable {}
