import GameCenterProtocol
import Hummingbird

/// Counts every answered request under `http.requests` by status class, and times it under
/// `http.request_duration_seconds` by route pattern, method and status class. First in the chain, so it sees the
/// status ``ErrorMiddleware`` chose for an error, and the route the router matched (`NotFound` for none).
struct MetricsMiddleware<Context: RequestContext>: RouterMiddleware {
    let metrics: ServerMetrics

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let started = ContinuousClock.now
        let status: Int
        defer {
            metrics.recordRequest(
                route: context.endpointPath ?? "NotFound", method: request.method.rawValue, status: status,
                nanoseconds: (ContinuousClock.now - started).inNanoseconds)
        }
        do {
            let response = try await next(request, context)
            status = response.status.code
            metrics.countRequest(status: status)
            return response
        } catch {
            status = 500
            metrics.countRequest(status: status)
            throw error
        }
    }
}
