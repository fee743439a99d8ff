import Foundation
import GameCenterProtocol
import Hummingbird
import HummingbirdWebSocket
import Logging
import NIOCore

/// The per-request context: who is calling (device and, once authenticated, session) plus Hummingbird's core.
public struct AppRequestContext: RequestContext, RemoteAddressRequestContext, WebSocketRequestContext {
    public var coreContext: CoreRequestContextStorage
    /// Hummingbird's hook for upgrading `/v1/realtime` to a WebSocket.
    public let webSocket: WebSocketHandlerReference<Self>
    /// The game and environment the device named; set by ``DeviceMiddleware``.
    var device: DeviceIdentity?
    /// The signed-in session; set by ``AuthenticationMiddleware``.
    var session: AuthenticatedSession?
    /// The studio's game server a server-key token proved; set by ``ServerKeyMiddleware``.
    var serverCaller: ServerCaller?

    /// The connection the request came on (its peer is read only when asked for).
    private let channel: any Channel

    public init(source: Source) {
        self.coreContext = .init(source: source)
        self.webSocket = .init()
        self.channel = source.channel
    }

    /// The connection's peer: the client address sign-ins are throttled by; nil for in-process test requests.
    public var remoteAddress: SocketAddress? { channel.remoteAddress }

    /// Closes the connection at once, without a goodbye: for a peer that stopped reading, whose writes cannot finish.
    func closeConnection() {
        channel.close(promise: nil)
    }

    /// Makes the connection's ``RequestGuard`` answer a refused WebSocket upgrade with `error` (Hummingbird
    /// would answer a bare `400`); does nothing on connections without one (in-process test requests).
    func refuseUpgrade(with error: APIError) async {
        let channel = self.channel
        try? await channel.eventLoop.submit {
            try channel.pipeline.syncOperations.handler(type: RequestGuard.self).answerRefusedUpgrade(with: error)
        }.get()
    }

    /// Request bodies larger than this are refused with `request.body_too_large`.
    public var maxUploadSize: Int { Limits.maximumRequestBodyBytes }
    /// Wire JSON (dates as seconds since 1970); failures name the field and what it allows.
    public var requestDecoder: WireRequestDecoder { WireRequestDecoder(json: Self.decoder) }
    /// Wire JSON (dates as seconds since 1970).
    public var responseEncoder: JSONEncoder { Self.encoder }

    private static let decoder = WireCoding.makeDecoder()
    private static let encoder = WireCoding.makeEncoder()

    /// The device identity, or the error every device route answers without one.
    func requireDevice() throws -> DeviceIdentity {
        guard let device else { throw APIError.gameRequired }
        return device
    }

    /// The game server behind a game-server route, or `key.required`.
    func requireServerCaller() throws -> ServerCaller {
        guard let serverCaller else { throw APIError.keyRequired }
        return serverCaller
    }

    /// The authenticated session, or `notAuthenticated`.
    func requireSession() throws -> AuthenticatedSession {
        guard let session else { throw APIError.notAuthenticated }
        return session
    }
}

extension Parameters {
    /// The `{playerID}` of a route's path, percent-decoded: a client may send `G%3A…` for `G:…`.
    func requirePlayerID() throws -> String {
        let text = try require("playerID")
        return text.removingPercentEncoding ?? text
    }
}
