import Hummingbird

/// Counts every answered request under `http.requests` by status class. First in the chain, so it sees the
/// status ``ErrorMiddleware`` chose for an error.
struct MetricsMiddleware<Context: RequestContext>: RouterMiddleware {
    let metrics: ServerMetrics

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            let response = try await next(request, context)
            metrics.countRequest(status: response.status.code)
            return response
        } catch {
            metrics.countRequest(status: 500)
            throw error
        }
    }
}
