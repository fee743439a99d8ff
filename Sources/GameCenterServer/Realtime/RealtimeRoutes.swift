import Hummingbird
import HummingbirdWebSocket

/// `GET /v1/realtime?after=SEQ`: the authenticated WebSocket that pushes the player's events.
struct RealtimeRoutes {
    let realtime: RealtimeService

    func addAuthenticated(to group: RouterGroup<AppRequestContext>) {
        group.ws(
            "realtime",
            shouldUpgrade: { request, context in
                _ = try Self.cursor(request)
                try realtime.admit(try context.requireSession())
                return .upgrade([:])
            },
            onUpgrade: { inbound, outbound, context in
                let requestContext = context.requestContext
                guard let session = requestContext.session else { return }
                try await realtime.serve(
                    session, after: try Self.cursor(context.request), inbound: inbound, outbound: outbound,
                    logger: context.logger, abort: { requestContext.closeConnection() })
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
