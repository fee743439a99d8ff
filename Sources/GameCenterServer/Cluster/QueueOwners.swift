import GameCenterStorage
import Synchronization

/// Which node holds each game's matchmaking queue, among several nodes on one PostgreSQL: the first node a game's
/// request reaches claims the queue and keeps it while the database sees it alive; once it is not
/// (``NodeRegistry/healthyWithinMillis``), the next node a request reaches takes it over. Answers are kept
/// ``cacheMillis``.
final class QueueOwners: Sendable {
    /// How long an answer is used before the database is asked again (and the owner's claim renewed).
    static let cacheMillis: Int64 = 1_000

    /// This node's id.
    let nodeID: String
    private let database: Database
    private let clock: ServerClock
    private let known = Mutex<[String: (owner: QueueOwner, until: Int64)]>([:])

    init(nodeID: String, database: Database, clock: ServerClock) {
        self.nodeID = nodeID
        self.database = database
        self.clock = clock
    }

    /// The owner of `game`'s queue (a ``MatchmakingService`` game key), claiming it for this node when it is free or
    /// its owner is gone; `tookOver` is true the first time this node finds itself the owner (the forming matches of
    /// an owner that died are to be abandoned then).
    func owner(of game: String) async throws -> (owner: QueueOwner, tookOver: Bool) {
        let now = clock.wallMillis()
        let cached = known.withLock { $0[game] }
        if let cached, cached.until > now { return (cached.owner, false) }
        let ownerID = try await database.write { [nodeID] in
            try await $0.claimQueue(game, nodeID: nodeID, aliveAfter: now - NodeRegistry.healthyWithinMillis, now: now)
        }
        var owner = QueueOwner.thisNode
        if ownerID != nodeID {
            let node = try await database.read { try await $0.nodes() }.first { $0.nodeID == ownerID }
            owner = .node(id: ownerID, url: node?.publicURL ?? "")
        }
        known.withLock { $0[game] = (owner, now + Self.cacheMillis) }
        return (owner, owner == .thisNode && cached?.owner != .thisNode)
    }
}
