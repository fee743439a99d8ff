import Hummingbird

/// Admin HTTP for server keys (behind ``AdminMiddleware``): create, list, rotate, revoke. `gamecenter keys` drives it.
struct ServerKeyAdminRoutes {
    let keys: ServerKeyService
    let audit: AuditLog

    func add(to group: RouterGroup<AppRequestContext>) {
        group.post("keys") { request, context -> EditedResponse<CreatedServerKey> in
            let body = try await request.decode(as: ServerKeyCreateRequest.self, context: context)
            let created = try await keys.create(body)
            try await record("key.created", created.key)
            return EditedResponse(status: .created, response: created)
        }
        group.get("keys") { request, _ -> ServerKeyList in
            try await keys.list(bundleID: request.uri.queryParameters["bundleID"].map(String.init))
        }
        group.post("keys/{keyID}/rotate") { request, context -> EditedResponse<CreatedServerKey> in
            let body = try await request.decode(as: ServerKeyRotateRequest.self, context: context)
            let keyID = try context.parameters.require("keyID")
            let created = try await keys.rotate(keyID: keyID, graceSeconds: body.graceSeconds)
            try await record("key.rotated", created.key, ["replaces": keyID])
            return EditedResponse(status: .created, response: created)
        }
        group.delete("keys/{keyID}") { _, context -> ServerKeyInfo in
            let revoked = try await keys.revoke(keyID: context.parameters.require("keyID"))
            try await record("key.revoked", revoked)
            return revoked
        }
    }

    private func record(_ action: String, _ key: ServerKeyInfo, _ detail: [String: String] = [:]) async throws {
        try await audit.record(
            bundleID: key.bundleID, actor: AuditLog.admin, action: action, subject: key.keyID,
            detail: detail.merging(["environment": key.environment.rawValue, "permissions": key.permissions.map(\.rawValue).joined(separator: " ")]) { a, _ in a
            })
    }
}

extension CreatedServerKey: ResponseEncodable {}
extension ServerKeyList: ResponseEncodable {}
extension ServerKeyInfo: ResponseEncodable {}
