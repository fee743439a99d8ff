import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import NetworkFaultProxy
import OpenGameKit
import Synchronization
import Testing

/// Two `gamecenter serve` nodes on one PostgreSQL, devices on different nodes: what one node stores reaches a device
/// connected to the other (the event bus crosses nodes by `LISTEN/NOTIFY`).
@Suite(.serialized, .timeLimit(.minutes(2))) struct ClusterLiveTests {
    @Test func eventsAndSignOutsCrossNodes() async throws {
        guard LiveServer.engines.contains("postgres") else { return }
        let nodeA = try LiveServer(engine: "postgres")
        try await nodeA.start()
        let nodeB = try LiveServer(database: nodeA.database)
        try await nodeB.start()

        // Ann's device is on node B, Bob's on node A.
        let (ann, annEvents, annAccount) = try await Self.connectedAnn(on: nodeB)
        let (bob, _) = try await Devices.signedUp(nodeA, alias: "Bob")

        let sent = ContinuousClock.now
        try await GKFriendRequest.send(toAccounts: [annAccount], message: "from node A", in: bob)
        let request = try await nextEvent(annEvents, within: 5) { if case .friendRequestReceived(let request) = $0 { request } else { nil } }
        print("cross-node friend request: \(ContinuousClock.now - sent)")
        #expect(request.fromAlias == "Bob" && request.message == "from node A")

        // Node B's listening connection is cut (PostgreSQL terminates it) and a request is sent while it listens again:
        // once it does, its devices re-read storage, and nothing is lost.
        try Self.psql(nodeA.database, "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE query LIKE 'LISTEN%'")
        let (carl, _) = try await Devices.signedUp(nodeA, alias: "Carl")
        try await GKFriendRequest.send(toAccounts: [annAccount], message: "while B was deaf", in: carl)
        let late = try await nextEvent(annEvents, within: 10) { if case .friendRequestReceived(let request) = $0 { request } else { nil } }
        #expect(late.fromAlias == "Carl")
        await carl.close()

        // Ann signs out everywhere from a browser session on node A: her device on node B hears it.
        var signIn = URLRequest(url: nodeA.url.appendingPathComponent("v1/sessions"))
        signIn.httpMethod = "POST"
        signIn.setValue("application/json", forHTTPHeaderField: "Content-Type")
        signIn.setValue("com.example.tapper", forHTTPHeaderField: "X-GameCenter-Bundle-ID")
        signIn.setValue("sandbox", forHTTPHeaderField: "X-GameCenter-Environment")
        signIn.httpBody = Data(#"{"account": "\#(annAccount)", "password": "password-Ann"}"#.utf8)
        let (body, _) = try await URLSession.shared.data(for: signIn)
        let token = try #require((try JSONSerialization.jsonObject(with: body) as? [String: Any])?["token"] as? String)
        var everywhere = URLRequest(url: nodeA.url.appendingPathComponent("v1/sessions/others"))
        everywhere.httpMethod = "DELETE"
        everywhere.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization")
        everywhere.setValue("com.example.tapper", forHTTPHeaderField: "X-GameCenter-Bundle-ID")
        everywhere.setValue("sandbox", forHTTPHeaderField: "X-GameCenter-Environment")
        let (_, revoked) = try await URLSession.shared.data(for: everywhere)
        #expect((revoked as? HTTPURLResponse)?.statusCode == 204)
        _ = try await nextEvent(annEvents, within: 5) { if case .signedOut = $0 { true } else { nil } }

        // A session node B has cached (it answered with it) is refused there once node A signed it out — well
        // before the cache's 5 s.
        let cached = try await nodeA.signUp(account: "dee-\(UUID().uuidString.prefix(8).lowercased())")
        #expect(try await Self.status(.GET, "v1/friends", on: nodeB, token: cached) == 200)
        #expect(try await Self.status(.DELETE, "v1/sessions/current", on: nodeA, token: cached) == 204)
        try await waitUntil("node B refuses the signed-out session", within: .seconds(2)) {
            (try? await Self.status(.GET, "v1/friends", on: nodeB, token: cached)) == 401
        }

        await ann.close()
        await bob.close()
        try await nodeB.stop()
        try await nodeA.stop()
    }

    /// Nodes that read the others' notices from a table (`--node-poll-seconds`, for databases without LISTEN/NOTIFY):
    /// no node listens, and still a friend request made on A reaches a device on B, a score reported on A is ranked on
    /// B, and a session signed out on A is refused on B.
    @Test func nodesThatPollInsteadOfListeningShareEvents() async throws {
        guard LiveServer.engines.contains("postgres") else { return }
        let poll = ["--node-poll-seconds", "0.05"]
        let nodeA = try LiveServer(engine: "postgres")
        try await nodeA.start(extraArguments: poll)
        let nodeB = try LiveServer(database: nodeA.database)
        try await nodeB.start(extraArguments: poll)
        let refused = try LiveServer(database: nodeA.database)
        let invalid = await #expect(throws: LiveServerError.self) { try await refused.start(extraArguments: ["--node-poll-seconds", "0"]) }
        #expect(invalid.map { "\($0)" }?.contains("--node-poll-seconds must be 0.01") == true)

        let (ann, annEvents, annAccount) = try await Self.connectedAnn(on: nodeB)
        let (bob, _) = try await Devices.signedUp(nodeA, alias: "Bob")
        let sent = ContinuousClock.now
        try await GKFriendRequest.send(toAccounts: [annAccount], message: "polled", in: bob)
        let request = try await nextEvent(annEvents, within: 5) { if case .friendRequestReceived(let request) = $0 { request } else { nil } }
        print("cross-node friend request, polling every 50 ms: \(ContinuousClock.now - sent)")
        #expect(request.fromAlias == "Bob" && request.message == "polled")

        // Scores and sign-outs across polling nodes: SharedDatabaseNodesTests, in process.

        // It went through the table, not LISTEN/NOTIFY.
        let database = try #require(URLComponents(string: nodeA.database)).path.dropFirst()
        #expect(try Self.psqlValue(nodeA.database, "SELECT count(*) FROM pg_stat_activity WHERE datname = '\(database)' AND query LIKE 'LISTEN%'") == "0")
        #expect(try Int(Self.psqlValue(nodeA.database, "SELECT count(*) FROM node_notices")) ?? 0 > 0)

        await ann.close()
        await bob.close()
        try await nodeB.stop()
        try await nodeA.stop()
    }

    /// Scores reported on one node are ranked on the others: on a node that built its boards before (it follows the
    /// reports), today's and the all-time board alike, and on a node started later (it builds from storage, then
    /// follows). Also across a listener that was cut, and for reports other nodes make at the same time.
    @Test func scoresReportedOnOneNodeAreRankedOnTheOthers() async throws {
        guard LiveServer.engines.contains("postgres") else { return }
        let nodeA = try LiveServer(engine: "postgres")
        try await nodeA.start()
        let nodeB = try LiveServer(database: nodeA.database)
        try await nodeB.start(extraArguments: ["--admin-key", LeaderboardsLiveTests.adminKey])
        let (ann, _) = try await Devices.signedUp(nodeA, alias: "Ann")
        let (bob, _) = try await Devices.signedUp(nodeB, alias: "Bob")
        try await LeaderboardsLiveTests.report(bob, 10)
        #expect(try await LeaderboardsLiveTests.load(bob).scores.map(\.value) == [10])

        // Ann's reports on node A: Bob, on node B, sees each new rank. The time each took is printed.
        var delays: [Duration] = []
        for value in Int64(11)...30 {
            try await LeaderboardsLiveTests.report(ann, value)
            let reported = ContinuousClock.now
            try await waitUntil("node B ranks Ann's \(value) first", within: .seconds(5)) {
                let (scores, _) = try await LeaderboardsLiveTests.load(bob, range: 1...2)
                return scores.map(\.value) == [value, 10] && scores.first?.playerID == ann.localPlayer.playerID
            }
            delays.append(ContinuousClock.now - reported)
        }
        delays.sort()
        print("score on node A seen ranked on node B: p50 \(delays[delays.count / 2]), max \(delays.last!) (\(delays.count) reports)")
        #expect(try await LeaderboardsLiveTests.load(bob, time: .today).scores.map(\.value) == [30, 10])
        #expect(try await LeaderboardsLiveTests.load(bob, time: .week).scores.first?.rank == 1)

        // Node B's listening connection is cut and Ann reports meanwhile: once B listens again it catches up.
        try Self.psql(nodeA.database, "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE query LIKE 'LISTEN%'")
        try await LeaderboardsLiveTests.report(ann, 40)
        try await waitUntil("node B ranks Ann's 40 after listening again", within: .seconds(10)) {
            try await LeaderboardsLiveTests.load(bob, range: 1...1).scores.first?.value == 40
        }

        // Ten players report on both nodes at once: every node ranks all of them, in the same order.
        var players: [(device: GKGameCenter, value: Int64)] = []
        for index in 0..<10 {
            let (device, _) = try await Devices.signedUp(index.isMultiple(of: 2) ? nodeA : nodeB, alias: "P\(index)")
            players.append((device, Int64(100 + index)))
        }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for player in players { group.addTask { try await LeaderboardsLiveTests.report(player.device, player.value) } }
            try await group.waitForAll()
        }
        var expected = players.map(\.value).sorted(by: >) + [40, 10]
        for viewer in [ann, bob] {
            try await waitUntil("both nodes rank all twelve players", within: .seconds(5)) {
                try await LeaderboardsLiveTests.load(viewer, range: 1...25).scores.map(\.value) == expected
            }
        }

        // The studio erases the best player's scores through node B: node A's boards drop them too.
        var erase = URLRequest(
            url: nodeB.url.appendingPathComponent("admin/v1/games/com.example.tapper/players/\(players[9].device.localPlayer.playerID)/scores"))
        erase.httpMethod = "DELETE"
        erase.setValue("Bearer \(LeaderboardsLiveTests.adminKey)", forHTTPHeaderField: "Authorization")
        let (_, erased) = try await URLSession.shared.data(for: erase)
        #expect((erased as? HTTPURLResponse)?.statusCode == 200)
        expected.removeFirst()
        try await waitUntil("node A no longer ranks the erased player", within: .seconds(5)) {
            let (scores, board) = try await LeaderboardsLiveTests.load(ann, range: 1...25)
            return scores.map(\.value) == expected && board.maxRange == expected.count
        }

        // An erasure whose notice node A never hears (made straight in storage and noted, as by a node whose notice was
        // lost): once A listens again it reads the noted erasures and drops the player too.
        let lost = players[8].device.localPlayer.playerID
        try Self.psql(
            nodeA.database,
            """
            DELETE FROM best_scores WHERE player_id = '\(lost)'; DELETE FROM scores WHERE player_id = '\(lost)';
            INSERT INTO score_removals (bundle_id, player_id, removed_at)
            VALUES ('com.example.tapper', '\(lost)', (EXTRACT(EPOCH FROM now()) * 1000)::BIGINT)
            """)
        try Self.psql(nodeA.database, "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE query LIKE 'LISTEN%'")
        expected.removeFirst()
        try await waitUntil("node A drops the player erased while it was not listening", within: .seconds(10)) {
            let (scores, board) = try await LeaderboardsLiveTests.load(ann, range: 1...25)
            return scores.map(\.value) == expected && board.maxRange == expected.count
        }

        // A report stored just after an erasure of the same player, and applied by node A before it reads the
        // erasure: storage keeps the report, so node A's boards keep it too. Another erasure, noted after, tells when
        // node A has read both.
        let (kept, dropped) = (players[7].device, players[6].device.localPlayer.playerID)
        let keptID = kept.localPlayer.playerID
        try Self.psql(nodeA.database, "DELETE FROM best_scores WHERE player_id = '\(keptID)'; DELETE FROM scores WHERE player_id = '\(keptID)'")
        try await LeaderboardsLiveTests.report(kept, 150)
        try await waitUntil("node A ranks the report stored after the erasure", within: .seconds(5)) {
            try await LeaderboardsLiveTests.load(ann, range: 1...1).scores.first?.value == 150
        }
        try Self.psql(
            nodeA.database,
            """
            DELETE FROM best_scores WHERE player_id = '\(dropped)'; DELETE FROM scores WHERE player_id = '\(dropped)';
            INSERT INTO score_removals (bundle_id, player_id, removed_at)
            VALUES ('com.example.tapper', '\(keptID)', (EXTRACT(EPOCH FROM now()) * 1000)::BIGINT),
                   ('com.example.tapper', '\(dropped)', (EXTRACT(EPOCH FROM now()) * 1000)::BIGINT)
            """)
        try Self.psql(nodeA.database, "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE query LIKE 'LISTEN%'")
        expected = [150] + expected.filter { $0 != players[7].value && $0 != players[6].value }
        for viewer in [ann, bob] {
            try await waitUntil("every node read both erasures and kept the report stored after the first", within: .seconds(10)) {
                let (scores, board) = try await LeaderboardsLiveTests.load(viewer, range: 1...25)
                return scores.map(\.value) == expected && board.maxRange == expected.count
            }
        }

        // A node started now builds its boards from storage, then follows the others.
        let nodeC = try LiveServer(database: nodeA.database)
        try await nodeC.start()
        let (cat, _) = try await Devices.signedUp(nodeC, alias: "Cat")
        #expect(try await LeaderboardsLiveTests.load(cat).scores.map(\.value) == expected)
        try await LeaderboardsLiveTests.report(bob, 500)
        try await waitUntil("node C ranks Bob's 500 from node B first", within: .seconds(5)) {
            try await LeaderboardsLiveTests.load(cat, range: 1...1).scores.first?.value == 500
        }

        for device in [ann, bob, cat] + players.map(\.device) { await device.close() }
        try await nodeC.stop()
        try await nodeB.stop()
        try await nodeA.stop()
    }

    /// Nodes list themselves at `GET /admin/v1/nodes` with their addresses and health; a second node with a live
    /// node's id is refused; a node that stops leaves the list, one that is killed stays there, unhealthy.
    @Test func nodesAreListedWithTheirHealthAndIDsAreUnique() async throws {
        guard LiveServer.engines.contains("postgres") else { return }
        let admin = ["--admin-key", LeaderboardsLiveTests.adminKey]
        let nodeA = try LiveServer(engine: "postgres")
        try await nodeA.start(extraArguments: admin + ["--node-id", "node-a"])
        let nodeB = try LiveServer(database: nodeA.database)
        try await nodeB.start(extraArguments: admin + ["--node-id", "node-b", "--test-clock"])
        try await waitUntil("both nodes list both, healthy, with the addresses they serve") {
            let nodes = try await Self.nodes(on: nodeB)
            return nodes.map(\.nodeID) == ["node-a", "node-b"] && nodes.allSatisfy(\.healthy)
                && nodes[0].httpAddress == "127.0.0.1:\(nodeA.port)" && nodes[1].httpAddress == "127.0.0.1:\(nodeB.port)"
                && nodes.allSatisfy { $0.udpAddress.hasPrefix("127.0.0.1:") } && nodes.map(\.answering) == [false, true]
                && nodes.map(\.publicURL) == ["http://127.0.0.1:\(nodeA.port)", "http://127.0.0.1:\(nodeB.port)"]
        }
        #expect(try await Self.nodes(on: nodeA).map(\.answering) == [true, false])
        // Each node says what it serves with its heartbeat: node B lists node A's connected device.
        let (ann, _, _) = try await Self.connectedAnn(on: nodeA)
        try await waitUntil("node B sees node A's device in node A's figures") {
            try await Self.nodes(on: nodeB).map { $0.figures?.realtimeConnections } == [1, 0]
        }
        await ann.close()
        try await waitUntil("and sees it leave") { try await Self.nodes(on: nodeB).map { $0.figures?.realtimeConnections } == [0, 0] }

        let twin = try LiveServer(database: nodeA.database)
        let refused = await #expect(throws: LiveServerError.self) { try await twin.start(extraArguments: admin + ["--node-id", "node-a"]) }
        #expect(
            refused.map { "\($0)" }?.contains("node id node-a is in use by a live node (serving 127.0.0.1:\(nodeA.port)") == true,
            "\(String(describing: refused))")
        let invalid = await #expect(throws: LiveServerError.self) { try await twin.start(extraArguments: ["--node-id", "no spaces"]) }
        #expect(invalid.map { "\($0)" }?.contains("--node-id must be 1-64 letters, digits") == true)
        let badURL = await #expect(throws: LiveServerError.self) { try await twin.start(extraArguments: ["--public-url", "ftp://gc.example.com"]) }
        #expect(badURL.map { "\($0)" }?.contains("--public-url must be an http:// or https:// URL") == true)

        // Node A is killed: its row stays, and is unhealthy once six seconds pass on node B's clock without a sign of life.
        try await nodeA.crash()
        try await LeaderboardsLiveTests.advanceClock(nodeB, hours: 10.0 / 3600)
        try await waitUntil("node B lists the killed node as unhealthy and itself as healthy") {
            try await Self.nodes(on: nodeB).map { "\($0.nodeID) \($0.healthy)" } == ["node-a false", "node-b true"]
        }
        // Node B stops: it leaves the list; the killed node stays.
        #expect(try await nodeB.stop() == 0)
        let nodeC = try LiveServer(database: nodeA.database)
        try await nodeC.start(extraArguments: admin + ["--node-id", "node-c"])
        #expect(try await Self.nodes(on: nodeC).map(\.nodeID) == ["node-a", "node-c"])
        try await nodeC.stop()
    }

    /// A device reaches two nodes through haproxy (configured as docs/SEVERAL_NODES.md says), or is given both nodes'
    /// URLs: when its node is killed, the device carries on through the other node (a request made right after the
    /// kill included), and its realtime channel, reconnected there, delivers what happened meanwhile.
    @Test(arguments: [true, false])
    func aDeviceMovesToAnotherNodeWhenItsNodeDies(throughHAProxy: Bool) async throws {
        guard LiveServer.engines.contains("postgres") else { return }
        let nodeA = try LiveServer(engine: "postgres")
        try await nodeA.start(extraArguments: ["--node-id", "node-a"])
        let nodeB = try LiveServer(database: nodeA.database)
        try await nodeB.start(extraArguments: ["--node-id", "node-b"])
        var proxy: HAProxy?
        defer { proxy?.stop() }
        if throughHAProxy {
            // `balance first`: every device goes to node A while it is up (so the test knows which node to kill).
            proxy = try HAProxy(backend: "balance first\n    option httpchk GET /readyz\n    http-check expect status 200", servers: [nodeA.port, nodeB.port])
            try await proxy?.waitUntilServing()
        }

        let ann = GKGameCenter(
            servers: proxy.map { [$0.url] } ?? [nodeA.url, nodeB.url], bundleID: "com.example.tapper", environment: .sandbox,
            storageDirectory: FileManager.default.temporaryDirectory.appendingPathComponent("device-\(UUID().uuidString)"))
        let annEvents = ann.events
        let annAccount = "ann-\(UUID().uuidString.prefix(8).lowercased())"
        try await ann.localPlayer.authenticate(.signUp(account: annAccount, password: "password-Ann", alias: "Ann"))
        _ = try await nextEvent(annEvents) { if case .connected = $0 { true } else { nil } }
        let (bob, _) = try await Devices.signedUp(nodeB, alias: "Bob")

        try await nodeA.crash()
        if !throughHAProxy {
            // A device whose first server is gone signs up through the next one (its first request moves on).
            let cat = GKGameCenter(
                servers: [nodeA.url, nodeB.url], bundleID: "com.example.tapper", environment: .sandbox,
                storageDirectory: FileManager.default.temporaryDirectory.appendingPathComponent("device-\(UUID().uuidString)"))
            try await cat.localPlayer.authenticate(.signUp(account: "cat-\(UUID().uuidString.prefix(8).lowercased())", password: "password-Cat", alias: "Cat"))
            #expect(cat.servers == [nodeA.url, nodeB.url] && cat.server == nodeA.url)
            await cat.close()
        }
        try await GKFriendRequest.send(toAccounts: [annAccount], message: "while your node was down", in: bob)
        let request = try await nextEvent(annEvents, within: 20) { if case .friendRequestReceived(let request) = $0 { request } else { nil } }
        #expect(request.fromAlias == "Bob" && request.message == "while your node was down")
        let pending = try await GKFriendRequest.loadPending(in: ann)
        #expect(pending.map(\.fromAlias) == ["Bob"])

        await ann.close()
        await bob.close()
        try await nodeB.stop()
    }

    /// Matchmaking with several nodes, as docs/SEVERAL_NODES.md sets it up: haproxy sends each game's requests to one
    /// node (a consistent hash of `X-GameCenter-Bundle-ID`), so players of a game match each other and play through
    /// that node's relay whichever way they came in. When that node dies, its matches carry on through the other
    /// node's relay, a player still waiting is told clearly (their `findMatch` fails once their channel is back,
    /// through the other node), and new requests match there.
    @Test func playersOfAGameMatchThroughTheNodeHAProxyRoutesTheGameTo() async throws {
        guard LiveServer.engines.contains("postgres") else { return }
        let admin = ["--admin-key", LeaderboardsLiveTests.adminKey]
        let games = try MatchmakingLiveTests.games()
        let nodeA = try LiveServer(engine: "postgres", games: games)
        try await nodeA.start(extraArguments: admin + ["--node-id", "node-a"])
        let nodeB = try LiveServer(database: nodeA.database, games: games)
        try await nodeB.start(extraArguments: admin + ["--node-id", "node-b"])
        let proxy = try HAProxy(
            backend: "balance hdr(X-GameCenter-Bundle-ID)\n    hash-type consistent\n    option httpchk GET /readyz\n    http-check expect status 200",
            servers: [nodeA.port, nodeB.port])
        defer { proxy.stop() }
        try await proxy.waitUntilServing()
        let player = { (alias: String) in try await Self.arenaPlayer(alias, at: proxy.url) }

        let ann = try await player("Ann"), bob = try await player("Bob")
        let annFinds = MatchmakingLiveTests.find(ann, MatchmakingLiveTests.request(2, 2))
        let bobFinds = MatchmakingLiveTests.find(bob, MatchmakingLiveTests.request(2, 2))
        // Bounded waits: a request refused or lost between the nodes fails the test instead of holding the run.
        let (annMatch, bobMatch) = (try await value(of: annFinds, "Ann's match"), try await value(of: bobFinds, "Bob's match"))
        #expect(annMatch.matchID == bobMatch.matchID)
        #expect(try await allConnected(annMatch) == [bob.localPlayer.playerID])
        let annInbox = MatchInbox(annMatch), bobInbox = MatchInbox(bobMatch)
        try annMatch.send(Data("through the game's node".utf8), to: [bob.localPlayer.playerID], with: .reliable)
        try await waitUntil("Bob hears Ann through the relay") { bobInbox.texts(from: ann.localPlayer.playerID) == ["through the game's node"] }

        // The node haproxy routes the game to is the one whose queue took the requests.
        let requests = { (node: LiveServer) in try await Self.matchmakingRequests(on: node) }
        let (onA, onB) = (try await requests(nodeA), try await requests(nodeB))
        #expect(onA + onB == 2 && (onA == 0 || onB == 0), "one node took both requests: \(onA) and \(onB)")
        let (gameNode, otherNode) = onA == 2 ? (nodeA, nodeB) : (nodeB, nodeA)

        // Cat waits for a third player; the game's node dies: Cat's findMatch fails clearly, and new requests match
        // on the other node.
        let cat = try await player("Cat")
        let catFinds = MatchmakingLiveTests.find(cat, MatchmakingLiveTests.request(3, 3))
        try await waitUntil("Cat's request waits on the game's node") { try await requests(gameNode) == 3 }
        try await gameNode.crash()
        try annMatch.send(Data("after the node died".utf8), to: [bob.localPlayer.playerID], with: .reliable)
        // Ann and Bob's match carries on: their relay connections come back through haproxy to the other node, whose
        // relay takes the stored match over.
        try await waitUntil("Bob hears Ann after the game's node died", within: .seconds(15)) {
            bobInbox.texts(from: ann.localPlayer.playerID) == ["through the game's node", "after the node died"]
        }
        #expect(annInbox.failed.isEmpty && bobInbox.failed.isEmpty)
        let failure = await #expect(throws: GKError.self) { try await value(of: catFinds, "Cat's failed request") }
        #expect(failure?.code == .communicationsFailure || failure?.code == .matchRequestInvalid, "\(String(describing: failure))")
        let dee = try await player("Dee")
        let catAgain = MatchmakingLiveTests.find(cat, MatchmakingLiveTests.request(2, 2))
        let deeFinds = MatchmakingLiveTests.find(dee, MatchmakingLiveTests.request(2, 2))
        #expect(try await value(of: catAgain, "Cat's match").matchID == (try await value(of: deeFinds, "Dee's match")).matchID)
        #expect(try await requests(otherNode) == 2)

        for device in [ann, bob, cat, dee] { await device.close() }
        try await otherNode.stop()
    }

    /// Matchmaking with nodes reached directly (no load balancer): the first node a game's request reaches owns the
    /// game's queue, and the other forwards its devices' requests there. Ann on one node and Bob on the other match
    /// and play through the owner's relay. When the owner is killed, Cat, who waited through the other node, is told
    /// her request failed, and the survivor takes the queue over: new requests match there.
    @Test func nodesReachedDirectlyForwardMatchmakingToTheQueueOwner() async throws {
        guard LiveServer.engines.contains("postgres") else { return }
        let admin = ["--admin-key", LeaderboardsLiveTests.adminKey]
        let games = try MatchmakingLiveTests.games()
        let nodeA = try LiveServer(engine: "postgres", games: games)
        try await nodeA.start(extraArguments: admin + ["--node-id", "direct-a"])
        let nodeB = try LiveServer(database: nodeA.database, games: games)
        try await nodeB.start(extraArguments: admin + ["--node-id", "direct-b"])
        let player = { (alias: String, node: LiveServer) in try await Self.arenaPlayer(alias, at: node.url) }

        let ann = try await player("Ann", nodeA), bob = try await player("Bob", nodeB)
        let annFinds = MatchmakingLiveTests.find(ann, MatchmakingLiveTests.request(2, 2))
        let bobFinds = MatchmakingLiveTests.find(bob, MatchmakingLiveTests.request(2, 2))
        // Bounded waits: a request refused or lost between the nodes fails the test instead of holding the run.
        let (annMatch, bobMatch) = (try await value(of: annFinds, "Ann's match"), try await value(of: bobFinds, "Bob's match"))
        #expect(annMatch.matchID == bobMatch.matchID)
        #expect(try await allConnected(annMatch) == [bob.localPlayer.playerID])
        let bobInbox = MatchInbox(bobMatch), annInbox = MatchInbox(annMatch)
        try annMatch.send(Data("across nodes".utf8), to: [bob.localPlayer.playerID], with: .reliable)
        try bobMatch.send(Data("back".utf8), to: [ann.localPlayer.playerID], with: .reliable)
        try await waitUntil("Bob hears Ann through the owner's relay") { bobInbox.texts(from: ann.localPlayer.playerID) == ["across nodes"] }
        try await waitUntil("Ann hears Bob") { annInbox.texts(from: bob.localPlayer.playerID) == ["back"] }

        // One node's queue took both requests; the match names that node's relay.
        let (onA, onB) = (try await Self.matchmakingRequests(on: nodeA), try await Self.matchmakingRequests(on: nodeB))
        #expect(onA + onB == 2 && (onA == 0 || onB == 0), "one node took both requests: \(onA) and \(onB)")
        let (owner, other) = onA == 2 ? (nodeA, nodeB) : (nodeB, nodeA)
        // The other node forwarded its device's request (and nothing failed); the owner forwarded nothing.
        #expect(try await Self.metric(#"matchmaking_forwarded{outcome="answered"}"#, on: other) >= 1)
        #expect(try await Self.metric(#"matchmaking_forwarded{outcome="unreachable"}"#, on: other) == 0)
        #expect(try await Self.metric(#"matchmaking_forwarded{outcome="answered"}"#, on: owner) == 0)
        let relayURL = try Self.psqlValue(nodeA.database, "SELECT relay_url FROM matches WHERE match_id = '\(annMatch.matchID)'")
        #expect(relayURL == owner.url.absoluteString.trimmingCharacters(in: CharacterSet(charactersIn: "/")))

        // Eve waits through the other node and her device goes away: the other node tells the owner, whose queue
        // drops her request (Fay, asking on the owner, is not matched with her).
        let eve = try await player("Eve", other), fay = try await player("Fay", owner)
        let eveFinds = MatchmakingLiveTests.find(eve, MatchmakingLiveTests.request(2, 2))
        try await waitUntil("Eve's request waits in the owner's queue") { try await Self.matchmakingRequests(on: owner) == 3 }
        await eve.close()
        _ = await #expect(throws: GKError.self) { try await value(of: eveFinds, "the request of the device that closed") }
        let fayFinds = MatchmakingLiveTests.find(fay, MatchmakingLiveTests.request(2, 2))
        try await waitUntil("Fay's request waits in the owner's queue") { try await Self.matchmakingRequests(on: owner) == 4 }
        #expect(try await isStillRunning(fayFinds, after: .milliseconds(1500), because: MatchmakingLiveTests.unmatchedBecause))
        fay.matchmaker.cancel()

        // Cat waits through the other node for a third player; the owner is killed: her findMatch fails clearly.
        let cat = try await player("Cat", other)
        let catFinds = MatchmakingLiveTests.find(cat, MatchmakingLiveTests.request(3, 3))
        try await waitUntil("Cat's request waits in the owner's queue") { try await Self.matchmakingRequests(on: owner) == 5 }
        let dee = try await player("Dee", other)
        try await owner.crash()
        // Until the database no longer sees the owner alive, the other node cannot reach it, and says so.
        let unreachable = await #expect(throws: GKError.self) { try await MatchmakingLiveTests.activity(dee, group: 0) }
        #expect(unreachable?.code == .communicationsFailure && "\(unreachable!)".contains("another takes it over"), "\(String(describing: unreachable))")
        #expect(try await Self.metric(#"matchmaking_forwarded{outcome="unreachable"}"#, on: other) == 1)
        let failure = await #expect(throws: GKError.self) { try await value(of: catFinds, "Cat's failed request") }
        #expect(failure?.code == .cancelled && "\(failure!)".contains("matchmaking queue stopped"), "\(String(describing: failure))")

        // The survivor takes the queue over once the owner is no longer seen alive (until then its queue routes
        // answer 503 server.node_unavailable): new requests match there.
        try await waitUntil("the survivor takes the queue over", within: .seconds(15)) {
            (try? await MatchmakingLiveTests.activity(dee, group: 0)) != nil
        }
        #expect(
            try Self.psqlValue(other.database, "SELECT node_id FROM queue_owners WHERE game = '\(MatchmakingLiveTests.arena)\nsandbox'")
                == (owner === nodeA ? "direct-b" : "direct-a"))
        let catAgain = MatchmakingLiveTests.find(cat, MatchmakingLiveTests.request(2, 2))
        let deeFinds = MatchmakingLiveTests.find(dee, MatchmakingLiveTests.request(2, 2))
        #expect(try await value(of: catAgain, "Cat's match").matchID == (try await value(of: deeFinds, "Dee's match")).matchID)
        #expect(try await Self.matchmakingRequests(on: other) == 2)

        for device in [ann, bob, cat, dee, fay] { await device.close() }
        try await other.stop()
    }

    @Test func playersOnTwoNodesMatchByTheGamesRulesAtTheQueueOwner() async throws {
        guard LiveServer.engines.contains("postgres") else { return }
        // No test clock: nodes judge each other's liveness by it, so moving one node's clock makes the other look gone.
        let arguments = ["--admin-key", LeaderboardsLiveTests.adminKey]
        let nodeA = try LiveServer(engine: "postgres")
        try await nodeA.start(extraArguments: arguments + ["--node-id", "rules-a"])
        let nodeB = try LiveServer(database: nodeA.database)
        try await nodeB.start(extraArguments: arguments + ["--node-id", "rules-b"])
        let ranked = "com.example.tapper.Ranked"
        let (ann, _) = try await Devices.signedUp(nodeA, alias: "Ann")
        let (bob, _) = try await Devices.signedUp(nodeA, alias: "Bob")
        let (cid, _) = try await Devices.signedUp(nodeB, alias: "Cid")
        let (dan, _) = try await Devices.signedUp(nodeB, alias: "Dan")

        // Ann (node A) and Cid (node B), both eu and 15 apart, match at once whichever node owns the queue; Bob (A)
        // and Dan (B), us and 48 apart, wait (for 20 s, until their skill window widens).
        let bobMatched = Mutex(false)
        let bobFinds = Task {
            let match = try await bob.matchmaker.findMatch(for: RuleMatchmakingLiveTests.request(ranked, ["region": "us", "skill": 12]))
            bobMatched.withLock { $0 = true }
            return match
        }
        let danFinds = Task { try await dan.matchmaker.findMatch(for: RuleMatchmakingLiveTests.request(ranked, ["region": "us", "skill": 60])) }
        let annFinds = Task { try await ann.matchmaker.findMatch(for: RuleMatchmakingLiveTests.request(ranked, ["region": "eu", "skill": 10])) }
        let cidFinds = Task { try await cid.matchmaker.findMatch(for: RuleMatchmakingLiveTests.request(ranked, ["region": "eu", "skill": 25])) }
        // Bounded waits: a request lost between the nodes fails the test instead of holding the run.
        let cidMatch = try await value(of: cidFinds, "Cid's match")
        let annMatch = try await value(of: annFinds, "Ann's match")
        #expect(annMatch.matchID == cidMatch.matchID)
        #expect(annMatch.playerProperties == [cid.localPlayer.playerID: ["region": "eu", "skill": 25, "gc": [:]]])
        #expect(cidMatch.playerProperties == [ann.localPlayer.playerID: ["region": "eu", "skill": 10, "gc": [:]]])
        // One queue holds the four requests: each node answers the same activity.
        try await waitUntil("both nodes count the four requests") {
            let (onA, onB) = (try await ann.matchmaker.queryQueueActivity(ranked), try await dan.matchmaker.queryQueueActivity(ranked))
            return onA == 4 && onB == 4
        }

        try await Task.sleep(for: .seconds(1.5))
        #expect(!bobMatched.withLock { $0 }, "Bob and Dan, 48 apart, wait until their skill window widens")
        // Both ask why, each through their own node: the owner explains.
        for device in [bob, dan] {
            let why = try #require(try await device.matchmaker.explainWaiting())
            #expect(why.waiting == 1 && why.compatible == 1 && why.blockingRules == ["SkillDifference"])
        }
        // The studio asks either node about Bob and Dan: the owner answers; Ann, matched, waits with none.
        for node in [nodeA, nodeB] {
            for device in [bob, dan] {
                let (seen, status, code) = try await RuleMatchmakingLiveTests.studioView(of: device.localPlayer.playerID, on: node)
                #expect(seen?.state == .waiting && seen?.explanation?.blockingRules == ["SkillDifference"], "\(status) \(code ?? "")")
            }
            #expect(try await RuleMatchmakingLiveTests.studioView(of: ann.localPlayer.playerID, on: node).code == "matchmaking.no_such_request")
        }
        // Eve (node B, us, 14) is within Bob's window, not Dan's: she and Bob match across the nodes.
        let (eve, _) = try await Devices.signedUp(nodeB, alias: "Eve")
        let eveFinds = Task { try await eve.matchmaker.findMatch(for: RuleMatchmakingLiveTests.request(ranked, ["region": "us", "skill": 14])) }
        let eveMatch = try await value(of: eveFinds, "Eve's match")
        let bobMatch = try await value(of: bobFinds, "Bob's match")
        #expect(bobMatch.matchID == eveMatch.matchID && bobMatch.matchID != annMatch.matchID)
        #expect(eveMatch.playerProperties?[bob.localPlayer.playerID]?["skill"] == 12)
        #expect(try await allConnected(annMatch) == [cid.localPlayer.playerID])
        let alone = try #require(try await dan.matchmaker.explainWaiting())
        #expect(alone.waiting == 0 && alone.blockingRules.isEmpty)
        dan.matchmaker.cancel()
        _ = await #expect(throws: (any Error).self) { try await value(of: danFinds, "Dan's cancelled request") }

        for match in [annMatch, cidMatch, bobMatch, eveMatch] { match.disconnect() }
        for device in [ann, bob, cid, dan, eve] { await device.close() }
        try await nodeB.stop()
        try await nodeA.stop()
    }

    /// A player of the matchmaking test game, signed up through `server` (as `account`, when given; the password is
    /// `password-ALIAS`), with their realtime channel connected.
    static func arenaPlayer(_ alias: String, at server: URL, account: String? = nil) async throws -> GKGameCenter {
        let device = GKGameCenter(
            server: server, bundleID: MatchmakingLiveTests.arena, environment: .sandbox,
            storageDirectory: FileManager.default.temporaryDirectory.appendingPathComponent("device-\(UUID().uuidString)"))
        let events = device.events
        try await device.localPlayer.authenticate(
            .signUp(
                account: account ?? "\(alias.lowercased())-\(UUID().uuidString.prefix(8).lowercased())", password: "password-\(alias)", alias: alias))
        _ = try await nextEvent(events) { if case .connected = $0 { true } else { nil } }
        return device
    }

    /// Invitations with nodes reached directly: Alice, on the node that owns the game's queue, invites Bob and Carol,
    /// whose devices are on the other node. Carol declines in the Game Center app there: that node tells the owner,
    /// and Alice hears it at once (not when the invitation expires, an hour later). Bob accepts in his game, through
    /// his node: the match starts with Alice and Bob, and they play through the owner's relay.
    @Test func invitationsAcrossNodesAreAnsweredAtTheQueueOwner() async throws {
        guard LiveServer.engines.contains("postgres") else { return }
        let games = try MatchmakingLiveTests.games()
        let nodeA = try LiveServer(engine: "postgres", games: games)
        try await nodeA.start(extraArguments: ["--node-id", "invite-a"])
        let nodeB = try LiveServer(database: nodeA.database, games: games)
        try await nodeB.start(extraArguments: ["--node-id", "invite-b"])
        let carolAccount = "carol-\(UUID().uuidString.prefix(8).lowercased())"
        let alice = try await Self.arenaPlayer("Alice", at: nodeA.url)
        let bob = try await Self.arenaPlayer("Bob", at: nodeB.url)
        let carol = try await Self.arenaPlayer("Carol", at: nodeB.url, account: carolAccount)
        try await MatchmakingLiveTests.befriend(alice, bob)
        try await MatchmakingLiveTests.befriend(alice, carol)
        let (bobID, carolID) = (bob.localPlayer.playerID, carol.localPlayer.playerID)

        // Alice's request is the game's first: node A takes the queue.
        let responses = ResponseLog()
        let request = MatchmakingLiveTests.request(2, 3, invite: [bobID, carolID])
        request.inviteeResponseHandler = { player, state in responses.record(player, state) }
        let aliceTask = MatchmakingLiveTests.find(alice, request)
        try await waitUntil("Bob and Carol received the invitation") {
            bob.matchmaker.receivedInvites.count == 1 && carol.matchmaker.receivedInvites.count == 1
        }
        #expect(try Self.psqlValue(nodeA.database, "SELECT node_id FROM queue_owners WHERE game = '\(MatchmakingLiveTests.arena)\nsandbox'") == "invite-a")

        var browser = try await WebAppBrowser.signedIn(to: nodeB.url, account: carolAccount, password: "password-Carol")
        let invitationID = try #require(carol.matchmaker.receivedInvites.first).invitationID
        #expect(try await browser.submit("/invitations/decline", on: "/invitations", [("invitation", invitationID)]).status == 303)
        try await waitUntil("Alice hears Carol declined", within: .seconds(5)) { responses.states(of: carolID) == [.declined] }

        let invites = InviteInbox()
        invites.watch(bob)
        bob.matchmaker.accept(try #require(bob.matchmaker.receivedInvites.first))
        let bobMatch = try await bob.matchmaker.match(for: try await invites.next())
        let aliceMatch = try await value(of: aliceTask, "Alice's match")
        #expect(bobMatch.matchID == aliceMatch.matchID)
        #expect(try await allConnected(aliceMatch) == [bobID])
        let aliceInbox = MatchInbox(aliceMatch)
        try bobMatch.send(Data("accepted through node B".utf8), to: [alice.localPlayer.playerID], with: .reliable)
        try await waitUntil("Alice hears Bob through node A's relay") { aliceInbox.texts(from: bobID) == ["accepted through node B"] }
        let relayURL = try Self.psqlValue(nodeA.database, "SELECT relay_url FROM matches WHERE match_id = '\(aliceMatch.matchID)'")
        #expect(relayURL == nodeA.url.absoluteString.trimmingCharacters(in: CharacterSet(charactersIn: "/")))

        for device in [alice, bob, carol] { await device.close() }
        try await nodeB.stop()
        try await nodeA.stop()
    }

    /// The `matchmaking_requests` counter of `node` (requests its queue took since it started).
    static func matchmakingRequests(on node: LiveServer) async throws -> Int {
        try await metric("matchmaking_requests", on: node)
    }

    /// The value of the metric `name` (with its labels, as exported) on `node`; 0 when it has none yet.
    static func metric(_ name: String, on node: LiveServer) async throws -> Int {
        var request = URLRequest(url: node.url.appendingPathComponent("metrics"))
        request.setValue("Bearer \(LeaderboardsLiveTests.adminKey)", forHTTPHeaderField: "Authorization")
        let text = String(decoding: try await URLSession.shared.data(for: request).0, as: UTF8.self)
        return text.split(separator: "\n").first { $0.hasPrefix("\(name) ") }.flatMap { Double($0.split(separator: " ").last!) }.map {
            Int($0)
        } ?? 0
    }

    /// Ann signs up on `node` and her realtime channel is connected: her device, its events and her account name.
    static func connectedAnn(on node: LiveServer) async throws -> (GKGameCenter, AsyncStream<GKGameCenterEvent>, String) {
        let ann = Devices.make(node)
        let events = ann.events
        let account = "ann-\(UUID().uuidString.prefix(8).lowercased())"
        try await ann.localPlayer.authenticate(.signUp(account: account, password: "password-Ann", alias: "Ann"))
        _ = try await nextEvent(events) { if case .connected = $0 { true } else { nil } }
        return (ann, events, account)
    }

    /// `GET /admin/v1/nodes` on `server`.
    static func nodes(on server: LiveServer) async throws -> [NodeInfoSeen] {
        var request = URLRequest(url: server.url.appendingPathComponent("admin/v1/nodes"))
        request.setValue("Bearer \(LeaderboardsLiveTests.adminKey)", forHTTPHeaderField: "Authorization")
        let (body, _) = try await URLSession.shared.data(for: request)
        return try JSONDecoder().decode(NodeListSeen.self, from: body).nodes
    }

    /// The parts of `GET /admin/v1/nodes` the tests read.
    struct NodeListSeen: Decodable { var nodes: [NodeInfoSeen] }
    struct NodeInfoSeen: Decodable {
        var nodeID: String, httpAddress: String, udpAddress: String, publicURL: String
        var healthy: Bool, answering: Bool
        var figures: FiguresSeen?
    }
    struct FiguresSeen: Decodable { var realtimeConnections: Int, waitingRequests: Int, relayedMatches: Int }

    enum Method: String { case GET, DELETE }

    /// The HTTP status of an authenticated request of the example game to `server`.
    static func status(_ method: Method, _ path: String, on server: LiveServer, token: String) async throws -> Int {
        var request = URLRequest(url: server.url.appendingPathComponent(path))
        request.httpMethod = method.rawValue
        request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization")
        request.setValue("com.example.tapper", forHTTPHeaderField: "X-GameCenter-Bundle-ID")
        request.setValue("sandbox", forHTTPHeaderField: "X-GameCenter-Environment")
        let (_, response) = try await URLSession.shared.data(for: request)
        return (response as? HTTPURLResponse)?.statusCode ?? 0
    }

    /// Runs `sql` with `psql` on the database `url` names.
    static func psql(_ url: String, _ sql: String) throws {
        _ = try psqlValue(url, sql)
    }

    /// Runs `sql` with `psql` on the database `url` names; returns what it printed, without headers or padding.
    static func psqlValue(_ url: String, _ sql: String) throws -> String {
        let components = try #require(URLComponents(string: url))
        let psql = Process()
        psql.executableURL = URL(fileURLWithPath: "/usr/bin/psql")
        psql.arguments = [
            "-h", components.host ?? "127.0.0.1", "-p", "\(components.port ?? 5432)", "-U", components.user ?? "postgres", "-q", "-t", "-A", "-c", sql,
            String(components.path.dropFirst()),
        ]
        let output = Pipe()
        psql.standardOutput = output
        try psql.run()
        let printed = output.fileHandleForReading.readDataToEndOfFile()
        psql.waitUntilExit()
        #expect(psql.terminationStatus == 0)
        return String(decoding: printed, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }
}

/// SQLite serves one node: a second server on the same database file is refused before it opens anything.
@Suite(.timeLimit(.minutes(1))) struct SingleNodeSQLiteLiveTests {
    @Test func aSecondServerOnOneSQLiteFileIsRefused() async throws {
        let first = try LiveServer(engine: "sqlite")
        try await first.start()
        let second = try LiveServer(database: first.database)
        let refused = await #expect(throws: LiveServerError.self) { try await second.start() }
        #expect(refused.map { "\($0)" }?.contains("another gamecenter process serves the SQLite database") == true)
        // The first keeps serving; once it stops, another may start on the file.
        #expect(try await first.signUp(account: "solo-\(UUID().uuidString.prefix(8).lowercased())").isEmpty == false)
        try await first.stop()
        let third = try LiveServer(database: first.database)
        try await third.start()
        try await third.stop()
    }

    /// `gamecenter migrate` brings a database up to this build's schema once (again: nothing to do) and refuses a
    /// SQLite database a server runs on.
    @Test func migrateRunsOnceAndNeverUnderARunningServer() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("migrate-\(UUID().uuidString)")
        let url = "sqlite:\(folder.path)/gamecenter.sqlite"
        let first = try Self.migrate(url)
        #expect(first.status == 0)
        let version = try #require(Int(first.output.trimmingCharacters(in: .whitespacesAndNewlines).replacingOccurrences(of: "schema version ", with: "")))
        #expect(version >= 13)
        #expect(try Self.migrate(url).output == first.output)
        let server = try LiveServer(database: url)
        try await server.start()
        let refused = try Self.migrate(url)
        #expect(refused.status == 75 && refused.output.isEmpty)
        try await server.stop()
    }

    /// Runs `gamecenter migrate --database url`: its exit status and standard output.
    static func migrate(_ url: String) throws -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: LiveServer.binary)
        process.arguments = ["migrate", "--database", url]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: data, as: UTF8.self))
    }
}

/// Debian's haproxy in front of nodes on 127.0.0.1, with the timeouts docs/SEVERAL_NODES.md gives and checks every
/// 200 ms (one failed check takes a node out).
final class HAProxy {
    let url: URL
    private let process = Process()
    private let folder = FileManager.default.temporaryDirectory.appendingPathComponent("haproxy-\(UUID().uuidString)")

    init(backend: String, servers: [Int]) throws {
        let port = try FreePort.tcp()
        url = URL(string: "http://127.0.0.1:\(port)")!
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let config = """
            global
                maxconn 1000
            defaults
                mode http
                timeout connect 5s
                timeout client 75s
                timeout server 75s
                timeout tunnel 1h
            frontend gamecenter
                bind 127.0.0.1:\(port)
                default_backend nodes
            backend nodes
                \(backend)
            \(servers.enumerated().map { "    server node\($0.offset) 127.0.0.1:\($0.element) check inter 200ms fall 1 rise 1" }.joined(separator: "\n"))

            """
        let file = folder.appendingPathComponent("haproxy.cfg")
        try config.write(to: file, atomically: true, encoding: .utf8)
        process.executableURL = URL(fileURLWithPath: "/usr/sbin/haproxy")
        process.arguments = ["-db", "-f", file.path]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
    }

    /// Waits until haproxy passes `GET /readyz` to a node that answers it.
    func waitUntilServing() async throws {
        try await waitUntil("haproxy answers") {
            let answer = try? await URLSession.shared.data(from: url.appendingPathComponent("readyz"))
            return (answer?.1 as? HTTPURLResponse)?.statusCode == 200
        }
    }

    /// Stops haproxy (SIGTERM, SIGKILL after 5 s) and reaps it. Polls with `waitpid` rather than Foundation's
    /// `waitUntilExit()`, which was seen spinning forever on a killed child (see `LiveServer.stop()`).
    func stop() {
        let pid = process.processIdentifier
        var status: Int32 = 0
        kill(pid, SIGTERM)
        for _ in 0..<100 where waitpid(pid, &status, WNOHANG) == 0 { usleep(50_000) }
        if waitpid(pid, &status, WNOHANG) == 0 {
            kill(pid, SIGKILL)
            waitpid(pid, &status, 0)
        }
    }
}
