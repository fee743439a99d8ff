import Hummingbird

/// Guards the game-server routes: the request's `Authorization: Bearer TOKEN` must be a token a server key signed
/// (``ServerKeyService/authenticate(authorization:method:path:)``); each key's requests are rate-limited
/// (`server-requests`, answered `429` with `Retry-After`).
struct ServerKeyMiddleware: RouterMiddleware {
    typealias Context = AppRequestContext
    let keys: ServerKeyService
    let limiter: RateLimiter

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var context = context
        let caller = try await keys.authenticate(
            authorization: request.headers[.authorization], method: request.method.rawValue, path: request.uri.path)
        try limiter.take(.serverRequests, for: caller.keyID)
        context.serverCaller = caller
        return try await next(request, context)
    }
}
