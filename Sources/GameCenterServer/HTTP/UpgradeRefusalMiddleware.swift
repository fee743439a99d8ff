import Hummingbird

/// Gives a refused WebSocket upgrade its real answer.
///
/// Hummingbird decides an upgrade by running the request through the router; when the answer is not 200 it
/// writes a bare `400` with no body, so a device whose token expired or whose session has too many channels
/// could not tell why. This middleware sees the error first and hands it to the connection's ``RequestGuard``,
/// which writes it in place of the bare `400`.
struct UpgradeRefusalMiddleware: RouterMiddleware {
    func handle(
        _ request: Request, context: AppRequestContext,
        next: (Request, AppRequestContext) async throws -> Response
    ) async throws -> Response {
        guard request.headers[.upgrade]?.lowercased() == "websocket" else { return try await next(request, context) }
        do {
            return try await next(request, context)
        } catch let error as APIError {
            await context.refuseUpgrade(with: error)
            throw error
        }
    }
}
