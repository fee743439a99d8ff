import GameCenterProtocol
import HTTPTypes
import Hummingbird

/// HTTP for matchmaking: requests, invitations, matches, activity and the Game Center app's "play with friends".
struct MatchmakingRoutes {
    let matchmaking: MatchmakingService

    func addAuthenticated(to signedIn: RouterGroup<AppRequestContext>) {
        // What touches the game's queue is answered by the node that owns it.
        let group = signedIn.group().add(middleware: QueueOwnerMiddleware(matchmaking: matchmaking))
        group.post("matchmaking/requests") { request, context -> EditedResponse<MatchRequestStatus> in
            let body = try await request.decode(as: MatchRequestBody.self, context: context)
            let status = try await matchmaking.request(body, device: context.requireDevice(), session: context.requireSession())
            return EditedResponse(status: .created, response: status)
        }
        group.get("matchmaking/requests/{requestID}") { request, context -> MatchRequestStatus in
            let explain: Bool
            switch request.uri.queryParameters.get("explain") {
            case nil, "false": explain = false
            case "true": explain = true
            case let other?:
                throw APIError.matchRequestInvalid("explain is true or false; got \(String(other.prefix(20)))")
            }
            return try await matchmaking.status(
                requestID: context.parameters.require("requestID"), session: context.requireSession(), explain: explain)
        }
        group.delete("matchmaking/requests/{requestID}") { _, context -> HTTPResponse.Status in
            try await matchmaking.cancel(requestID: context.parameters.require("requestID"), session: context.requireSession())
            return .noContent
        }
        group.post("matchmaking/requests/{requestID}/invitations") { request, context -> MatchRequestStatus in
            let body = try await request.decode(as: MatchInvitationsBody.self, context: context)
            return try await matchmaking.invite(
                body, requestID: context.parameters.require("requestID"), device: context.requireDevice(), session: context.requireSession())
        }
        group.get("matchmaking/activity") { request, context -> MatchmakingActivity in
            var group: UInt32?
            if let text = request.uri.queryParameters.get("playerGroup") {
                guard let value = UInt32(text) else {
                    throw APIError.invalidParameter("playerGroup must be a whole number from 0 to \(UInt32.max)")
                }
                group = value
            }
            _ = try context.requireSession()
            return matchmaking.activity(device: try context.requireDevice(), playerGroup: group)
        }
        group.get("matchmaking/queues/{queueName}/activity") { _, context -> QueueActivity in
            _ = try context.requireSession()
            return try matchmaking.queueActivity(context.parameters.require("queueName"), device: context.requireDevice())
        }
        signedIn.post("matchmaking/play-with-friends") { request, context -> HTTPResponse.Status in
            let body = try await request.decode(as: FriendList.self, context: context)
            try await matchmaking.playWithFriends(body.playerIDs, device: context.requireDevice(), session: context.requireSession())
            return .noContent
        }
        signedIn.post("matchmaking/play-with-friends/claim") { _, context -> PlayWithFriendsList in
            PlayWithFriendsList(choices: try await matchmaking.claimPlayWithFriends(device: context.requireDevice(), session: context.requireSession()))
        }
        signedIn.get("invitations") { _, context -> InvitationList in
            InvitationList(invitations: try await matchmaking.invitations(device: context.requireDevice(), session: context.requireSession()))
        }
        group.post("invitations/{invitationID}/accept") { request, context -> MatchRequestStatus in
            let body = try await request.decode(as: AcceptInvitation.self, context: context)
            return try await matchmaking.accept(
                invitationID: context.parameters.require("invitationID"), body,
                device: context.requireDevice(), session: context.requireSession())
        }
        group.post("invitations/{invitationID}/decline") { _, context -> HTTPResponse.Status in
            try await matchmaking.decline(
                invitationID: context.parameters.require("invitationID"),
                device: context.requireDevice(), session: context.requireSession())
            return .noContent
        }
        signedIn.get("matches/{matchID}") { _, context -> MatchInfo in
            try await matchmaking.match(id: context.parameters.require("matchID"), session: context.requireSession())
        }
        group.post("matches/{matchID}/leave") { _, context -> HTTPResponse.Status in
            try await matchmaking.leave(matchID: context.parameters.require("matchID"), session: context.requireSession())
            return .noContent
        }
    }
}

extension MatchRequestStatus: ResponseEncodable {}
extension MatchmakingActivity: ResponseEncodable {}
extension QueueActivity: ResponseEncodable {}
extension InvitationList: ResponseEncodable {}
extension PlayWithFriendsList: ResponseEncodable {}
extension MatchInfo: ResponseEncodable {}
