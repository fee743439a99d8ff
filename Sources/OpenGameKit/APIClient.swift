import AsyncHTTPClient
import Foundation
import GameCenterProtocol
import NIOCore
import NIOHTTP1

/// JSON over HTTP to the server, with the device's identifying headers and errors mapped to ``GKError``.
struct APIClient: Sendable {
    /// The servers the device may use; requests go to the current one.
    let servers: ServerList
    /// Whether the device was given a server at all: without one every request fails with `notSupported`.
    let hasServer: Bool
    let bundleID: String
    let clientKey: String?
    let environment: GKEnvironment
    let locale: String
    /// Per-request deadline.
    var timeout: TimeAmount = .seconds(15)

    /// A request body type for requests that have none.
    struct NoBody: Encodable {}
    /// A response type for responses whose body is ignored.
    struct Empty: Decodable {}

    func send<Response: Decodable>(
        _ method: HTTPMethod, _ path: String, body: (some Encodable)? = NoBody?.none, token: String? = nil,
        as: Response.Type = Response.self
    ) async throws -> Response {
        try await send(method, path, json: try body.map { try WireCoding.makeEncoder().encode($0) }, token: token, as: Response.self)
    }

    /// Sends an already encoded JSON body, with `headers` besides the device's.
    func send<Response: Decodable>(
        _ method: HTTPMethod, _ path: String, json: Data?, token: String?, headers: [(String, String)] = [], as: Response.Type = Response.self
    ) async throws -> Response {
        try await send(method, path, body: json.map { ("application/json", $0) }, token: token, headers: headers, as: Response.self)
    }

    /// Sends raw bytes (`application/octet-stream`), with `headers` besides the device's.
    func send<Response: Decodable>(
        _ method: HTTPMethod, _ path: String, bytes: Data, token: String?, headers: [(String, String)] = [], as: Response.Type = Response.self
    ) async throws -> Response {
        try await send(method, path, body: ("application/octet-stream", bytes), token: token, headers: headers, as: Response.self)
    }

    private func send<Response: Decodable>(
        _ method: HTTPMethod, _ path: String, body: (contentType: String, bytes: Data)?, token: String?, headers: [(String, String)] = [],
        as: Response.Type
    ) async throws -> Response {
        let (response, bytes) = try await exchange(method, path, body: body, token: token, headers: headers)
        let data = Data(bytes.readableBytesView)
        guard (200..<300).contains(response.status.code) else {
            if let body = try? WireCoding.makeDecoder().decode(ErrorBody.self, from: data) {
                throw GKError(body)
            }
            throw Self.notGameCenterAnswer(status: response.status.code, from: server)
        }
        if Response.self == Empty.self { return Empty() as! Response }
        if Response.self == Data.self { return data as! Response }
        do {
            return try WireCoding.makeDecoder().decode(Response.self, from: data)
        } catch {
            guard response.headers.first(name: "Content-Type")?.contains("json") == true else {
                throw Self.notGameCenterAnswer(status: response.status.code, from: server)
            }
            throw GKError(.unknown, "the server's answer could not be read: \(error)")
        }
    }

    /// The error for an answer that is not a Game Center server's (no Game Center error body, or no JSON at all):
    /// a proxy's or gateway's failure (5xx, 429) is `communicationsFailure` — the server is not reachable now, try
    /// again — and anything else `notSupported`: what answers at that address is not a Game Center server.
    static func notGameCenterAnswer(status: UInt, from server: URL) -> GKError {
        if status >= 500 || status == 429 {
            return GKError(
                .communicationsFailure,
                "the Game Center server at \(server.absoluteString) is not reachable now (HTTP \(status) from something in front of it); try again later")
        }
        return GKError(
            .notSupported,
            "what answers at \(server.absoluteString) (HTTP \(status)) is not a Game Center server; check the server URL the game is given")
    }

    /// The answer to one request, from the current server, or from the next ones when a server cannot be reached at
    /// all (nothing was sent to it, so any request may go to another).
    private func exchange(
        _ method: HTTPMethod, _ path: String, body: (contentType: String, bytes: Data)?, token: String?, headers: [(String, String)]
    ) async throws -> (HTTPClientResponse, ByteBuffer) {
        guard hasServer else { throw Self.noServer }
        var attempts = 0
        while true {
            let server = servers.current
            var request = HTTPClientRequest(url: server.absoluteString.trimmingSuffix("/") + path)
            request.method = method
            request.headers.add(contentsOf: deviceHeaders(token: token))
            request.headers.add(contentsOf: headers)
            if let body {
                request.headers.add(name: "Content-Type", value: body.contentType)
                request.body = .bytes(ByteBuffer(bytes: body.bytes))
            }
            do {
                let response = try await Self.execute(request, timeout: timeout)
                return (response, try await response.body.collect(upTo: 16 * 1024 * 1024))
            } catch {
                attempts += 1
                if ServerList.isConnectionFailure(error) {
                    servers.unreachable(server)
                    if attempts < servers.urls.count { continue }
                }
                throw GKError(.communicationsFailure, "could not reach the Game Center server at \(server.absoluteString): \(error)")
            }
        }
    }

    /// The error of every request of a device given no server.
    static let noServer = GKError(
        .notSupported,
        "no Game Center server is configured for this game: set GAMECENTER_URL (for example http://127.0.0.1:8080) or make the GKGameCenter with its server's URL"
    )

    /// The server requests go to now.
    var server: URL { servers.current }

    /// Sends `request`. A kept-alive connection the server had already closed (it restarted, or timed the connection
    /// out) fails before the request reached it: an idempotent request is then sent once more, on a new connection.
    private static func execute(_ request: HTTPClientRequest, timeout: TimeAmount) async throws -> HTTPClientResponse {
        do {
            return try await http.execute(request, timeout: timeout)
        } catch let error as HTTPClientError where error == .remoteConnectionClosed && idempotentMethods.contains(request.method) {
            return try await http.execute(request, timeout: timeout)
        }
    }

    /// The methods that may be sent twice with the effect of once.
    private static let idempotentMethods: [HTTPMethod] = [.GET, .HEAD, .PUT, .DELETE, .OPTIONS]

    /// One HTTP client for every device of the process. A refused connection fails at once (the default client
    /// retries until the request's deadline): a game must learn quickly that the server is down.
    static let http: HTTPClient = {
        var configuration = HTTPClient.Configuration()
        configuration.timeout.connect = .seconds(5)
        configuration.connectionPool.retryConnectionEstablishment = false
        return HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
    }()

    /// Headers naming the device's game, environment, key and locale (and its session, when given), with the
    /// device's clock (the server dates reports by it).
    func deviceHeaders(token: String?) -> [(String, String)] {
        var headers = [
            (DeviceHeader.bundleID, bundleID),
            (DeviceHeader.environment, environment.rawValue),
            (DeviceHeader.locale, locale),
            (DeviceHeader.deviceTime, String(Date().timeIntervalSince1970)),
        ]
        if let clientKey { headers.append((DeviceHeader.clientKey, clientKey)) }
        if let token { headers.append(("Authorization", "Bearer \(token)")) }
        return headers
    }
}

extension String {
    func trimmingSuffix(_ suffix: String) -> String {
        hasSuffix(suffix) ? String(dropLast(suffix.count)) : self
    }
}
