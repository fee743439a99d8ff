import GameCenterProtocol
import Hummingbird

/// HTTP for the device's game: `GET /v1/game`.
struct GameRoutes {
    func addPublic(to group: RouterGroup<AppRequestContext>) {
        group.get("game") { _, context -> GameSummary in
            let device = try context.requireDevice()
            return GameSummary(
                bundleID: device.game.bundleID, name: device.game.name, environment: device.environment,
                defaultLocale: device.game.defaultLocale)
        }
    }
}

extension GameSummary: ResponseEncodable {}
