import Hummingbird

/// Requires `Authorization: Bearer TOKEN` with a live session of the device's game and environment.
struct AuthenticationMiddleware: RouterMiddleware {
    typealias Context = AppRequestContext
    let accounts: AccountService

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let device = try context.requireDevice()
        guard let header = request.headers[.authorization], header.hasPrefix("Bearer ") else { throw APIError.notAuthenticated }
        var context = context
        context.session = try await accounts.authenticate(token: String(header.dropFirst("Bearer ".count)), device: device)
        return try await next(request, context)
    }
}
