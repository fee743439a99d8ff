import Foundation
import NIOCore
import NIOHTTP1

/// Sits between every connection's HTTP/1 parser and its ``RequestGuard`` until a WebSocket upgrade is asked for:
/// makes every request head one that swift-nio's upgrade handler answers.
///
/// That handler forgets the request head when a request asks for an upgrade no upgrader takes, so the request got no
/// answer at all: `Upgrade: h2c` (what `curl --http2` sends), a WebSocket upgrade without a key or with another
/// version. Here:
/// - upgrades to anything but WebSocket are ignored (the request is served over HTTP/1.1, as RFC 9113 allows for
///   `h2c`): their names leave `Upgrade` and `Connection`, and `HTTP2-Settings` goes;
/// - a WebSocket upgrade must be a `GET` with `Connection: Upgrade`, one `Sec-WebSocket-Key` of 16 bytes in base64
///   and `Sec-WebSocket-Version: 13` (RFC 6455); another is refused with `400`;
/// - `CONNECT` is refused with `405` (the server is no proxy).
///
/// A refusal reaches the ``RequestGuard`` as a ``RefusedRequest`` error, which answers it and closes the
/// connection; the refused request's parts go no further.
final class UpgradeHeaderFilter: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart

    private var refused = false

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !refused else { return }
        guard case .head(var head) = unwrapInboundIn(data) else {
            context.fireChannelRead(data)
            return
        }
        switch Self.filter(&head) {
        case .refuse(let error, let pastTheEncoder):
            refused = true
            context.fireErrorCaught(RefusedRequest(answer: error, pastTheEncoder: pastTheEncoder))
        case .pass:
            context.fireChannelRead(wrapInboundOut(.head(head)))
            // After a WebSocket upgrade head come WebSocket bytes, or nothing (a refused upgrade closes the
            // connection): the filter's work on this connection is done.
            if head.headers["upgrade"].first == "websocket" {
                context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
            }
        }
    }

    /// What becomes of a request head.
    enum Outcome: Equatable {
        /// Passed on (perhaps with upgrade headers removed).
        case pass
        /// Answered with this error (written as bytes, past the HTTP encoder, when it would drop the body); the
        /// connection closes.
        case refuse(APIError, pastTheEncoder: Bool = false)

        static func == (lhs: Outcome, rhs: Outcome) -> Bool {
            switch (lhs, rhs) {
            case (.pass, .pass): true
            case (.refuse(let a, let aRaw), .refuse(let b, let bRaw)): a.code == b.code && a.message == b.message && aRaw == bRaw
            default: false
            }
        }
    }

    /// Removes the upgrades no upgrader takes from `head`, or says why the request is refused.
    static func filter(_ head: inout HTTPRequestHead) -> Outcome {
        if head.method == .CONNECT { return .refuse(.connectNotAllowed, pastTheEncoder: true) }
        let upgrades = tokens(head.headers, "upgrade")
        guard !upgrades.isEmpty else { return .pass }
        guard upgrades.contains(where: { $0.lowercased() == "websocket" }) else {
            head.headers.remove(name: "upgrade")
            head.headers.remove(name: "http2-settings")
            let connection = tokens(head.headers, "connection").filter { !["upgrade", "http2-settings"].contains($0.lowercased()) }
            head.headers.remove(name: "connection")
            if !connection.isEmpty { head.headers.add(name: "connection", value: connection.joined(separator: ", ")) }
            return .pass
        }
        head.headers.replaceOrAdd(name: "upgrade", value: "websocket")
        let keys = head.headers["sec-websocket-key"]
        guard head.method == .GET, tokens(head.headers, "connection").contains(where: { $0.lowercased() == "upgrade" }),
            keys.count == 1, Data(base64Encoded: keys[0].trimmingCharacters(in: .whitespaces))?.count == 16,
            tokens(head.headers, "sec-websocket-version") == ["13"]
        else { return .refuse(.invalidWebSocketUpgrade) }
        return .pass
    }

    /// The comma-separated values of every `name` header, trimmed, without empty ones.
    private static func tokens(_ headers: HTTPHeaders, _ name: String) -> [String] {
        headers[name].flatMap { $0.split(separator: ",") }.map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    }
}

/// A request refused before any route saw it, with its answer (see ``UpgradeHeaderFilter``).
struct RefusedRequest: Error {
    /// What the client is told.
    let answer: APIError
    /// The answer is written as bytes, past swift-nio's HTTP encoder: it sends no body in an answer to `CONNECT`.
    var pastTheEncoder = false
}

extension APIError {
    /// `CONNECT`: the server is no proxy.
    static let connectNotAllowed = APIError(.requestMethodNotAllowed, "CONNECT is not allowed: this server is not a proxy")

    /// A WebSocket upgrade request RFC 6455 does not allow.
    static let invalidWebSocketUpgrade = APIError(
        .requestMalformed,
        "a WebSocket upgrade must be a GET with Connection: Upgrade, one Sec-WebSocket-Key (16 bytes in base64) and Sec-WebSocket-Version: 13"
    )

    /// A WebSocket upgrade on a route that is not a WebSocket.
    static let notAWebSocketRoute = APIError(
        .requestMalformed, "this route does not take a WebSocket upgrade; the WebSockets are /v1/realtime and /v1/matches/{matchID}/relay")

    /// A request body whose framing is not HTTP/1.1's.
    static let malformedBodyFraming = APIError(
        .requestMalformed, "the request body's framing is not valid HTTP/1.1: Transfer-Encoding must end in chunked, with hexadecimal chunk sizes")
}
