import Foundation
import GameCenterStorage
import Testing

/// What nodes on one PostgreSQL leave for each other in storage: notices for nodes that poll, and erasures of scores
/// for every node's boards to follow (PostgreSQL only: SQLite serves one node).
extension StorageConformanceTests {
    @Test func noticesArePostedReadInOrderByIDAndForgotten() async throws {
        guard TestDatabases.all.contains("postgres") else { return }
        try await TestDatabases.with("postgres") { db in
            let node = TestDatabases.unique("node")
            let before = try await db.read { try await $0.lastNoticeID() }
            try await db.writeStatement { try await $0.postNotices(["one", "two"], from: node, now: 1_000) }
            try await db.writeStatement { try await $0.postNotices(["three"], from: node, now: 5_000) }
            let read = try await db.read { try await $0.notices(after: before, limit: 1_000) }.filter { $0.nodeID == node }
            #expect(read.map(\.payload) == ["one", "two", "three"])
            #expect(read.map(\.noticeID) == read.map(\.noticeID).sorted() && read.allSatisfy { $0.noticeID > before })
            let byID = try await db.read { try await $0.notices(ids: [read[2].noticeID, read[0].noticeID, -1]) }
            #expect(byID.map(\.payload) == ["one", "three"])
            // Other tests post at the same time (with today's clock): only this test's old rows are forgotten.
            _ = try await db.writeStatement { try await $0.forgetNotices(before: 2_000) }
            #expect(try await db.read { try await $0.notices(after: before, limit: 1_000) }.filter { $0.nodeID == node }.map(\.payload) == ["three"])
            _ = try await db.writeStatement { try await $0.forgetNotices(before: 6_000) }
        }
    }

    @Test func erasuresOfScoresAreNotedReadInOrderAndForgotten() async throws {
        guard TestDatabases.all.contains("postgres") else { return }
        try await TestDatabases.with("postgres") { db in
            let game = TestDatabases.unique("com.example.erased")
            let before = try await db.read { try await $0.lastScoreRemovalID() }
            try await db.write { storage in
                try await storage.noteScoresRemoved(bundleID: game, playerID: "G-1", now: 1_000)
                try await storage.noteScoresRemoved(bundleID: game, playerID: "G-2", now: 5_000)
            }
            let read = try await db.read { try await $0.scoreRemovals(after: before, limit: 1_000) }.filter { $0.bundleID == game }
            #expect(read.map(\.playerID) == ["G-1", "G-2"])
            #expect(try await db.read { try await $0.lastScoreRemovalID() } >= read[1].removalID)
            #expect(try await db.read { try await $0.scoreRemovals(ids: [read[1].removalID]) }.map(\.playerID) == ["G-2"])
            try await db.write { try await $0.forgetScoreRemovals(before: 2_000) }
            #expect(try await db.read { try await $0.scoreRemovals(after: before, limit: 1_000) }.filter { $0.bundleID == game }.map(\.playerID) == ["G-2"])
            try await db.write { try await $0.forgetScoreRemovals(before: 6_000) }
        }
    }

    @Test func onSQLiteErasuresAreNotNoted() async throws {
        try await TestDatabases.with("sqlite") { db in
            // One node: nothing to tell, and no table to tell it in.
            try await db.write { try await $0.noteScoresRemoved(bundleID: "com.example.one", playerID: "G-1", now: 1_000) }
        }
    }

    /// A game's queue goes to the first node that claims it, stays with it while it is seen alive, and passes to the
    /// next claimant once it is not.
    @Test(arguments: TestDatabases.all)
    func aQueueHasOneOwnerUntilTheOwnerIsNoLongerSeen(engine: String) async throws {
        try await TestDatabases.with(engine) { db in
            let (a, b) = (TestDatabases.unique("node-a"), TestDatabases.unique("node-b"))
            let game = TestDatabases.unique("com.example.queue") + "\nsandbox"
            for (node, seen) in [(a, Int64(10_000)), (b, Int64(10_000))] {
                _ = try await db.write {
                    try await $0.registerNode(
                        NodeRecord(
                            nodeID: node, httpAddress: "127.0.0.1:1", udpAddress: "127.0.0.1:2", publicURL: "http://\(node)", startedAt: 1, lastSeen: seen),
                        aliveAfter: 0, forgetBefore: 0)
                }
            }
            #expect(try await db.write { try await $0.claimQueue(game, nodeID: a, aliveAfter: 5_000, now: 10_000) } == a)
            #expect(try await db.write { try await $0.claimQueue(game, nodeID: b, aliveAfter: 5_000, now: 10_000) } == a)
            #expect(try await db.write { try await $0.claimQueue(game, nodeID: a, aliveAfter: 5_000, now: 11_000) } == a)
            // Node A was last seen at 10 s: by 17 s it is not alive, and B takes the queue.
            #expect(try await db.write { try await $0.claimQueue(game, nodeID: b, aliveAfter: 11_000, now: 17_000) } == b)
            #expect(try await db.write { try await $0.claimQueue(game, nodeID: a, aliveAfter: 5_000, now: 17_000) } == b)
            #expect(try await db.read { try await $0.nodes() }.first { $0.nodeID == a }?.publicURL == "http://\(a)")
            // A heartbeat stores what the node serves; before the first, `{}`.
            #expect(try await db.read { try await $0.nodes() }.first { $0.nodeID == b }?.figures == "{}")
            let figures = #"{"realtimeConnections":3,"relayedMatches":1,"waitingRequests":2}"#
            let beat = NodeRecord(
                nodeID: b, httpAddress: "127.0.0.1:1", udpAddress: "127.0.0.1:2", publicURL: "http://\(b)", startedAt: 1, lastSeen: 18_000, figures: figures)
            #expect(try await db.write { try await $0.touchNode(beat, now: 18_000) })
            #expect(try await db.read { try await $0.nodes() }.first { $0.nodeID == b } == beat)
            // A heartbeat that read the addresses before the node listened leaves those a later one stored.
            let early = NodeRecord(nodeID: b, httpAddress: "", udpAddress: "", publicURL: "", startedAt: 1, lastSeen: 19_000, figures: figures)
            #expect(try await db.write { try await $0.touchNode(early, now: 19_000) })
            var kept = beat
            kept.lastSeen = 19_000
            #expect(try await db.read { try await $0.nodes() }.first { $0.nodeID == b } == kept)
        }
    }

    @Test(arguments: TestDatabases.all)
    func theClusterKeyIsTheFirstOneStored(engine: String) async throws {
        try await TestDatabases.with(engine) { db in
            let first = try await db.write { try await $0.clusterKey(candidate: TestDatabases.unique("key")) }
            #expect(try await db.write { try await $0.clusterKey(candidate: TestDatabases.unique("key")) } == first)
            #expect(!first.isEmpty)
        }
    }
}
