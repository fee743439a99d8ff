import Foundation
import GameCenterProtocol
import GameCenterStorage
import HTTPTypes
import Hummingbird
import Logging
import NIOCore

/// Answers every error with the JSON ``ErrorBody`` and the right status; logs server faults.
struct ErrorMiddleware<Context: RequestContext>: RouterMiddleware {
    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch let error as APIError {
            return Self.response(for: error)
        } catch let error as HTTPError {
            return Self.response(for: Self.apiError(status: error.status, message: error.body, path: request.uri.path))
        } catch let error as any HTTPResponseError {
            return Self.response(for: Self.apiError(status: error.status, message: nil, path: request.uri.path))
        } catch let error as DecodingError {
            return Self.response(for: .malformedBody(WireRequestDecoder.describe(error)))
        } catch let error as StorageError where error.isUnavailable {
            context.logger.warning("storage unavailable", metadata: [LogKey.error: "\(error)", LogKey.path: "\(request.uri.path)"])
            return Self.response(for: .storageUnavailable)
        } catch {
            context.logger.error("request failed", metadata: [LogKey.error: "\(String(reflecting: error))", LogKey.path: "\(request.uri.path)"])
            return Self.response(for: .internalError)
        }
    }

    static func apiError(status: HTTPResponse.Status, message: String?, path: String) -> APIError {
        switch status {
        case .notFound: return .routeNotFound(path)
        case .contentTooLarge: return .bodyTooLarge
        case .methodNotAllowed: return .methodNotAllowed
        case .badRequest: return .malformedBody(message ?? "the request body is not valid JSON for this route")
        default:
            if status.kind == .serverError { return .internalError }
            return APIError(.requestRejected, message ?? "the server refused this request: \(status.reasonPhrase)")
        }
    }

    static func response(for error: APIError) -> Response {
        var headers: HTTPFields = [.contentType: "application/json; charset=utf-8"]
        if let retry = error.retryAfterSeconds { headers[.retryAfter] = String(retry) }
        return Response(status: error.status, headers: headers, body: .init(byteBuffer: error.encodedBody))
    }
}
