import GameCenterProtocol
import Hummingbird

/// HTTP for activities: the game's definitions, and a player's activities (party codes included).
struct ActivityRoutes {
    let activities: ActivityService

    func addAuthenticated(to group: RouterGroup<AppRequestContext>) {
        group.get("activity-definitions") { _, context -> ActivityDefinitionList in
            activities.definitions(device: try context.requireDevice())
        }
        group.post("activities") { request, context -> ActivityInfo in
            let body = try await request.decode(as: ActivityStartBody.self, context: context)
            return try await activities.start(body, device: context.requireDevice(), session: context.requireSession())
        }
        group.get("activities/{activityID}") { _, context -> ActivityInfo in
            try await activities.activity(context.parameters.require("activityID"), device: context.requireDevice(), session: context.requireSession())
        }
        group.post("activities/{activityID}/state") { request, context -> ActivityInfo in
            let body = try await request.decode(as: ActivityStateBody.self, context: context)
            return try await activities.setState(
                context.parameters.require("activityID"), body, device: context.requireDevice(), session: context.requireSession())
        }
    }
}

extension ActivityDefinitionList: ResponseEncodable {}
extension ActivityInfo: ResponseEncodable {}
