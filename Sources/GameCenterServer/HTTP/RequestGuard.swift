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
        case .head:
            reading = .body
            responsesOwed += 1
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
        let part = unwrapOutboundIn(data)
        switch part {
        case .head(let head) where head.status == .badRequest && upgradeRefusal != nil:
            // Hummingbird's bare answer to a failed upgrade: the real one goes instead (its end follows).
            let answer = upgradeRefusal!
            upgradeRefusal = nil
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
        default:
            break
        }
        context.write(data, promise: promise)
        switch part {
        case .end:
            responsesOwed -= 1
            if responsesOwed == 0, reading == .nothing { closeAfter(limits.idleTimeout, context: context) }
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
        guard let error = error as? HTTPParserError else {
            context.fireErrorCaught(error)
            return
        }
        refused = true
        guard responsesOwed == 0 else {
            // A request being answered broke off (a bad chunk in its body): no second answer can follow.
            context.close(promise: nil)
            return
        }
        writeAnswer(error == .headerOverflow ? .headersTooLarge : .malformedRequest, context: context, promise: nil)
        let channel = context.channel
        context.writeAndFlush(wrapOutboundOut(.end(nil))).whenComplete { _ in channel.close(mode: .output, promise: nil) }
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
