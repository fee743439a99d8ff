import GameCenterProtocol
import Hummingbird

/// HTTP for players: `POST /v1/players/lookup`.
struct PlayerRoutes {
    let players: PlayerService

    func addAuthenticated(to group: RouterGroup<AppRequestContext>) {
        group.post("players/lookup") { request, context -> PlayerLookupResponse in
            let body = try await request.decode(as: PlayerLookupRequest.self, context: context)
            return try await players.loadPlayers(body.playerIDs, caller: context.requireSession(), device: context.requireDevice())
        }
    }
}

extension PlayerLookupResponse: ResponseEncodable {}
