import Foundation
import GameCenterProtocol
import HTTPTypes
import Hummingbird
import NIOCore

/// A failure the caller caused (or a server fault), with everything needed to answer it.
///
/// Each feature declares its errors as static members in an extension (`APIError.invalidCredentials`), each
/// with its ``WireErrorCode``; the error table (`ErrorTable.swift`) gives every code its HTTP status and
/// `GKError` code, and ``ErrorMiddleware`` turns the error into the JSON ``ErrorBody``.
public struct APIError: Error, Sendable, CustomStringConvertible {
    /// The specific identifier, e.g. `account.invalid_credentials`.
    public let code: WireErrorCode
    /// What was wrong and what is allowed.
    public let message: String
    /// For throttles: seconds until a retry may succeed.
    public let retryAfterSeconds: Int?

    /// Creates an error; its status and `GKError` code come from the error table.
    public init(_ code: WireErrorCode, _ message: String, retryAfterSeconds: Int? = nil) {
        self.code = code
        self.message = message
        self.retryAfterSeconds = retryAfterSeconds
    }

    /// The `GKError` code the SDK reports.
    public var gkCode: ErrorCode { code.gkCode }
    /// HTTP status of the response.
    public var status: HTTPResponse.Status { code.status }

    public var description: String { "\(code.rawValue): \(message)" }

    /// The JSON body for this error.
    var body: ErrorBody { ErrorBody(code: code.rawValue, gkCode: gkCode, message: message, retryAfterSeconds: retryAfterSeconds) }

    /// ``body``, encoded.
    var encodedBody: ByteBuffer { ByteBuffer(bytes: (try? WireCoding.makeEncoder().encode(body)) ?? Data()) }

    /// The whole HTTP/1.1 response, saying it closes the connection: for answers written before any HTTP handling.
    var closingHTTPResponse: ByteBuffer {
        let body = encodedBody
        var response = ByteBuffer(
            string: """
                HTTP/1.1 \(status.code) \(status.reasonPhrase)\r
                Content-Type: application/json; charset=utf-8\r
                Content-Length: \(body.readableBytes)\r
                Connection: close\r
                \(retryAfterSeconds.map { "Retry-After: \($0)\r\n" } ?? "")\r

                """)
        response.writeImmutableBuffer(body)
        return response
    }
}

extension APIError {
    /// A field of the request broke a rule.
    static func invalidParameter(_ message: String) -> APIError {
        APIError(.requestInvalidParameter, message)
    }

    /// The request body was not the JSON the route expects.
    static func malformedBody(_ message: String) -> APIError {
        APIError(.requestMalformedBody, message)
    }

    /// The request body was larger than allowed.
    static let bodyTooLarge = APIError(.requestBodyTooLarge, "the request body is larger than the \(Limits.maximumRequestBodyBytes / 1024) KiB allowed")

    /// No route has this path.
    static func routeNotFound(_ path: String) -> APIError {
        APIError(.requestUnknownRoute, "no route \(path); the routes are listed in /openapi.yaml")
    }

    /// A browser asked for an address the Game Center app has no page at.
    static func pageNotFound(_ path: String) -> APIError {
        APIError(.requestUnknownRoute, "there is no page at \(path)")
    }

    /// The route exists, but not for this method.
    static let methodNotAllowed = APIError(.requestMethodNotAllowed, "this route does not accept this HTTP method; see /openapi.yaml")

    /// A fault on the server's side; the message leaks nothing.
    static let internalError = APIError(.serverInternal, "the server failed to handle the request; it has been logged")

    /// The request is not HTTP/1.1 the server can read (the parser refused it).
    static let malformedRequest = APIError(.requestMalformed, "the request is not valid HTTP/1.1")

    /// The request line and headers are too large, or too many headers.
    static let headersTooLarge = APIError(
        .requestHeadersTooLarge,
        "the request line and headers must fit in \(GameCenterApp.ConnectionLimits.maximumHeaderBytes / 1024) KiB, with at most \(GameCenterApp.ConnectionLimits.maximumHeaderCount) headers"
    )

    /// The server, or the caller's address, has as many connections open as allowed.
    static let tooManyConnections = APIError(
        .serverTooManyConnections, "the server has too many open connections, or too many from your address; try again later", retryAfterSeconds: 1)

    /// The database cannot be reached.
    /// The server runs read-only (`serve --read-only`: it is winding down): reads, sign-in and data downloads only.
    static let readOnly = APIError(
        .serverReadOnly,
        "this Game Center is winding down and stores nothing new: games can read, players can sign in and download their data",
        // Not a passing outage: a day.
        retryAfterSeconds: 86_400)

    static let storageUnavailable = APIError(
        .serverStorageUnavailable, "the server's database cannot be reached; try again in a few seconds", retryAfterSeconds: 5)

    /// The node that holds the game's matchmaking queue does not answer (another node takes the queue over once
    /// the database no longer sees it alive).
    static let queueNodeUnavailable = APIError(
        .serverNodeUnavailable,
        "the server that holds this game's matchmaking queue does not answer; another takes it over within \(NodeRegistry.healthyWithinMillis / 1000 + 1) s — try again then",
        retryAfterSeconds: Int(NodeRegistry.healthyWithinMillis / 1000) + 1)

    /// The node that holds the game's matchmaking queue listens on every address without a `--public-url`: the
    /// other nodes do not know where to reach it.
    static func queueNodeUnreachable(_ nodeID: String) -> APIError {
        APIError(
            .serverNodeUnavailable,
            "the server that holds this game's matchmaking queue (node \(nodeID)) cannot be reached by the others: its operator must give it --public-url",
            retryAfterSeconds: 60)
    }
}
