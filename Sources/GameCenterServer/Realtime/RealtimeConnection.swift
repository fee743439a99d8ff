import Foundation
import GameCenterProtocol
import GameCenterStorage
import HummingbirdWebSocket
import Logging
import ServiceLifecycle
import Synchronization

/// One device's realtime channel: the player's event stream (``PlayerEventStream``) as WebSocket frames — stored
/// events after the device's cursor, then new ones as they are appended — with heartbeats both ways, ending when the
/// session ends.
///
/// A device that stops reading cannot hold the channel: a frame not written within ``writeTimeout`` (three heartbeat
/// intervals, at least 10 s) closes the connection at the next heartbeat beat, so the heartbeat check and the server's
/// shutdown never wait on it.
///
/// Memory per channel is what bounds a server's devices, so the channel's long-lived task keeps shallow: storage is
/// read and frames are written in short-lived tasks, and a write is watched by the ticker's beat rather than by a
/// timer task of its own.
struct RealtimeConnection {
    let database: Database
    let bus: any EventBus
    let session: AuthenticatedSession
    let presence: any ChannelPresence
    /// Wakes the channel once per heartbeat interval.
    let ticker: HeartbeatTicker
    let metrics: ServerMetrics
    /// The server's clock (the same as HTTP's, so a session expires at the same moment on both).
    let clock: ServerClock
    let logger: Logger
    /// Closes the connection without writing (see ``AppRequestContext/closeConnection()``).
    let abort: @Sendable () -> Void

    /// Time between heartbeats.
    var heartbeatInterval: Duration { ticker.interval }

    /// How long one frame may take to be written before the device counts as not reading.
    var writeTimeout: Duration { max(heartbeatInterval * 3, .seconds(10)) }

    func run(after requestedCursor: Int64?, inbound: WebSocketInboundStream, outbound: WebSocketOutboundWriter) async throws {
        presence.channelOpened(sessionID: session.sessionID)
        metrics.realtimeConnections.increment()
        do {
            try await serve(after: requestedCursor, inbound: inbound, outbound: outbound)
        } catch {
            metrics.realtimeConnections.decrement()
            await presence.channelClosed(sessionID: session.sessionID)
            throw error
        }
        metrics.realtimeConnections.decrement()
        await presence.channelClosed(sessionID: session.sessionID)
    }

    private func serve(after requestedCursor: Int64?, inbound: WebSocketInboundStream, outbound: WebSocketOutboundWriter) async throws {
        let stream = PlayerEventStream(
            session: session, database: database, bus: bus, ticker: ticker, clock: clock, writeTimeout: writeTimeout, logger: logger,
            abort: abort)
        defer { stream.close() }
        let (current, revoked) = try await stream.current()
        var cursor = min(requestedCursor ?? current, current)
        try await send(.hello(heartbeatSeconds: heartbeatInterval.seconds, cursor: cursor), outbound, stream)
        if revoked {
            try await end(reason: "revoked", outbound, stream)
            return
        }
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                do {
                    for try await _ in inbound.messages(maxSize: 4096) { stream.yield(.heard) }
                } catch {}
                stream.yield(.inboundClosed)
            }
            defer { group.cancelAll() }

            cursor = try await sendEvents(after: cursor, outbound, stream)
            var lastHeard = ContinuousClock.now
            // The server's graceful shutdown waits for open connections: end this one (also when it was accepted
            // after the shutdown began, e.g. a device reconnecting at that moment — the handler then runs at once).
            try await withGracefulShutdownHandler {
                loop: for await wake in stream.wakes {
                    switch wake {
                    case .eventsAppended:
                        cursor = try await sendEvents(after: cursor, outbound, stream)
                    case .sessionEnded(let reason):
                        try await end(reason: reason, outbound, stream)
                        break loop
                    case .heard:
                        lastHeard = .now
                    case .inboundClosed:
                        break loop
                    case .beat:
                        if ContinuousClock.now - lastHeard > heartbeatInterval * 3 {
                            logger.info("realtime channel silent; closing", metadata: [LogKey.playerID: "\(session.playerID)"])
                            try await outbound.close(.goingAway, reason: "no heartbeat")
                            break loop
                        }
                        try await send(.heartbeat, outbound, stream)
                    case .shutdown:
                        try? await outbound.close(.goingAway, reason: "server shutting down")
                        break loop
                    }
                }
            } onGracefulShutdown: {
                stream.yield(.shutdown)
            }
        }
    }

    private func sendEvents(after start: Int64, _ outbound: WebSocketOutboundWriter, _ stream: PlayerEventStream) async throws -> Int64 {
        try await stream.catchUp(after: start) { record in
            guard let kind = EventKind(rawValue: record.kind) else { return }
            let event = RealtimeEvent(seq: record.seq, kind: kind, payload: record.payload, createdAt: StoredTime.date(record.createdAt))
            try await send(.event(event), outbound, stream)
        }
    }

    private func end(reason: String, _ outbound: WebSocketOutboundWriter, _ stream: PlayerEventStream) async throws {
        try await send(.sessionEnded(reason: reason), outbound, stream)
        try await outbound.close(.normalClosure, reason: reason)
    }

    private func send(_ frame: ServerFrame, _ outbound: WebSocketOutboundWriter, _ stream: PlayerEventStream) async throws {
        let text = String(decoding: try WireCoding.makeEncoder().encode(frame), as: UTF8.self)
        try await stream.watched { try await Task { try await outbound.write(.text(text)) }.value }
    }
}

/// When the channel's write in progress began, for the heartbeat beat to see a write that cannot finish.
final class WriteWatch: Sendable {
    private let started = Mutex<ContinuousClock.Instant?>(nil)

    /// A write begins.
    func begin() { started.withLock { $0 = .now } }

    /// The write ended (written or failed).
    func end() { started.withLock { $0 = nil } }

    /// True when a write has been waiting longer than `timeout`.
    func isOverdue(_ timeout: Duration) -> Bool {
        started.withLock { $0.map { ContinuousClock.now - $0 > timeout } ?? false }
    }
}

extension Duration {
    /// The duration in seconds, as a `Double`.
    var seconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) / 1e18
    }
}
