import GameCenterProtocol

extension MatchmakingService {
    /// The studio's view of one player's matchmaking: the request `playerID` waits with in `bundleID`'s queues in
    /// `environment` (their own request, or their acceptance of an invitation), with why it still waits when its queue
    /// is rule-based, as the player sees it with ``status(requestID:session:explain:)``. On several nodes the node that
    /// owns the queue answers. Throws ``APIError/noWaitingRequest(playerID:game:)`` when they wait with none there.
    func waitingRequest(playerID: String, bundleID: String, environment: String) async throws -> MatchRequestStatus {
        switch try await queueOwner(bundleID: bundleID, environment: environment) {
        case .thisNode:
            return try await waitingRequestHere(playerID: playerID, bundleID: bundleID, environment: environment)
        case .node(let id, let url):
            return try await queues.waitingRequest(playerID: playerID, bundleID: bundleID, environment: environment, owner: (id, url))
        }
    }

    /// ``waitingRequest(playerID:bundleID:environment:)`` in this node's queue (what the owner answers another node).
    func waitingRequestHere(playerID: String, bundleID: String, environment: String) async throws -> MatchRequestStatus {
        let game = Self.gameKey(bundleID: bundleID, environment: environment)
        guard let key = state.withLock({ $0.waitingRequest(playerID: playerID, game: game) }) else {
            throw APIError.noWaitingRequest(playerID: playerID, game: "\(bundleID) (\(environment))")
        }
        // Matched (or gone) since the lookup: the status says so.
        return try await status(key, explain: true)
    }
}

extension APIError {
    static func noWaitingRequest(playerID: String, game: String) -> APIError {
        APIError(
            .matchmakingNoSuchRequest,
            "player \(String(playerID.prefix(64))) waits with no match request in the queues of \(game): they were matched, cancelled, or never asked")
    }
}
