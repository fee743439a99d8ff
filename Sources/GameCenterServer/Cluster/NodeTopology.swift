import GameCenterStorage
import GameCenterProtocol
import Logging
import ServiceLifecycle

/// What differs between one node and several nodes sharing one PostgreSQL database, each concern behind a small
/// interface of its own with a single-node and a shared-database implementation:
///
/// - ``bus``: notices between the node's parts and, on several nodes, to the other nodes (``InProcessEventBus``,
///   ``PostgresEventBus``);
/// - ``queues``: which node holds each game's matchmaking queue and how a device's request reaches it
///   (``LocalQueueRouting``, ``SharedQueueRouting``);
/// - ``followSessionEndings(into:)``: sessions ended on another node leave this node's cache at once;
/// - ``followScores(into:)``: this node's boards follow the reports the other nodes store (``ScoreFollower``);
/// - ``followManifestReloads(into:)``: a reload in another node's studio console reloads this node's manifests too.
///
/// ``NodeTopologies/make(database:nodeID:pollInterval:clock:metrics:logger:)`` chooses once, from the database's
/// engine; nothing else in the server asks which engine it runs on or which implementation it holds.
protocol NodeTopology: Sendable {
    /// Carries notices between the parts of this node (and to the other nodes).
    var bus: any EventBus { get }
    /// Which node answers each game's matchmaking requests.
    var queues: any QueueRouting { get }
    /// The background work the bus needs while the node runs.
    var services: [any Service] { get }
    /// Has `cache` forget each session another node ends, at once (not when the cached session ages out).
    func followSessionEndings(into cache: SessionCache)
    /// Keeps `index` current with the reports other nodes store, from now on (call it before the boards are built);
    /// returns the background work that does it.
    func followScores(into index: LeaderboardIndex) async throws -> [any Service]
    /// Has `registry` reload the manifests whenever another node's studio console reloaded theirs.
    func followManifestReloads(into registry: GameRegistry)
}

/// Chooses the node's ``NodeTopology``.
enum NodeTopologies {
    /// One node on SQLite; on PostgreSQL, one of possibly several nodes: the bus reaches the others (by `LISTEN/NOTIFY`,
    /// or by reading their notices every `pollInterval` when one is given), queues are claimed per game and forwarded
    /// to with the nodes' shared key, and boards follow each other's reports.
    static func make(
        database: Database, nodeID: String, pollInterval: Duration?, clock: ServerClock, metrics: ServerMetrics, logger: Logger
    ) async throws -> any NodeTopology {
        switch database.engine {
        case .sqlite:
            return SingleNode(nodeID: nodeID)
        case .postgres:
            return try await SharedDatabaseNodes(
                database: database, nodeID: nodeID, pollInterval: pollInterval, clock: clock, metrics: metrics, logger: logger)
        }
    }
}

/// The only node on its database (SQLite): notices stay in the process, every queue is this node's, and no other
/// node ends sessions or stores reports.
struct SingleNode: NodeTopology {
    let bus: any EventBus = InProcessEventBus()
    let queues: any QueueRouting
    var services: [any Service] { [] }

    /// The node `nodeID`.
    init(nodeID: String) {
        queues = LocalQueueRouting(nodeID: nodeID)
    }

    /// No other node ends sessions.
    func followSessionEndings(into cache: SessionCache) {}

    /// No other node stores reports.
    func followScores(into index: LeaderboardIndex) async throws -> [any Service] { [] }

    /// No other node reloads manifests.
    func followManifestReloads(into registry: GameRegistry) {}
}

/// One of several nodes on one PostgreSQL database.
struct SharedDatabaseNodes: NodeTopology {
    private let database: Database
    private let clock: ServerClock
    private let postgresBus: PostgresEventBus
    private let logger: Logger
    let queues: any QueueRouting

    var bus: any EventBus { postgresBus }
    var services: [any Service] { [postgresBus] }

    /// The node `nodeID`; reads (or creates) the nodes' shared key.
    init(database: Database, nodeID: String, pollInterval: Duration?, clock: ServerClock, metrics: ServerMetrics, logger: Logger) async throws {
        self.database = database
        self.clock = clock
        self.logger = logger
        postgresBus = PostgresEventBus(
            database: database, node: nodeID, wakeups: pollInterval.map { .poll(every: $0) } ?? .listen, clock: clock, metrics: metrics,
            logger: logger)
        let key = try await database.write { try await $0.clusterKey(candidate: Credentials.newID(prefix: "ck_")) }
        queues = SharedQueueRouting(
            owners: QueueOwners(nodeID: nodeID, database: database, clock: clock),
            forwarder: QueueForwarder(nodeID: nodeID, key: key, database: database, bus: postgresBus, clock: clock, metrics: metrics, logger: logger))
    }

    func followSessionEndings(into cache: SessionCache) {
        postgresBus.whenSessionEndsElsewhere { cache.remove(sessionIDs: [$0]) }
    }

    func followScores(into index: LeaderboardIndex) async throws -> [any Service] {
        let follower = try await ScoreFollower.start(database: database, index: index, clock: clock, logger: logger)
        postgresBus.whenScoresStoredElsewhere { follower.wake() }
        postgresBus.whenScoresRemovedElsewhere { follower.wakeForRemovals() }
        return [follower]
    }

    func followManifestReloads(into registry: GameRegistry) {
        let logger = logger
        postgresBus.whenManifestsReloadedElsewhere {
            do {
                let games = try registry.reload()
                logger.info("reloaded manifests, as another node did", metadata: [LogKey.games: "\(games.count)"])
            } catch {
                logger.error("manifest reload refused; the previous games stay", metadata: [LogKey.error: "\(error)"])
            }
        }
    }
}
