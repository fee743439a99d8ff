import GameCenterProtocol
import Hummingbird

/// HTTP for friends and friend requests.
struct FriendRoutes {
    let friends: FriendService

    func addAuthenticated(to group: RouterGroup<AppRequestContext>) {
        group.get("friends") { _, context -> FriendList in
            FriendList(playerIDs: try await friends.friends(of: context.requireSession()))
        }
        group.delete("friends/{playerID}") { _, context -> HTTPResponse.Status in
            try await friends.remove(friend: context.parameters.requirePlayerID(), by: context.requireSession())
            return .noContent
        }
        group.post("friend-requests") { request, context -> HTTPResponse.Status in
            let body = try await request.decode(as: SendFriendRequests.self, context: context)
            try await friends.send(body, from: context.requireSession(), device: context.requireDevice())
            return .created
        }
        group.post("friend-requests/by-name") { request, context -> HTTPResponse.Status in
            let body = try await request.decode(as: SendFriendRequestsByName.self, context: context)
            try await friends.send(byName: body, from: context.requireSession(), device: context.requireDevice())
            return .created
        }
        group.get("friend-requests") { _, context -> FriendRequestList in
            FriendRequestList(requests: try await friends.pending(for: context.requireSession()))
        }
        group.post("friend-requests/{requestID}/accept") { _, context -> HTTPResponse.Status in
            try await friends.accept(requestID: context.parameters.require("requestID"), by: context.requireSession())
            return .noContent
        }
        group.post("friend-requests/{requestID}/decline") { _, context -> HTTPResponse.Status in
            try await friends.decline(requestID: context.parameters.require("requestID"), by: context.requireSession())
            return .noContent
        }
    }
}

extension FriendList: ResponseEncodable {}
extension FriendRequestList: ResponseEncodable {}
