import NIOCore
import NIOHTTP1

/// Sits right after every connection's HTTP/1 parser (until a WebSocket upgrade, when it leaves): closes a
/// connection whose request is too slow to arrive or that stays idle, and answers what the parser refuses.
///
/// Hummingbird's HTTP/1 + WebSocket channel turns off NIO's parser-error handling and only handles parser errors
/// itself once a first request has been handed to it: a first request the parser refused got no answer and its
/// connection stayed open. And it has no deadline before that first request, so a connection could trickle a
/// request head forever (each one holding a file descriptor).
///
/// It also answers the requests the ``UpgradeHeaderFilter`` refuses (``RefusedRequest``), a request whose body
/// framing breaks before its answer began (a bad chunk size), and a WebSocket upgrade on a route that is not one
/// (Hummingbird's bare `400`), each with the JSON error body.
///
/// Deadlines: a request's line and headers must arrive within ``GameCenterApp/ConnectionLimits/headerTimeout`` of
/// their first byte (for a new connection, of its opening), its body within
/// ``GameCenterApp/ConnectionLimits/bodyTimeout`` of the headers, and a connection with no request after its last
/// response is closed after ``GameCenterApp/ConnectionLimits/idleTimeout``. None runs while a response is owed.
final class RequestGuard: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart
    typealias OutboundIn = HTTPServerResponsePart
    typealias OutboundOut = HTTPServerResponsePart

    /// How long a refused request's remaining bytes are read and dropped after the answer, so that closing a
    /// connection with unread bytes does not reset it before the client has read the answer.
    static let drainTime = TimeAmount.seconds(2)

    private enum Reading { case nothing, head, body }

    private let limits: GameCenterApp.ConnectionLimits
    private var reading = Reading.head
    private var responsesOwed = 0
    private var readParts = false
    private var refused = false
    /// The request being answered asked for a WebSocket upgrade.
    private var upgradeRequested = false
    /// The head of the oldest answer owed has been written.
    private var answerStarted = false
    /// A refusal to answer once the answers owed before it are written.
    private var pendingRefusal: RefusedRequest?
    /// The route's answer to a request already refused is dropped.
    private var droppingAnswer = false
    private var upgraded = false
    /// The answer to write in place of Hummingbird's bare `400` for a refused WebSocket upgrade.
    private var upgradeRefusal: APIError?
    private var deadline: Scheduled<Void>?

    /// A guard with these deadlines.
    init(limits: GameCenterApp.ConnectionLimits) {
        self.limits = limits
    }

    func handlerAdded(context: ChannelHandlerContext) {
        closeAfter(limits.headerTimeout, context: context)
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        deadline?.cancel()
        deadline = nil
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if upgraded {
            context.fireChannelRead(data)
            return
        }
        readParts = true
        switch unwrapInboundIn(data) {
        case .head(let head):
            reading = .body
            responsesOwed += 1
            upgradeRequested = head.headers["upgrade"].contains { $0.lowercased() == "websocket" }
            closeAfter(limits.bodyTimeout, context: context)
        case .body:
            break
        case .end:
            reading = .nothing
            if responsesOwed > 0 { cancelDeadline() } else { closeAfter(limits.idleTimeout, context: context) }
        }
        context.fireChannelRead(data)
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        // Bytes that made no part yet begin the next request's head.
        if !readParts, reading == .nothing, !refused {
            reading = .head
            closeAfter(limits.headerTimeout, context: context)
        }
        readParts = false
        context.fireChannelReadComplete()
    }

    /// Answers the refused WebSocket upgrade under way with `error` (see ``UpgradeRefusalMiddleware``).
    func answerRefusedUpgrade(with error: APIError) {
        upgradeRefusal = error
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if upgraded {
            context.write(data, promise: promise)
            return
        }
        if droppingAnswer {
            promise?.fail(ChannelError.outputClosed)
            return
        }
        let part = unwrapOutboundIn(data)
        switch part {
        case .head(let head) where head.status == .badRequest && (upgradeRefusal != nil || upgradeRequested):
            // Hummingbird's bare answer to a failed upgrade: the real one goes instead (its end follows).
            let answer = upgradeRefusal ?? .notAWebSocketRoute
            upgradeRefusal = nil
            answerStarted = true
            writeAnswer(answer, context: context, promise: promise)
            return
        case .head(let head) where head.status == .switchingProtocols:
            // The connection now speaks WebSocket: no deadline applies and no HTTP parts come here any more. Leaving
            // the pipeline inside this write loses the upgrade's flush (the 101 never left), so the guard steps aside
            // at once and leaves once the 101 is written.
            upgraded = true
            cancelDeadline()
            let written = promise ?? context.eventLoop.makePromise()
            context.write(data, promise: written)
            written.futureResult.hop(to: context.eventLoop).assumeIsolated().whenComplete { _ in
                context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
            }
            return
        case .head:
            answerStarted = true
        default:
            break
        }
        context.write(data, promise: promise)
        switch part {
        case .end:
            responsesOwed -= 1
            answerStarted = false
            if responsesOwed == 0, let refusal = pendingRefusal {
                pendingRefusal = nil
                answer(refusal, context: context)
            } else if responsesOwed == 0, reading == .nothing {
                closeAfter(limits.idleTimeout, context: context)
            }
        default:
            break
        }
    }

    /// Writes the head and body of `answer`, saying the connection closes; the caller writes the end.
    private func writeAnswer(_ answer: APIError, context: ChannelHandlerContext, promise: EventLoopPromise<Void>?) {
        let body = answer.encodedBody
        var headers = HTTPHeaders()
        headers.add(name: "Content-Type", value: "application/json; charset=utf-8")
        headers.add(name: "Content-Length", value: String(body.readableBytes))
        headers.add(name: "Connection", value: "close")
        if let retry = answer.retryAfterSeconds { headers.add(name: "Retry-After", value: String(retry)) }
        let status = HTTPResponseStatus(statusCode: answer.status.code, reasonPhrase: answer.status.reasonPhrase)
        context.write(wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: status, headers: headers))), promise: nil)
        context.write(wrapOutboundOut(.body(.byteBuffer(body))), promise: promise)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if refused { return }
        let refusal: RefusedRequest
        switch error {
        case let error as RefusedRequest:
            refusal = error
        case let error as HTTPParserError:
            refusal = RefusedRequest(
                answer: error == .headerOverflow ? .headersTooLarge : reading == .body ? .malformedBodyFraming : .malformedRequest)
        default:
            context.fireErrorCaught(error)
            return
        }
        refused = true
        if responsesOwed == 0 {
            answer(refusal, context: context)
        } else if error is RefusedRequest {
            // A refused request pipelined behind others: answered after theirs (the filter kept it from the routes).
            pendingRefusal = refusal
        } else if responsesOwed == 1, !answerStarted {
            // The body of the request being answered broke off before its answer began: the refusal is its answer,
            // and whatever the route answers later is dropped.
            droppingAnswer = true
            answer(refusal, context: context)
        } else {
            // An answer is under way: no second one can follow.
            context.close(promise: nil)
        }
    }

    /// Answers `refusal`, closes the connection's output and reads (and drops) what the client still sends for a
    /// while, so that the client reads the answer before the connection closes.
    private func answer(_ refusal: RefusedRequest, context: ChannelHandlerContext) {
        let channel = context.channel
        if refusal.pastTheEncoder, let socket = try? context.pipeline.syncOperations.context(handlerType: WriteDeadline.self) {
            socket.writeAndFlush(NIOAny(refusal.answer.closingHTTPResponse)).whenComplete { _ in channel.close(mode: .output, promise: nil) }
        } else {
            writeAnswer(refusal.answer, context: context, promise: nil)
            context.writeAndFlush(wrapOutboundOut(.end(nil))).whenComplete { _ in channel.close(mode: .output, promise: nil) }
        }
        closeAfter(Self.drainTime, context: context)
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if refused, let event = event as? ChannelEvent, event == .inputClosed {
            context.close(promise: nil)
            return
        }
        context.fireUserInboundEventTriggered(event)
    }

    private func closeAfter(_ delay: Duration, context: ChannelHandlerContext) {
        closeAfter(TimeAmount(delay), context: context)
    }

    private func closeAfter(_ delay: TimeAmount, context: ChannelHandlerContext) {
        deadline?.cancel()
        let channel = context.channel
        deadline = context.eventLoop.scheduleTask(in: delay) { channel.close(promise: nil) }
    }

    private func cancelDeadline() {
        deadline?.cancel()
        deadline = nil
    }
}
