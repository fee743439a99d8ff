import GameCenterProtocol
import GameCenterStorage
import HTTPTypes
import Hummingbird
import Logging

/// Turns whatever a request's handling threw into the one ``APIError`` it is answered with, the same for the JSON API
/// (``ErrorMiddleware``) and the web app's pages (``PageResponder``): a storage outage is `503` with `Retry-After`
/// on both, and what is the server's own fault is logged and answered `500` without details.
enum ErrorClassifier {
    /// The answer for `error`, thrown while handling a request for `path`.
    static func classify(_ error: any Error, path: String, logger: Logger) -> APIError {
        switch error {
        case let error as APIError:
            return error
        case let error as HTTPError:
            return apiError(status: error.status, message: error.body, path: path)
        case let error as any HTTPResponseError:
            return apiError(status: error.status, message: nil, path: path)
        case let error as DecodingError:
            return .malformedBody(WireRequestDecoder.describe(error))
        case let error as StorageError where error.isUnavailable:
            logger.warning("storage unavailable", metadata: [LogKey.error: "\(error)", LogKey.path: "\(path)"])
            return .storageUnavailable
        default:
            logger.error("request failed", metadata: [LogKey.error: "\(String(reflecting: error))", LogKey.path: "\(path)"])
            return .internalError
        }
    }

    /// The answer for an HTTP-level refusal (Hummingbird's router and body readers) with `status`.
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
}
