import GameCenterProtocol
import Hummingbird

/// HTTP for challenges: the game's definitions, and a player's challenges.
struct ChallengeRoutes {
    let challenges: ChallengeService

    func addAuthenticated(to group: RouterGroup<AppRequestContext>) {
        group.get("challenge-definitions") { _, context -> ChallengeDefinitionList in
            challenges.definitions(device: try context.requireDevice())
        }
        group.get("challenges") { _, context -> ChallengeList in
            try await challenges.list(device: context.requireDevice(), session: context.requireSession())
        }
        group.post("challenges") { request, context -> ChallengeInfo in
            let body = try await request.decode(as: ChallengeCreateBody.self, context: context)
            return try await challenges.create(body, device: context.requireDevice(), session: context.requireSession())
        }
        group.post("challenges/join") { request, context -> ChallengeInfo in
            let body = try await request.decode(as: ChallengeJoinBody.self, context: context)
            return try await challenges.join(code: body.code, device: context.requireDevice(), session: context.requireSession())
        }
        group.get("challenges/{challengeID}") { _, context -> ChallengeInfo in
            try await challenges.challenge(context.parameters.require("challengeID"), device: context.requireDevice(), session: context.requireSession())
        }
        group.post("challenges/{challengeID}/join") { _, context -> ChallengeInfo in
            try await challenges.join(context.parameters.require("challengeID"), device: context.requireDevice(), session: context.requireSession())
        }
        group.post("challenges/{challengeID}/leave") { _, context -> ChallengeInfo in
            try await challenges.leave(context.parameters.require("challengeID"), device: context.requireDevice(), session: context.requireSession())
        }
        group.post("challenges/{challengeID}/rematch") { _, context -> ChallengeInfo in
            try await challenges.rematch(context.parameters.require("challengeID"), device: context.requireDevice(), session: context.requireSession())
        }
    }
}

extension ChallengeDefinitionList: ResponseEncodable {}
extension ChallengeList: ResponseEncodable {}
extension ChallengeInfo: ResponseEncodable {}
