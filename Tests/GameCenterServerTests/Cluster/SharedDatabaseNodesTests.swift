import Foundation
import GameCenterProtocol
import HTTPTypes
import Hummingbird
import NIOCore
import GameCenterStorage
import Logging
import SQLKit
import NetworkFaultProxy
import Synchronization
import Testing
@testable import GameCenterServer

/// The cluster's implementations tried in one process against a real PostgreSQL, each test on a database of its own:
/// the topology chosen from the engine, the bus between two nodes (`LISTEN/NOTIFY` and polling), the queues' owner
/// claimed and taken over, and two whole in-process servers sharing one database (a sign-out and a score on one node
/// reach the other). The multi-process live suite keeps only the stories that need real processes.
@Suite(.serialized, .timeLimit(.minutes(2)))
struct SharedDatabaseNodesTests {
    static var postgresURL: String? { ProcessInfo.processInfo.environment["GAMECENTER_TEST_POSTGRES_URL"] }

    /// A new, empty database on the test PostgreSQL (`createdb`), so the nodes of one test meet no others.
    static func freshDatabase() async throws -> String {
        let base = try #require(postgresURL)
        var components = try #require(URLComponents(string: base))
        let name = "nodes_\(UUID().uuidString.prefix(12).lowercased().replacingOccurrences(of: "-", with: ""))"
        let createdb = try await ChildProcess.run(
            "/usr/bin/createdb", ["-h", components.host ?? "127.0.0.1", "-p", "\(components.port ?? 5432)", "-U", components.user ?? "postgres", name])
        try #require(createdb.status == 0, "createdb \(name) failed")
        components.path = "/\(name)"
        return try #require(components.string)
    }

    /// Runs the topology's background services while `body` runs.
    static func running<T: Sendable>(_ topologies: [any NodeTopology], _ body: () async throws -> T) async throws -> T {
        try await withThrowingTaskGroup(of: Void.self) { group in
            for service in topologies.flatMap(\.services) { group.addTask { try await service.run() } }
            defer { group.cancelAll() }
            return try await body()
        }
    }

    static let logger = Logger(label: "test")

    @Test func oneNodeOnSQLiteAndSharedNodesOnPostgreSQL() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("topology-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        try await Database.withDatabase(url: "sqlite:\(folder.path)/db.sqlite") { database in
            let topology = try await NodeTopologies.make(
                database: database, nodeID: "solo", pollInterval: nil, clock: ServerClock(isAdjustable: false), metrics: ServerMetrics(), logger: Self.logger)
            #expect(topology is SingleNode)
            #expect(topology.queues.isShared == false && topology.services.isEmpty)
            #expect(try await topology.queues.owner(of: "game").owner == .thisNode)
        }
        guard Self.postgresURL != nil else { return }
        try await Database.withDatabase(url: try await Self.freshDatabase()) { database in
            let topology = try await NodeTopologies.make(
                database: database, nodeID: "one", pollInterval: nil, clock: ServerClock(isAdjustable: false), metrics: ServerMetrics(), logger: Self.logger)
            #expect(topology is SharedDatabaseNodes)
            #expect(topology.queues.isShared && topology.services.count == 1)
        }
    }

    @Test(.enabled(if: postgresURL != nil), arguments: [nil, Duration.milliseconds(50)])
    func noticesOnOneNodeReachTheOthersSubscribers(pollInterval: Duration?) async throws {
        try await Database.withDatabase(url: try await Self.freshDatabase()) { database in
            var nodes: [any NodeTopology] = []
            for id in ["node-a", "node-b"] {
                nodes.append(
                    try await NodeTopologies.make(
                        database: database, nodeID: id, pollInterval: pollInterval, clock: ServerClock(isAdjustable: false), metrics: ServerMetrics(),
                        logger: Self.logger))
            }
            let heard = Mutex<[BusNotice]>([])
            let subscription = nodes[1].bus.subscribe(playerID: "p1", sessionID: "s1") { notice in heard.withLock { $0.append(notice) } }
            defer { subscription.cancel() }
            try await Self.running(nodes) {
                // A notice is a wake-up: one sent before the other node listens may be missed, so it is sent again until heard.
                try await waitUntil("node-b's subscriber hears node-a's notice about p1") {
                    nodes[0].bus.publish(.playerEvents(playerID: "p1"))
                    try await Task.sleep(for: .milliseconds(100))
                    return heard.withLock { $0.contains(.playerEvents(playerID: "p1")) }
                }
                nodes[0].bus.publish(.sessionEnded(sessionID: "s1", reason: "signed_out"))
                try await waitUntil("node-b's subscriber hears that s1 ended on node-a") {
                    heard.withLock { $0.contains(.sessionEnded(sessionID: "s1", reason: "signed_out")) }
                }
                // Another player's notice is not this subscriber's.
                nodes[0].bus.publish(.playerEvents(playerID: "p2"))
                nodes[0].bus.publish(.playerEvents(playerID: "p1"))
                try await waitUntil("node-b hears the next notice about p1") {
                    heard.withLock { $0.filter { $0 == .playerEvents(playerID: "p1") }.count >= 2 }
                }
                #expect(!heard.withLock { $0.contains(.playerEvents(playerID: "p2")) })
            }
        }
    }

    @Test(.enabled(if: postgresURL != nil))
    func aQueueHasOneOwnerAndIsTakenOverWhenItsOwnerIsNoLongerSeen() async throws {
        try await Database.withDatabase(url: try await Self.freshDatabase()) { database in
            let clocks = [ServerClock(isAdjustable: true), ServerClock(isAdjustable: true)]
            var routings: [any QueueRouting] = []
            for (index, id) in ["node-a", "node-b"].enumerated() {
                let registry = try await NodeRegistry.register(nodeID: id, database: database, clock: clocks[index], logger: Self.logger)
                registry.listening(http: "127.0.0.1:\(8080 + index)", udp: "127.0.0.1:\(9080 + index)", publicURL: "http://127.0.0.1:\(8080 + index)")
                let topology = try await NodeTopologies.make(
                    database: database, nodeID: id, pollInterval: nil, clock: clocks[index], metrics: ServerMetrics(), logger: Self.logger)
                routings.append(topology.queues)
            }
            let game = "com.example.open\nsandbox"
            let first = try await routings[0].owner(of: game)
            #expect(first.owner == .thisNode && first.tookOver, "the first node asked claims the free queue")
            #expect(try await routings[0].owner(of: game).tookOver == false, "once")
            let seen = try await routings[1].owner(of: game)
            #expect(seen.owner == .node(id: "node-a", url: "http://127.0.0.1:8080") && !seen.tookOver)

            // Nodes judge each other by the machine's time: node-b's test clock moved past the health window leaves
            // node-a alive to it.
            _ = clocks[1].advance(byMillis: NodeRegistry.healthyWithinMillis + 2_000)
            try await Task.sleep(for: .milliseconds(QueueOwners.cacheMillis + 100))
            #expect(try await routings[1].owner(of: game).owner == .node(id: "node-a", url: "http://127.0.0.1:8080"))
            // node-a not seen for longer than the health window (its last sign of life set back): node-b takes the
            // queue over.
            let notSeenFor = NodeRegistry.healthyWithinMillis + 2_000
            try await database.write { try await $0.sql.raw("UPDATE nodes SET last_seen = last_seen - \(bind: notSeenFor) WHERE node_id = 'node-a'").run() }
            try await Task.sleep(for: .milliseconds(QueueOwners.cacheMillis + 100))
            let takeover = try await routings[1].owner(of: game)
            #expect(takeover.owner == .thisNode && takeover.tookOver)
            // Another game's queue is claimed apart.
            #expect(try await routings[0].owner(of: "com.example.keyed\nsandbox").owner == .thisNode)
        }
    }

    @Test(.enabled(if: postgresURL != nil))
    func aRequestCarryingTheNodesKeyIsANodesAndNoOtherIs() async throws {
        try await Database.withDatabase(url: try await Self.freshDatabase()) { database in
            let a = try await NodeTopologies.make(
                database: database, nodeID: "node-a", pollInterval: nil, clock: ServerClock(isAdjustable: false), metrics: ServerMetrics(),
                logger: Self.logger)
            let key = try await database.write { try await $0.clusterKey(candidate: "ignored: the first node's key stays") }
            #expect(!key.isEmpty && key != "ignored: the first node's key stays")
            func request(_ headers: HTTPFields) -> Request {
                Request(
                    head: HTTPRequest(method: .post, scheme: "http", authority: "node-a", path: "/v1/matchmaking/requests", headerFields: headers),
                    body: RequestBody(buffer: ByteBuffer()))
            }
            #expect(a.queues.forwardingNode(of: request([:])) == nil)
            #expect(a.queues.forwardingNode(of: request([QueueForwarder.keyHeader: "ck_not-the-key", QueueForwarder.nodeHeader: "node-b"])) == nil)
            #expect(a.queues.forwardingNode(of: request([QueueForwarder.keyHeader: key, QueueForwarder.nodeHeader: "node-b"])) == "node-b")
        }
    }

    @Test(.enabled(if: postgresURL != nil), arguments: [nil, Duration.milliseconds(50)])
    func twoServersOnOneDatabaseShareSignOutsAndScores(pollInterval: Duration?) async throws {
        let url = try await Self.freshDatabase()
        try await TestServer.run(databaseURL: url, nodeID: "node-a", nodePollInterval: pollInterval) { a in
            try await TestServer.run(databaseURL: url, nodeID: "node-b", nodePollInterval: pollInterval) { b in
                let player = try await a.signUp()
                let signOut = try await a.signUp()
                let cached = ContinuousClock.now
                #expect(try await b.call(.get, "/v1/me", token: signOut.token).status == .ok, "node-b reads the session node-a stored")
                // node-b cached the session; node-a's sign-out reaches it well before the cache would let it go.
                #expect(try await a.call(.delete, "/v1/sessions/current", token: signOut.token).status == .noContent)
                try await waitUntil("node-b refuses the session node-a signed out", within: .seconds(3)) {
                    try await b.call(.get, "/v1/me", token: signOut.token).status == .unauthorized
                }
                #expect(ContinuousClock.now - cached < .milliseconds(SessionCache.timeToLive), "the notice, not the cache's age, ended it")
                let metrics = try MetricsTests.parse(String(decoding: b.services.metrics.exposition(), as: UTF8.self))
                #expect((MetricsTests.value(metrics, "cluster_bus_lag_seconds_count") ?? 0) > 0, "node-b timed the notices it heard")

                let report = ScoreReportBatch(reportID: UUID().uuidString, scores: [ScoreReport(category: "open.points", value: 42, context: 0)])
                #expect(try await a.send(.post, "/v1/scores", report, token: player.token).status == .ok)
                try await waitUntil("node-b ranks the score node-a stored") {
                    let page = try await b.send(
                        .post, "/v1/leaderboards/query",
                        LeaderboardQuery(category: "open.points", playerScope: .global, timeScope: .allTime, rangeStart: 1, rangeLength: 10, playerIDs: nil),
                        token: player.token)
                    return try page.decode(LeaderboardPage.self).scores.first?.value == 42
                }
                // Polling nodes hear each other through the notices table, not `LISTEN/NOTIFY`.
                let notices = try await a.services.database.read { try await $0.lastNoticeID() }
                #expect((notices > 0) == (pollInterval != nil))
            }
        }
    }

    /// A manifest edited in one node's studio console is loaded by the other node too (they share the manifest folder),
    /// without a restart.
    @Test(.enabled(if: postgresURL != nil))
    func aManifestEditedInOneNodesConsoleIsLoadedByTheOther() async throws {
        let url = try await Self.freshDatabase()
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("shared-games-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let manifest = """
            bundleID: com.example.edited
            name: Edited Game
            leaderboards:
              - category: edited.first
                default: true
                title: { en: "First" }
                format: integer

            """
        try manifest.write(to: folder.appendingPathComponent("edited.yaml"), atomically: true, encoding: .utf8)
        try await TestServer.run(databaseURL: url, nodeID: "node-a", games: folder.path) { a in
            try await TestServer.run(databaseURL: url, nodeID: "node-b", games: folder.path) { b in
                let game = try #require(a.services.registry.game(bundleID: "com.example.edited"))
                let editor = ManifestEditor(registry: a.services.registry, bus: a.services.bus)
                let edited = manifest + "  - category: edited.second\n    title: { en: \"Second\" }\n    format: integer\n"
                // A notice is a wake-up: one sent before the other node listens may be missed, so the edit is applied
                // again (the same text) until heard.
                var heard = false
                for _ in 0..<50 where !heard {
                    _ = try editor.replace(edited, for: game)
                    #expect(a.services.registry.game(bundleID: "com.example.edited")?.leaderboards.count == 2, "at once on its own node")
                    try await Task.sleep(for: .milliseconds(100))
                    heard = b.services.registry.game(bundleID: "com.example.edited")?.leaderboards.map(\.category) == ["edited.first", "edited.second"]
                }
                #expect(heard, "the other node reloaded the edited manifest")
                // The other node listens now (a node that starts listening reloads anyway): the next edit reaches it
                // by the console's notice alone.
                _ = try editor.replace(edited + "  - category: edited.third\n    title: { en: \"Third\" }\n    format: integer\n", for: game)
                var third = false
                for _ in 0..<50 where !third {
                    try await Task.sleep(for: .milliseconds(100))
                    third = b.services.registry.game(bundleID: "com.example.edited")?.leaderboards.count == 3
                }
                #expect(third, "the other node reloaded the second edit at its notice")
            }
        }
    }
}
