import GameCenterProtocol
import Hummingbird

/// A device's request about its game's matchmaking queue is answered by the node that owns the queue (on one node,
/// always this one; on several, see ``QueueForwarder``). A request another node forwarded is served here, never
/// forwarded again, says whether the device's realtime channel is open on that node, and is answered with the
/// request the session then waits with here (``QueueForwarder/waitingHeader``).
struct QueueOwnerMiddleware: RouterMiddleware {
    typealias Context = AppRequestContext
    let matchmaking: MatchmakingService

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let queues = matchmaking.queues
        let session = try context.requireSession()
        if let node = queues.forwardingNode(of: request) {
            matchmaking.remoteChannel(sessionID: session.sessionID, on: node, open: request.headers[QueueForwarder.channelHeader] == "1")
            var response = try await next(request, context)
            response.headers[QueueForwarder.waitingHeader] = matchmaking.waitingRequestID(of: session) ?? ""
            return response
        }
        guard case .node(let id, let url) = try await matchmaking.queueOwner(of: context.requireDevice()) else {
            return try await next(request, context)
        }
        let response = try await queues.forward(
            request, context: context, to: (id, url), channelOpen: matchmaking.isChannelOpen(session.sessionID))
        // The channel closed while the request was away: the owner hears it now (the close itself told no one yet).
        if !matchmaking.isChannelOpen(session.sessionID) { await queues.channelClosed(sessionID: session.sessionID) }
        return response
    }
}

/// Guards `/internal/v1/…`, what nodes tell each other: only a request carrying the nodes' shared key gets through;
/// to anyone else the routes do not exist.
struct NodeKeyMiddleware: RouterMiddleware {
    typealias Context = AppRequestContext
    let queues: any QueueRouting

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard queues.forwardingNode(of: request) != nil else { throw APIError.routeNotFound(request.uri.path) }
        return try await next(request, context)
    }
}

/// `/internal/v1/matchmaking/…`: what a node tells the owner of a game's queue.
struct MatchmakingNodeRoutes {
    let matchmaking: MatchmakingService

    func add(to group: RouterGroup<AppRequestContext>) {
        // The device's last realtime channel on the calling node closed: its requests leave the queue.
        group.post("matchmaking/channels/{sessionID}/closed") { request, context -> HTTPResponse.Status in
            await matchmaking.remoteChannelClosed(
                sessionID: try context.parameters.require("sessionID"), on: request.headers[QueueForwarder.nodeHeader] ?? "")
            return .noContent
        }
        // An invitation to a match forming here was declined in the Game Center app on the calling node.
        group.post("matchmaking/invitations/{invitationID}/declined") { _, context -> HTTPResponse.Status in
            try await matchmaking.declinedElsewhere(invitationID: try context.parameters.require("invitationID"))
            return .noContent
        }
        // The studio asked another node for a player's waiting request in a queue held here.
        group.get("matchmaking/games/{bundleID}/players/{playerID}/request") { request, context -> MatchRequestStatus in
            let environment = try QueryParameter.choice(
                request.uri.queryParameters["environment"], as: Environment.self, name: "environment", default: .sandbox)
            return try await matchmaking.waitingRequestHere(
                playerID: context.parameters.requirePlayerID(), bundleID: context.parameters.require("bundleID"), environment: environment.rawValue)
        }
    }
}
