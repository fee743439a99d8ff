import NIOCore

#if canImport(Darwin)
import Darwin
#else
import Glibc
#endif

/// First in every connection's pipeline (next to the socket, so it stays through a WebSocket upgrade): closes a
/// connection whose peer stops taking what the server writes.
///
/// A client that pipelines requests, or holds a realtime channel or a relay connection, and never reads would
/// otherwise keep its connection, and everything queued for it, as long as it liked. When bytes wait to be written
/// and the socket has taken none of them for ``GameCenterApp/ConnectionLimits/writeTimeout``, the connection is
/// reset (SO_LINGER 0: the kernel drops what it still holds for the peer, megabytes on a fast network, and the peer
/// sees the end at once rather than behind bytes it will never read). A slow reader that keeps reading is never
/// closed; nothing runs while nothing waits.
///
/// The check costs one addition per write and one timer per timeout while bytes wait: no promise per write.
final class WriteDeadline: ChannelOutboundHandler, RemovableChannelHandler {
    typealias OutboundIn = IOData
    typealias OutboundOut = IOData

    private let timeout: TimeAmount
    /// Bytes handed to the socket's write buffer since the connection opened.
    private var enqueued = 0
    /// Bytes the socket had taken when the check was scheduled.
    private var writtenAtLastCheck = 0
    private var check: Scheduled<Void>?

    /// A deadline of `timeout` without progress.
    init(timeout: Duration) {
        self.timeout = TimeAmount(timeout)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        switch unwrapOutboundIn(data) {
        case .byteBuffer(let buffer): enqueued &+= buffer.readableBytes
        case .fileRegion(let region): enqueued &+= region.readableBytes
        }
        context.write(data, promise: promise)
    }

    func flush(context: ChannelHandlerContext) {
        context.flush()
        if check == nil { scheduleCheck(context: context) }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        check?.cancel()
        check = nil
    }

    func close(context: ChannelHandlerContext, mode: CloseMode, promise: EventLoopPromise<Void>?) {
        if mode == .all {
            check?.cancel()
            check = nil
        }
        context.close(mode: mode, promise: promise)
    }

    /// Bytes the socket has taken so far, or nil when none wait (the connection keeps up).
    private func writtenWhileWaiting(context: ChannelHandlerContext) -> Int? {
        let waiting = (try? context.channel.syncOptions?.getOption(ChannelOptions.bufferedWritableBytes)) ?? 0
        return waiting > 0 ? enqueued &- waiting : nil
    }

    private func scheduleCheck(context: ChannelHandlerContext) {
        guard let written = writtenWhileWaiting(context: context) else { return }
        writtenAtLastCheck = written
        let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        check = context.eventLoop.scheduleTask(in: timeout) {
            let (handler, context) = loopBound.value
            handler.check = nil
            handler.checkProgress(context: context)
        }
    }

    private func checkProgress(context: ChannelHandlerContext) {
        guard let written = writtenWhileWaiting(context: context) else { return }
        if written == writtenAtLastCheck {
            let channel = context.channel
            guard let socket = channel as? any SocketOptionProvider else { return context.close(promise: nil) }
            socket.setSoLinger(linger(l_onoff: 1, l_linger: 0)).whenComplete { _ in channel.close(promise: nil) }
        } else {
            scheduleCheck(context: context)
        }
    }
}
