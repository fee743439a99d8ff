import Foundation
import GameCenterProtocol
import GameCenterStorage
import HTTPTypes
import Hummingbird
import Logging
import NIOCore

/// Answers every error with the JSON ``ErrorBody`` and the status ``ErrorClassifier`` gives it.
struct ErrorMiddleware<Context: RequestContext>: RouterMiddleware {
    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch {
            return Self.response(for: ErrorClassifier.classify(error, path: request.uri.path, logger: context.logger))
        }
    }

    static func response(for error: APIError) -> Response {
        var headers: HTTPFields = [.contentType: "application/json; charset=utf-8"]
        if let retry = error.retryAfterSeconds { headers[.retryAfter] = String(retry) }
        return Response(status: error.status, headers: headers, body: .init(byteBuffer: error.encodedBody))
    }
}
