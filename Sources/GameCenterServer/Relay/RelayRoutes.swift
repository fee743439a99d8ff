import GameCenterProtocol
import Hummingbird
import HummingbirdWebSocket

/// `GET /v1/matches/{id}/relay`: a member's WebSocket to the match relay; and the relay's counters for operators.
struct RelayRoutes {
    let relay: RelayService

    func addAuthenticated(to group: RouterGroup<AppRequestContext>) {
        group.ws(
            "matches/{matchID}/relay",
            shouldUpgrade: { request, context in
                _ = try Self.resume(request)
                _ = try await relay.join(
                    matchID: context.parameters.require("matchID"), playerID: context.requireSession().playerID,
                    device: context.requireDevice())
                return .upgrade([:])
            },
            onUpgrade: { inbound, outbound, context in
                let requestContext = context.requestContext
                guard let session = requestContext.session, let device = requestContext.device,
                    let matchID = requestContext.parameters.get("matchID")
                else { return }
                // The match may have ended between the upgrade check and now: then there is nothing to relay.
                guard let (match, index) = try? await relay.join(matchID: matchID, playerID: session.playerID, device: device) else { return }
                let voiceAllowed = try await relay.mayUseVoice(session.playerID)
                let connection = RelayConnection(
                    relay: relay, match: match, memberIndex: index, playerID: session.playerID,
                    voiceAllowed: voiceAllowed, logger: context.logger)
                try await connection.run(resume: try Self.resume(context.request), inbound: inbound, outbound: outbound)
            })
    }

    /// `GET /admin/v1/relay/statistics`: what the relay forwarded and dropped since the server started.
    func addAdmin(to group: RouterGroup<AppRequestContext>) {
        group.get("relay/statistics") { _, _ -> RelayStatisticsBody in
            RelayStatisticsBody(counters: relay.statistics.snapshot())
        }
    }

    /// The `stream`, `received` and `sender` query parameters: what a reconnecting device already has.
    static func resume(_ request: Request) throws -> RelayConnection.Resume {
        let query = request.uri.queryParameters
        func number(_ name: String) throws -> UInt64 {
            guard let text = query.get(name) else { return 0 }
            guard let value = UInt64(text) else {
                throw APIError.invalidParameter("\(name) must be a whole number from 0 to \(UInt64.max)")
            }
            return value
        }
        return RelayConnection.Resume(receiverStream: try number("stream"), received: try number("received"), senderStream: try number("sender"))
    }
}

extension RelayStatisticsBody: ResponseEncodable {}
