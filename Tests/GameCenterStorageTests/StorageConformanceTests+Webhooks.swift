import Foundation
import GameCenterStorage
import Testing

/// Webhook endpoints, deliveries and the dispatcher's lease, the same on both engines.
extension StorageConformanceTests {
    @Test(arguments: TestDatabases.all)
    func webhookDeliveriesAreStoredOnceListedInOrderRetriedReplayedAndForgotten(engine: String) async throws {
        try await TestDatabases.with(engine) { db in
            let endpoint = WebhookEndpointRecord(
                endpointID: TestDatabases.unique("wh"), bundleID: "com.example.hooks", environment: "sandbox", url: "http://127.0.0.1:9/x",
                secret: "whsec_test", events: ["score.accepted"], afterScoreID: 0, afterEventID: 0, afterGameEventID: 0, afterOccurrenceID: 0,
                createdAt: 1_000)
            try await db.write { try await $0.insertWebhookEndpoint(endpoint) }
            let made = (1...3).map {
                NewWebhookDelivery(endpointID: endpoint.endpointID, eventID: "score-\($0)", eventType: "score.accepted", orderKey: "G:\($0 % 2)", payload: "{}")
            }
            try await db.write { try await $0.insertWebhookDeliveries(made, now: 2_000, expiresAt: 10_000) }
            // The same events again (a node that took the lease over reads them again): stored once.
            try await db.write { try await $0.insertWebhookDeliveries(made, now: 3_000, expiresAt: 10_000) }
            let pending = try await db.read { try await $0.pendingWebhookDeliveries(endpointID: endpoint.endpointID, limit: 10) }
            #expect(pending.map(\.eventID) == ["score-1", "score-2", "score-3"])
            #expect(pending.map(\.orderKey) == ["G:1", "G:0", "G:1"] && pending.allSatisfy { $0.state == "pending" && $0.createdAt == 2_000 })
            #expect(try await db.read { try await $0.webhookEndpointsWithPendingDeliveries(among: [endpoint.endpointID, "wh-none"]) } == [endpoint.endpointID])

            try await db.write { try await $0.markWebhooksDelivered([pending[0].deliveryID], now: 4_000) }
            try await db.write {
                try await $0.markWebhookFailed(pending[1].deliveryID, attempts: 1, nextAttemptAt: 5_000, error: "the endpoint answered 503", dead: false)
                try await $0.markWebhookFailed(pending[2].deliveryID, attempts: 9, nextAttemptAt: 20_000, error: "no answer", dead: true)
            }
            let all = try await db.read { try await $0.webhookDeliveries(endpointID: endpoint.endpointID, state: nil, limit: 10) }
            #expect(all.map(\.state) == ["dead", "pending", "delivered"], "newest first")
            #expect(all[2].attempts == 1 && all[2].deliveredAt == 4_000 && all[1].nextAttemptAt == 5_000 && all[1].lastError == "the endpoint answered 503")
            // Only a dead delivery is replayed, and only for its own endpoint.
            #expect(
                try await db.write { try await $0.replayWebhookDelivery(pending[1].deliveryID, endpointID: endpoint.endpointID, now: 6_000, expiresAt: 99_000) }
                    == false)
            #expect(
                try await db.write { try await $0.replayWebhookDelivery(pending[2].deliveryID, endpointID: "wh-other", now: 6_000, expiresAt: 99_000) } == false
            )
            #expect(
                try await db.write { try await $0.replayWebhookDelivery(pending[2].deliveryID, endpointID: endpoint.endpointID, now: 6_000, expiresAt: 99_000) }
            )
            let replayed = try await db.read { try await $0.webhookDeliveries(endpointID: endpoint.endpointID, state: "pending", limit: 10) }
            #expect(replayed.map(\.eventID) == ["score-3", "score-2"] && replayed[0].attempts == 0 && replayed[0].expiresAt == 99_000)

            // Delivered before 5_000 and dead before 0: the delivered one goes, the pending ones stay.
            #expect(try await db.write { try await $0.forgetWebhookDeliveries(deliveredBefore: 5_000, deadBefore: 0, limit: 100) } == 1)
            #expect(try await db.read { try await $0.webhookDeliveries(endpointID: endpoint.endpointID, state: nil, limit: 10) }.count == 2)
            #expect(try await db.write { try await $0.deleteWebhookEndpoint(id: endpoint.endpointID) })
            #expect(try await db.read { try await $0.webhookDeliveries(endpointID: endpoint.endpointID, state: nil, limit: 10) }.isEmpty)
        }
    }

    @Test(arguments: TestDatabases.all)
    func gameEventsAndOccurrenceEventsAreReadInOrderAfterACursorAndByIDForWebhooks(engine: String) async throws {
        try await TestDatabases.with(engine) { db in
            let bundleID = TestDatabases.unique("com.example.outbox")
            let before = try await db.read { try await $0.lastGameEventID() }
            let (first, second) = try await db.write { storage in
                (
                    try await storage.appendGameEvent(
                        bundleID: bundleID, environment: "sandbox", kind: "match.ended", orderKey: "m-1", payload: #"{"matchID":"m-1"}"#, now: 5_000),
                    try await storage.appendGameEvent(
                        bundleID: bundleID, environment: "live", kind: "match.ended", orderKey: "m-2", payload: #"{"matchID":"m-2"}"#, now: 6_000)
                )
            }
            #expect(first > before && second > first)
            #expect(try await db.read { try await $0.lastGameEventID() } >= second)
            let read = try await db.read { try await $0.gameEvents(after: before, limit: 100) }.filter { $0.bundleID == bundleID }
            #expect(read.map(\.eventID) == [first, second] && read.map(\.environment) == ["sandbox", "live"] && read.map(\.orderKey) == ["m-1", "m-2"])
            #expect(read.allSatisfy { $0.kind == "match.ended" } && read.map(\.createdAt) == [5_000, 6_000])
            #expect(read.map(\.payload) == [#"{"matchID":"m-1"}"#, #"{"matchID":"m-2"}"#])
            #expect(try await db.read { try await $0.gameEvents(after: first, limit: 100) }.map(\.eventID).contains(first) == false)
            #expect(try await db.read { try await $0.gameEvents(ids: [second, first, -1]) }.map(\.eventID) == [first, second], "in order; missing skipped")

            // Occurrence starts and ends of every game, with their game.
            let started = try await db.write {
                try await $0.recordOccurrenceEvent(
                    NewOccurrenceEvent(
                        bundleID: bundleID, environment: "sandbox", category: "weekly", occurrence: 1_000, occurrenceEnd: 2_000, kind: "started",
                        recordedAt: 1_000, standings: "[]"))
            }
            let ended = try await db.write {
                try await $0.recordOccurrenceEvent(
                    NewOccurrenceEvent(
                        bundleID: bundleID, environment: "sandbox", category: "weekly", occurrence: 1_000, occurrenceEnd: 2_000, kind: "ended",
                        recordedAt: 2_000, standings: "[1]"))
            }
            let startedID = try #require(started)
            let endedID = try #require(ended)
            #expect(try await db.read { try await $0.lastOccurrenceEventID() } >= endedID)
            let occurrences = try await db.read { try await $0.occurrenceEvents(after: startedID - 1, limit: 100) }.filter { $0.bundleID == bundleID }
            #expect(occurrences.map(\.kind) == ["started", "ended"] && occurrences.map(\.eventID) == [startedID, endedID])
            #expect(occurrences[1].standings == "[1]" && occurrences[1].occurrenceEnd == 2_000)
            #expect(try await db.read { try await $0.occurrenceEvents(ids: [endedID, startedID]) }.map(\.eventID) == [startedID, endedID])

            // An endpoint keeps where it starts hearing of each source.
            let endpoint = WebhookEndpointRecord(
                endpointID: TestDatabases.unique("wh"), bundleID: bundleID, environment: "sandbox", url: "http://127.0.0.1:9/x", secret: "whsec_test",
                events: ["match.ended", "occurrence.ended"], afterScoreID: 1, afterEventID: 2, afterGameEventID: second, afterOccurrenceID: endedID,
                createdAt: 1_000)
            try await db.write { try await $0.insertWebhookEndpoint(endpoint) }
            #expect(try await db.read { try await $0.webhookEndpoints(bundleID: bundleID) } == [endpoint])
            _ = try await db.write { try await $0.deleteWebhookEndpoint(id: endpoint.endpointID) }
        }
    }

    @Test(arguments: TestDatabases.all)
    func oneNodeHoldsTheWebhookLeaseUntilItLapses(engine: String) async throws {
        try await TestDatabases.with(engine) { db in
            // Far in the future, so that a lease another run left behind has lapsed.
            let now = Int64(1) << 50
            let (first, second) = (TestDatabases.unique("node-a"), TestDatabases.unique("node-b"))
            #expect(try await db.write { try await $0.takeWebhookLease(nodeID: first, now: now, until: now + 10_000) })
            #expect(try await db.write { try await $0.takeWebhookLease(nodeID: second, now: now + 5_000, until: now + 15_000) } == false)
            #expect(try await db.write { try await $0.takeWebhookLease(nodeID: first, now: now + 5_000, until: now + 15_000) }, "renewed")
            #expect(try await db.write { try await $0.takeWebhookLease(nodeID: second, now: now + 14_000, until: now + 24_000) } == false)
            #expect(try await db.write { try await $0.takeWebhookLease(nodeID: second, now: now + 15_001, until: now + 25_000) }, "lapsed: taken over")
            try await db.write { try await $0.releaseWebhookLease(nodeID: first) }
            #expect(
                try await db.write { try await $0.takeWebhookLease(nodeID: first, now: now + 16_000, until: now + 26_000) } == false,
                "not the holder's to release")
            try await db.write { try await $0.releaseWebhookLease(nodeID: second) }
            #expect(try await db.write { try await $0.takeWebhookLease(nodeID: first, now: now + 16_000, until: now + 26_000) })
            try await db.write { try await $0.releaseWebhookLease(nodeID: first) }
        }
    }
}
