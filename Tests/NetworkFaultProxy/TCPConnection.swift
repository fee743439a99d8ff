import NIOCore
import NIOPosix

/// One proxied TCP connection: the accepted client channel, its upstream channel, and the bytes held in between.
///
/// Confined to the client channel's event loop (the upstream channel is created on the same loop); other threads
/// reach it only through `NIOLoopBound`. Each direction is a queue of chunks with the time each may be written,
/// so delays never reorder bytes within a direction.
final class TCPConnection {
    /// The peer a chunk came from.
    enum Side {
        /// The accepted connection (the SDK under test).
        case client
        /// The upstream connection to the target (the real server).
        case server
    }

    /// Chunks read from one side and not yet written to the other, each with the time it may be written.
    private final class Lane {
        /// Held chunks, oldest first; their deadlines never decrease.
        var pending = CircularBuffer<(deadline: NIODeadline, bytes: ByteBuffer)>()
        /// The timer that writes the oldest held chunk, while one is set.
        var wakeUp: Scheduled<Void>?
        /// The deadline of the latest chunk queued, so a later chunk never overtakes it.
        var lastDeadline = NIODeadline.uptimeNanoseconds(0)
        /// The most recent write to the other side; it completes after every earlier one.
        var lastWrite: EventLoopFuture<Void>?
        /// Set when the source side has closed: close the other side once everything held was written.
        var closeTargetWhenDrained = false

        /// Drops every held chunk and stops the timer (the "loss" of a cut connection); returns the bytes dropped.
        func discard() -> Int {
            wakeUp?.cancel()
            wakeUp = nil
            let bytes = pending.reduce(0) { $0 + $1.bytes.readableBytes }
            pending.removeAll()
            return bytes
        }
    }

    /// The id the core registers this connection under.
    private let id: Int
    /// Bytes after which the connection is cut, or nil for no limit.
    private let byteLimit: Int?
    /// The accepted client channel; it does not read until the upstream channel is connected.
    private let client: any Channel
    /// The proxy's shared state.
    private let core: TCPProxyCore
    /// The upstream channel, once connected.
    private var server: (any Channel)?
    /// Bytes forwarded so far, both directions together.
    private var bytesPassed = 0
    /// Set once the connection is cut, stopped or closing: nothing more is read into the lanes.
    private var isOver = false
    /// Client-to-server chunks.
    private let fromClient = Lane()
    /// Server-to-client chunks.
    private let fromServer = Lane()

    /// Creates the connection for an accepted `client` channel; call `connectUpstream` next.
    init(id: Int, byteLimit: Int?, client: any Channel, core: TCPProxyCore) {
        self.id = id
        self.byteLimit = byteLimit
        self.client = client
        self.core = core
    }

    /// Opens the upstream connection on the client's event loop and starts reading the client once it is up.
    func connectUpstream(host: String, port: Int) {
        let bound = NIOLoopBound(self, eventLoop: client.eventLoop)
        ClientBootstrap(group: client.eventLoop)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(
                        TCPRelayHandler(connection: bound.value, side: .server)
                    )
                }
            }
            .connect(host: host, port: port)
            .assumeIsolated()
            .whenComplete { result in
                self.upstreamConnected(result)
            }
    }

    /// Finishes the connect: aborts the client if the target is unreachable, else lets the client's bytes flow.
    private func upstreamConnected(_ result: Result<any Channel, any Error>) {
        switch result {
        case .failure:
            isOver = true
            core.remove(id, asCut: false)
            client.abort()
        case .success(let channel):
            guard !isOver else {
                channel.abort()
                return
            }
            server = channel
            client.setOption(ChannelOptions.autoRead, value: true).whenFailure { _ in
                channel.abort()
            }
        }
    }

    /// Handles a chunk read from `side`: drops it (black hole), cuts the connection at its byte limit, or queues it.
    func received(_ bytes: ByteBuffer, from side: Side) {
        guard !isOver, let delay = core.delayForChunk(of: bytes.readableBytes) else { return }
        bytesPassed += bytes.readableBytes
        if let byteLimit, bytesPassed >= byteLimit {
            core.discarded(bytes.readableBytes, wereHeld: false)
            core.remove(id, asCut: true)
            abort()
            return
        }
        forward(bytes, from: side, after: delay)
    }

    /// Handles the close of `side`: drops what was heading to it, delivers what came from it, then closes the other.
    func peerClosed(_ side: Side) {
        guard !isOver else { return }
        isOver = true
        core.remove(id, asCut: false)
        core.discarded(lane(toward: side).discard(), wereHeld: true)
        let lane = lane(from: side)
        lane.closeTargetWhenDrained = true
        if lane.pending.isEmpty, let target = destination(ofChunksFrom: side) {
            Self.close(target, after: lane.lastWrite)
        }
    }

    /// Cuts the connection: discards every held chunk and resets both channels.
    func abort() {
        isOver = true
        core.discarded(fromClient.discard() + fromServer.discard(), wereHeld: true)
        client.abort()
        server?.abort()
    }

    /// Cuts the connection and returns a future that completes once both channels are closed.
    func abortAndWait() -> EventLoopFuture<Void> {
        abort()
        guard let server else { return client.closeFuture }
        return client.closeFuture.and(server.closeFuture).map { _ in }
    }

    /// Queues `bytes` for the other side at max(now + delay, the previous chunk's time), or writes it at once.
    private func forward(_ bytes: ByteBuffer, from side: Side, after delay: TimeAmount) {
        // Cut by `cutAllConnections`, whose reset may not have run yet: what is read now is lost with the connection.
        guard !core.wasCut(id) else {
            core.discarded(bytes.readableBytes, wereHeld: false)
            return
        }
        guard let target = destination(ofChunksFrom: side) else { return }
        let lane = lane(from: side)
        if delay == .zero, lane.pending.isEmpty {
            lane.lastWrite = target.writeAndFlush(bytes)
            return
        }
        let deadline = max(NIODeadline.now() + delay, lane.lastDeadline)
        lane.lastDeadline = deadline
        lane.pending.append((deadline: deadline, bytes: bytes))
        core.held(bytes.readableBytes)
        if lane.wakeUp == nil {
            schedulePump(of: lane, from: side, at: deadline)
        }
    }

    /// Writes every chunk of `lane` that is due, then re-arms the timer or finishes a pending close.
    private func pump(_ lane: Lane, from side: Side) {
        lane.wakeUp = nil
        guard let target = destination(ofChunksFrom: side) else { return }
        let now = NIODeadline.now()
        var wrote = false
        while let first = lane.pending.first, first.deadline <= now {
            lane.pending.removeFirst()
            core.held(-first.bytes.readableBytes)
            lane.lastWrite = target.write(first.bytes)
            wrote = true
        }
        if wrote { target.flush() }
        if let next = lane.pending.first {
            schedulePump(of: lane, from: side, at: next.deadline)
        } else if lane.closeTargetWhenDrained {
            Self.close(target, after: lane.lastWrite)
        }
    }

    /// Arms `lane`'s timer for `deadline`.
    private func schedulePump(of lane: Lane, from side: Side, at deadline: NIODeadline) {
        lane.wakeUp = client.eventLoop.assumeIsolated().scheduleTask(deadline: deadline) {
            self.pump(lane, from: side)
        }
    }

    /// The lane carrying chunks read from `side`.
    private func lane(from side: Side) -> Lane {
        side == .client ? fromClient : fromServer
    }

    /// The lane carrying chunks written to `side`.
    private func lane(toward side: Side) -> Lane {
        side == .client ? fromServer : fromClient
    }

    /// The channel that chunks read from `side` are written to (nil while the upstream is connecting).
    private func destination(ofChunksFrom side: Side) -> (any Channel)? {
        side == .client ? server : client
    }

    /// Closes `channel` in an orderly way once `lastWrite` (and so every earlier write) has completed.
    private static func close(_ channel: any Channel, after lastWrite: EventLoopFuture<Void>?) {
        guard let lastWrite else {
            channel.close(promise: nil)
            return
        }
        lastWrite.whenComplete { _ in channel.close(promise: nil) }
    }
}
