import Foundation
import GameCenterStorage
import Testing

extension StorageConformanceTests {
    /// A turn that keeps the match's members (one statement on PostgreSQL): stored only at the version read, its data
    /// only when sent, its events numbered after each player's last, several for one player in the order given.
    @Test(arguments: TestDatabases.all)
    func aTurnChangeIsStoredOnlyAtTheVersionReadAndNumbersItsEventsInOrder(engine: String) async throws {
        try await TestDatabases.with(engine) { db in
            let (a, b) = (newPlayer(), newPlayer())
            try await db.write { storage in
                _ = try await storage.insertPlayer(a)
                _ = try await storage.insertPlayer(b)
                _ = try await storage.appendEvents([(a.playerID, "earlier")], kind: "other", now: 1)
            }
            let first = TurnMatchRecord(
                matchID: TestDatabases.unique("M"), bundleID: "com.example.turns", environment: "sandbox", version: 1, status: 1, seats: 2,
                playerGroup: 0, openSeats: 0, deadline: nil, createdAt: 1, state: #"{"turn":1}"#)
            let members = [TurnMatchMember(playerID: a.playerID, playing: true), TurnMatchMember(playerID: b.playerID, playing: true)]
            try await db.write { try await $0.insertTurnMatch(first, data: Data("first".utf8), members: members) }
            func events(_ player: PlayerRecord) async throws -> [String] {
                try await db.read { try await $0.events(playerID: player.playerID, after: 0, limit: 10) }.map { "\($0.seq) \($0.kind) \($0.payload)" }
            }

            var second = first
            (second.version, second.state, second.deadline) = (2, #"{"turn":2}"#, 5_000)
            let stored = try await db.writeStatement { [second] storage in
                try await storage.storeTurnChange(
                    second, expectedVersion: 1, data: Data("second".utf8), events: [(b.playerID, "b1"), (a.playerID, "a1"), (b.playerID, "b2")],
                    kind: "turnBased", now: 10)
            }
            #expect(stored)
            #expect(try await db.read { try await $0.turnMatch(id: first.matchID) } == second)
            #expect(try await db.read { try await $0.turnMatchData(id: first.matchID) } == Data("second".utf8))
            #expect(try await events(a) == ["1 other earlier", "2 turnBased a1"])
            #expect(try await events(b) == ["1 turnBased b1", "2 turnBased b2"])

            // A write based on the old version stores nothing: not the match, not its data, not its events.
            var stale = first
            (stale.version, stale.state) = (2, #"{"stale":true}"#)
            let staleStored = try await db.writeStatement { [stale] storage in
                try await storage.storeTurnChange(
                    stale, expectedVersion: 1, data: Data("stale".utf8), events: [(a.playerID, "lost")], kind: "turnBased", now: 11)
            }
            #expect(!staleStored)
            #expect(try await db.read { try await $0.turnMatch(id: first.matchID) } == second)
            #expect(try await db.read { try await $0.turnMatchData(id: first.matchID) } == Data("second".utf8))
            #expect(try await events(a) == ["1 other earlier", "2 turnBased a1"])

            // An event for a player who does not exist fails the whole change: nothing of it is stored.
            var lost = second
            (lost.version, lost.state) = (3, #"{"lost":true}"#)
            await #expect(throws: (any Error).self) {
                try await db.writeStatement { [lost] storage in
                    try await storage.storeTurnChange(
                        lost, expectedVersion: 2, data: Data("lost".utf8), events: [(a.playerID, "a2"), ("G:nobody", "x")], kind: "turnBased", now: 11)
                }
            }
            #expect(try await db.read { try await $0.turnMatch(id: first.matchID) } == second)
            #expect(try await events(a) == ["1 other earlier", "2 turnBased a1"])

            // No data sent: the stored data stays.
            var third = second
            (third.version, third.deadline) = (3, nil)
            let thirdStored = try await db.writeStatement { [third] storage in
                try await storage.storeTurnChange(third, expectedVersion: 2, data: nil, events: [], kind: "turnBased", now: 12)
            }
            #expect(thirdStored)
            #expect(try await db.read { try await $0.turnMatch(id: first.matchID) } == third)
            #expect(try await db.read { try await $0.turnMatchData(id: first.matchID) } == Data("second".utf8))
        }
    }
}
