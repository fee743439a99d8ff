import Hummingbird

/// Admin HTTP for webhooks (behind ``AdminMiddleware``): endpoints, their deliveries (the dead ones are the dead-letter
/// list), and replaying a dead delivery.
struct WebhookAdminRoutes {
    let webhooks: WebhookService

    func add(to group: RouterGroup<AppRequestContext>) {
        group.post("webhooks") { request, context -> EditedResponse<CreatedWebhookEndpoint> in
            let body = try await request.decode(as: WebhookEndpointCreateRequest.self, context: context)
            return EditedResponse(status: .created, response: try await webhooks.create(body))
        }
        group.get("webhooks") { request, _ -> WebhookEndpointList in
            try await webhooks.list(bundleID: request.uri.queryParameters["bundleID"].map(String.init))
        }
        group.delete("webhooks/{endpointID}") { _, context -> HTTPResponse.Status in
            try await webhooks.remove(endpointID: context.parameters.require("endpointID"))
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
            try await webhooks.replay(endpointID: context.parameters.require("endpointID"), deliveryID: deliveryID)
            return .accepted
        }
    }
}

extension CreatedWebhookEndpoint: ResponseEncodable {}
extension WebhookEndpointList: ResponseEncodable {}
extension WebhookDeliveryList: ResponseEncodable {}
