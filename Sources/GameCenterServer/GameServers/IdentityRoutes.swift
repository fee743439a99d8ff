import Foundation
import GameCenterProtocol
import HTTPTypes
import Hummingbird

/// Identity verification: a signed-in device asks for its player's signed items (`POST /v1/identity-verification`);
/// the studio's game server checks them against the certificate (`GET /identity/v1/certificates/{keyID}.cer`) or
/// the key set (`GET /.well-known/jwks.json`), both public.
struct IdentityRoutes {
    let identity: IdentityService
    /// How callers reach this server, when configured (`--public-url`); otherwise `http://` and the request's Host.
    let publicURL: String?

    func addAuthenticated(to group: RouterGroup<AppRequestContext>) {
        group.post("identity-verification") { request, context -> IdentityVerificationItems in
            let device = try context.requireDevice()
            let session = try context.requireSession()
            return try await identity.items(
                playerID: session.playerID, bundleID: device.game.bundleID, environment: device.environment, baseURL: baseURL(request))
        }
    }

    func addPublic(to router: Router<AppRequestContext>) {
        router.get("identity/v1/certificates/{file}") { _, context -> Response in
            let file = try context.parameters.require("file")
            guard file.hasSuffix(".cer"), let der = try await identity.certificate(keyID: String(file.dropLast(4))) else {
                throw APIError.routeNotFound("/identity/v1/certificates/\(file.prefix(60))")
            }
            return Response(
                status: .ok, headers: [.contentType: "application/pkix-cert", .cacheControl: "public, max-age=86400"],
                body: ResponseBody(byteBuffer: ByteBuffer(bytes: der)))
        }
        router.get(".well-known/jwks.json") { _, _ -> EditedResponse<JSONWebKeySet> in
            EditedResponse(headers: [.cacheControl: "public, max-age=300"], response: try await identity.keySet())
        }
    }

    private func baseURL(_ request: Request) -> String {
        if let publicURL { return publicURL.trimmingCharacters(in: ["/"]) }
        let host = request.head.authority ?? "localhost"
        return "http://\(host)"
    }
}

extension IdentityVerificationItems: ResponseEncodable {}
extension JSONWebKeySet: ResponseEncodable {}
