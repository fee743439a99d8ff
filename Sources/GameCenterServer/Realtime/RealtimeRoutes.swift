import Hummingbird
import HummingbirdWebSocket
import GameCenterStorage
import Logging

/// `GET /v1/realtime?after=SEQ`: the authenticated WebSocket that pushes the player's events.
struct RealtimeRoutes {
    let database: GameCenterStorage.Database
    let bus: any EventBus
    let presence: any ChannelPresence
    let heartbeatInterval: Duration
    let metrics: ServerMetrics
    let limiter: RateLimiter
    let cap: RealtimeChannelCap
    let clock: ServerClock

    func addAuthenticated(to group: RouterGroup<AppRequestContext>) {
        group.ws("realtime", shouldUpgrade: { request, context in
            let session = try context.requireSession()
            _ = try Self.cursor(request)
            try cap.check(session.sessionID)
            try limiter.take(.realtimeChannels, for: session.sessionID)
            return .upgrade([:])
        }, onUpgrade: { inbound, outbound, context in
            let requestContext = context.requestContext
            guard let session = requestContext.session else { return }
            guard cap.open(session.sessionID) else {
                try await outbound.close(.policyViolation, reason: "too many realtime channels open for this session")
                return
            }
            defer { cap.close(session.sessionID) }
            let connection = RealtimeConnection(
                database: database, bus: bus, session: session, presence: presence, heartbeatInterval: heartbeatInterval, metrics: metrics,
                clock: clock, logger: context.logger, abort: { requestContext.closeConnection() }
            )
            try await connection.run(after: try Self.cursor(context.request), inbound: inbound, outbound: outbound)
        })
    }

    /// The `after` query parameter: the sequence number of the last event the device has.
    static func cursor(_ request: Request) throws -> Int64? {
        guard let text = request.uri.queryParameters.get("after") else { return nil }
        guard let value = Int64(text), value >= 0 else {
            throw APIError.invalidParameter("after must be the sequence number of the last event received, a whole number ≥ 0")
        }
        return value
    }
}
