import GameCenterStorage
import HummingbirdWebSocket
import Logging

/// The realtime channel's rules: who may open one (a signed-in session under its channel cap and opening rate),
/// and serving it (``RealtimeConnection``) while it is open.
struct RealtimeService: Sendable {
    let database: Database
    let bus: any EventBus
    /// Told when a session's channel opens and closes (the matchmaker keeps requests only while it is open).
    let presence: any ChannelPresence
    /// Beats every open channel's heartbeat.
    let ticker: HeartbeatTicker
    let metrics: ServerMetrics
    let limiter: RateLimiter
    let channels: RealtimeChannelCap
    let clock: ServerClock

    /// Throws why `session` may not open another channel now (`request.rate_limited`), counting the attempt.
    func admit(_ session: AuthenticatedSession) throws {
        try channels.check(session.sessionID)
        try limiter.take(.realtimeChannels, for: session.sessionID)
    }

    /// Serves one open channel until it closes; `abort` closes its connection without a goodbye.
    func serve(
        _ session: AuthenticatedSession, after cursor: Int64?, inbound: WebSocketInboundStream, outbound: WebSocketOutboundWriter,
        logger: Logger, abort: @escaping @Sendable () -> Void
    ) async throws {
        // Two upgrades may pass ``admit(_:)`` at once: the cap is taken here, atomically.
        guard channels.open(session.sessionID) else {
            try await outbound.close(.policyViolation, reason: "too many realtime channels open for this session")
            return
        }
        defer { channels.close(session.sessionID) }
        let connection = RealtimeConnection(
            database: database, bus: bus, session: session, presence: presence, ticker: ticker, metrics: metrics,
            clock: clock, logger: logger, abort: abort
        )
        try await connection.run(after: cursor, inbound: inbound, outbound: outbound)
    }
}
