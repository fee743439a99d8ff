import Foundation
import GameCenterProtocol
import GameCenterStorage
import HummingbirdWebSocket
import Logging
import ServiceLifecycle
import Synchronization

/// One device's realtime channel: replays stored events after the device's cursor, pushes new ones as the bus
/// announces them, probes liveness with heartbeats, and ends the channel when the session ends.
///
/// A device that stops reading cannot hold the channel: a frame not written within ``writeTimeout`` (three heartbeat
/// intervals, at least 10 s) closes the connection at the next heartbeat beat, so the heartbeat check and the server's
/// shutdown never wait on it.
///
/// Memory per channel is what bounds a server's devices, so the channel's long-lived task keeps shallow: storage is
/// read in a short-lived task of its own (the long-lived task's allocator would otherwise keep the deepest frames it
/// ever held, for as long as the channel is open), and a write is watched by the ticker's beat rather than by a timer
/// task of its own.
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

    /// Events read from storage per query while catching up.
    static let batchSize = 200

    private enum Wake {
        case notice(BusNotice)
        case heard
        case inboundClosed
        case tick
        case shutdown
    }

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
        // Subscribe before reading the backlog, so nothing appended in between is missed. The bus and the ticker hand
        // their wake-ups straight to this channel's stream: no task of the channel's own waits on either.
        let (wakes, wake) = AsyncStream.makeStream(of: Wake.self, bufferingPolicy: .bufferingNewest(64))
        let subscription = bus.subscribe(playerID: session.playerID, sessionID: session.sessionID) { wake.yield(.notice($0)) }
        defer { subscription.cancel() }
        let (database, playerID, sessionID) = (database, session.playerID, session.sessionID)
        // The session was checked before the upgrade (perhaps from a cache): one revoked between then and the
        // subscription above would never be told, so it is read again now that notices are heard.
        let (current, revoked) = try await Task {
            try await database.read { storage in
                (try await storage.player(id: playerID)?.eventSeq ?? 0, try await storage.session(id: sessionID)?.revokedAt != nil)
            }
        }.value
        var cursor = min(requestedCursor ?? current, current)
        let writes = WriteWatch()
        let (timeout, logger, abort) = (writeTimeout, logger, abort)
        let beat = ticker.join {
            if writes.isOverdue(timeout) {
                // The write waits on a peer that does not read: closing the connection ends it (and the channel).
                logger.info("realtime device stopped reading; closing", metadata: [LogKey.playerID: "\(playerID)"])
                abort()
            }
            wake.yield(.tick)
        }
        defer { ticker.leave(beat) }
        try await send(.hello(heartbeatSeconds: heartbeatInterval.seconds, cursor: cursor), outbound, writes)
        if revoked {
            try await end(reason: "revoked", outbound, writes)
            return
        }
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                do {
                    for try await _ in inbound.messages(maxSize: 4096) { wake.yield(.heard) }
                } catch {}
                wake.yield(.inboundClosed)
            }
            defer { group.cancelAll() }

            cursor = try await sendEvents(after: cursor, outbound, writes)
            var lastHeard = ContinuousClock.now
            // The server's graceful shutdown waits for open connections: end this one (also when it was accepted
            // after the shutdown began, e.g. a device reconnecting at that moment — the handler then runs at once).
            try await withGracefulShutdownHandler {
                loop: for await event in wakes {
                    switch event {
                    case .notice(.playerEvents):
                        cursor = try await sendEvents(after: cursor, outbound, writes)
                    case .notice(.sessionEnded(_, let reason)):
                        try await end(reason: reason, outbound, writes)
                        break loop
                    case .heard:
                        lastHeard = .now
                    case .inboundClosed:
                        break loop
                    case .tick:
                        if ContinuousClock.now - lastHeard > heartbeatInterval * 3 {
                            logger.info("realtime channel silent; closing", metadata: [LogKey.playerID: "\(session.playerID)"])
                            try await outbound.close(.goingAway, reason: "no heartbeat")
                            break loop
                        }
                        if clock.nowMillis() >= session.expiresAt {
                            try await end(reason: "expired", outbound, writes)
                            break loop
                        }
                        try await send(.heartbeat, outbound, writes)
                    case .shutdown:
                        try? await outbound.close(.goingAway, reason: "server shutting down")
                        break loop
                    }
                }
            } onGracefulShutdown: {
                wake.yield(.shutdown)
            }
        }
    }

    private func sendEvents(after start: Int64, _ outbound: WebSocketOutboundWriter, _ writes: WriteWatch) async throws -> Int64 {
        var cursor = start
        let (database, playerID) = (database, session.playerID)
        while true {
            let after = cursor
            let batch = try await Task {
                try await database.read { try await $0.events(playerID: playerID, after: after, limit: Self.batchSize) }
            }.value
            for record in batch {
                guard let kind = EventKind(rawValue: record.kind) else { continue }
                let event = RealtimeEvent(seq: record.seq, kind: kind, payload: record.payload, createdAt: StoredTime.date(record.createdAt))
                try await send(.event(event), outbound, writes)
                cursor = record.seq
            }
            if batch.count < Self.batchSize { return cursor }
        }
    }

    private func end(reason: String, _ outbound: WebSocketOutboundWriter, _ writes: WriteWatch) async throws {
        try await send(.sessionEnded(reason: reason), outbound, writes)
        try await outbound.close(.normalClosure, reason: reason)
    }

    private func send(_ frame: ServerFrame, _ outbound: WebSocketOutboundWriter, _ writes: WriteWatch) async throws {
        let text = String(decoding: try WireCoding.makeEncoder().encode(frame), as: UTF8.self)
        writes.begin()
        defer { writes.end() }
        try await Task { try await outbound.write(.text(text)) }.value
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
