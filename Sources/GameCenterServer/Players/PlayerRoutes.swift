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

// Lookups are sent many times a second: they write their own JSON (see JSONWriter).

extension PlayerLookupResponse: ResponseGenerator, JSONWritable {
    public func response(from request: Request, context: some RequestContext) throws -> Response {
        JSONWriter.response(self)
    }

    func write(to json: inout JSONWriter) {
        json.object { json in
            json.key("players")
            json.array(players) { json, player in player.write(to: &json) }
            json.key("unknownPlayerIDs")
            json.array(unknownPlayerIDs) { json, id in json.string(id) }
        }
    }
}

extension PlayerProfile: JSONWritable {
    func write(to json: inout JSONWriter) {
        json.object { json in
            json.key("playerID")
            json.string(playerID)
            json.key("alias")
            json.string(alias)
            json.key("isFriend")
            json.bool(isFriend)
            if let status {
                json.key("status")
                json.string(status)
            }
            if let recentGames {
                json.key("recentGames")
                json.array(recentGames) { json, game in game.write(to: &json) }
            }
        }
    }
}

extension RecentGame: JSONWritable {
    func write(to json: inout JSONWriter) {
        json.object { json in
            json.key("bundleID")
            json.string(bundleID)
            json.key("name")
            json.string(name)
            json.key("lastPlayedAt")
            json.date(lastPlayedAt)
        }
    }
}
