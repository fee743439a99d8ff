import Hummingbird

/// Admin HTTP for server keys (behind ``AdminMiddleware``): create, list, rotate, revoke. `gamecenter keys` drives it.
struct ServerKeyAdminRoutes {
    let keys: ServerKeyService

    func add(to group: RouterGroup<AppRequestContext>) {
        group.post("keys") { request, context -> EditedResponse<CreatedServerKey> in
            let body = try await request.decode(as: ServerKeyCreateRequest.self, context: context)
            return EditedResponse(status: .created, response: try await keys.create(body))
        }
        group.get("keys") { request, _ -> ServerKeyList in
            try await keys.list(bundleID: request.uri.queryParameters["bundleID"].map(String.init))
        }
        group.post("keys/{keyID}/rotate") { request, context -> EditedResponse<CreatedServerKey> in
            let body = try await request.decode(as: ServerKeyRotateRequest.self, context: context)
            return EditedResponse(
                status: .created, response: try await keys.rotate(keyID: context.parameters.require("keyID"), graceSeconds: body.graceSeconds))
        }
        group.delete("keys/{keyID}") { _, context -> ServerKeyInfo in
            try await keys.revoke(keyID: context.parameters.require("keyID"))
        }
    }
}

extension CreatedServerKey: ResponseEncodable {}
extension ServerKeyList: ResponseEncodable {}
extension ServerKeyInfo: ResponseEncodable {}
