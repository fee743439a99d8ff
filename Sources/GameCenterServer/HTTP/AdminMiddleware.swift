import Crypto
import Foundation
import Hummingbird

/// Guards `/admin/v1/…`: requires `Authorization: Bearer ADMIN_KEY` with the key the server was started with
/// (`--admin-key` or `GAMECENTER_ADMIN_KEY`). Without a configured key every admin route answers 403.
struct AdminMiddleware: RouterMiddleware {
    typealias Context = AppRequestContext
    /// The configured key; nil turns the admin routes off.
    let adminKey: String?

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard let adminKey else { throw APIError.adminDisabled }
        guard let header = request.headers[.authorization], header.hasPrefix("Bearer "),
            Self.equalInConstantTime(Data(header.dropFirst("Bearer ".count).utf8), Data(adminKey.utf8))
        else { throw APIError.adminKeyRequired }
        return try await next(request, context)
    }

    /// Compares digests so that the time taken says nothing about how much of the key matched.
    private static func equalInConstantTime(_ a: Data, _ b: Data) -> Bool {
        Data(SHA256.hash(data: a)) == Data(SHA256.hash(data: b))
    }
}

extension APIError {
    static let adminDisabled = APIError(.adminDisabled, "admin routes are off on this server; start it with --admin-key KEY")
    static let adminKeyRequired = APIError(.adminKeyRequired, "admin routes need Authorization: Bearer ADMIN_KEY")
}
