import GameCenterProtocol
import Hummingbird

/// Where a game's matchmaking queue is.
enum QueueOwner: Sendable, Equatable {
    case thisNode
    /// Another node, reached at its base URL (empty: it listens on every address and has no `--public-url`).
    case node(id: String, url: String)
}

/// Which node answers each game's matchmaking requests, and how a device's request reaches it from another node:
/// the matchmaker's one seam between one node (``LocalQueueRouting``) and several (``SharedQueueRouting``).
protocol QueueRouting: Sendable {
    /// This node's id.
    var nodeID: String { get }
    /// Whether other nodes may serve the same database (their forming matches are theirs while they live).
    var isShared: Bool { get }
    /// The owner of `game`'s queue (a ``MatchmakingService`` game key), claiming it when it is free or its owner is
    /// gone; `tookOver` is true the first time this node finds itself the owner.
    func owner(of game: String) async throws -> (owner: QueueOwner, tookOver: Bool)
    /// The id of the node that forwarded `request` when it comes from another node of this database; nil otherwise.
    func forwardingNode(of request: Request) -> String?
    /// Sends the device's `request` to `owner` and returns the owner's answer.
    func forward(_ request: Request, context: AppRequestContext, to owner: (id: String, url: String), channelOpen: Bool) async throws -> Response
    /// The device's last realtime channel here closed: the owners its requests went to take them out of their queues.
    func channelClosed(sessionID: String) async
    /// A player declined an invitation outside the game on this node: the owner of its game's queue is told.
    func invitationDeclined(_ invitationID: String, owner: (id: String, url: String)) async
    /// Asks `owner` for the request `playerID` waits with in `bundleID`'s queue in `environment` (the studio's view) and
    /// answers with what it says.
    func waitingRequest(playerID: String, bundleID: String, environment: String, owner: (id: String, url: String)) async throws -> MatchRequestStatus
    /// Whether requests this node forwarded may wait at other nodes (so the other nodes' health is worth reading).
    var waitsElsewhere: Bool { get }
    /// Fails the requests that waited at owners not in `alive` (their devices hear `matchRequestFailed`).
    func failRequests(waitingAtNodesOtherThan alive: Set<String>) async
}

/// One node: every queue is this node's, so nothing is ever forwarded.
struct LocalQueueRouting: QueueRouting {
    let nodeID: String
    var isShared: Bool { false }
    var waitsElsewhere: Bool { false }

    func owner(of game: String) async throws -> (owner: QueueOwner, tookOver: Bool) { (.thisNode, false) }

    func forwardingNode(of request: Request) -> String? { nil }

    /// Never called: ``owner(of:)`` always answers this node.
    func forward(_ request: Request, context: AppRequestContext, to owner: (id: String, url: String), channelOpen: Bool) async throws -> Response {
        throw APIError.internalError
    }

    func channelClosed(sessionID: String) async {}

    func invitationDeclined(_ invitationID: String, owner: (id: String, url: String)) async {}

    /// Never called: ``owner(of:)`` always answers this node.
    func waitingRequest(playerID: String, bundleID: String, environment: String, owner: (id: String, url: String)) async throws -> MatchRequestStatus {
        throw APIError.internalError
    }

    func failRequests(waitingAtNodesOtherThan alive: Set<String>) async {}
}

/// Several nodes on one PostgreSQL: the queue's owner is claimed in the database (``QueueOwners``) and the others
/// forward to it (``QueueForwarder``).
struct SharedQueueRouting: QueueRouting {
    let owners: QueueOwners
    let forwarder: QueueForwarder

    var nodeID: String { owners.nodeID }
    var isShared: Bool { true }
    var waitsElsewhere: Bool { forwarder.waitsElsewhere }

    func owner(of game: String) async throws -> (owner: QueueOwner, tookOver: Bool) { try await owners.owner(of: game) }

    func forwardingNode(of request: Request) -> String? { forwarder.forwardingNode(of: request) }

    func forward(_ request: Request, context: AppRequestContext, to owner: (id: String, url: String), channelOpen: Bool) async throws -> Response {
        try await forwarder.forward(request, context: context, to: owner, channelOpen: channelOpen)
    }

    func channelClosed(sessionID: String) async { await forwarder.channelClosed(sessionID: sessionID) }

    func invitationDeclined(_ invitationID: String, owner: (id: String, url: String)) async {
        await forwarder.invitationDeclined(invitationID, owner: owner)
    }

    func waitingRequest(playerID: String, bundleID: String, environment: String, owner: (id: String, url: String)) async throws -> MatchRequestStatus {
        try await forwarder.waitingRequest(playerID: playerID, bundleID: bundleID, environment: environment, owner: owner)
    }

    func failRequests(waitingAtNodesOtherThan alive: Set<String>) async {
        await forwarder.failRequests(waitingAtNodesOtherThan: alive)
    }
}
