import AsyncHTTPClient
import Foundation
import GameCenterProtocol
import NIOCore
import NIOHTTP1

/// JSON over HTTP to the server, with the device's identifying headers and errors mapped to ``GKError``.
struct APIClient: Sendable {
    let server: URL
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

    /// Sends an already encoded JSON body.
    func send<Response: Decodable>(
        _ method: HTTPMethod, _ path: String, json: Data?, token: String?, as: Response.Type = Response.self
    ) async throws -> Response {
        var request = HTTPClientRequest(url: server.absoluteString.trimmingSuffix("/") + path)
        request.method = method
        request.headers.add(contentsOf: deviceHeaders(token: token))
        if let json {
            request.headers.add(name: "Content-Type", value: "application/json")
            request.body = .bytes(ByteBuffer(bytes: json))
        }
        let response: HTTPClientResponse
        let bytes: ByteBuffer
        do {
            response = try await Self.execute(request, timeout: timeout)
            bytes = try await response.body.collect(upTo: 16 * 1024 * 1024)
        } catch {
            throw GKError(.communicationsFailure, "could not reach the Game Center server at \(server.absoluteString): \(error)")
        }
        let data = Data(bytes.readableBytesView)
        guard (200..<300).contains(response.status.code) else {
            if let body = try? WireCoding.makeDecoder().decode(ErrorBody.self, from: data) {
                throw GKError(body)
            }
            throw GKError(.unknown, "the server answered HTTP \(response.status.code) without an error description")
        }
        if Response.self == Empty.self { return Empty() as! Response }
        if Response.self == Data.self { return data as! Response }
        do {
            return try WireCoding.makeDecoder().decode(Response.self, from: data)
        } catch {
            throw GKError(.unknown, "the server's answer could not be read: \(error)")
        }
    }

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
