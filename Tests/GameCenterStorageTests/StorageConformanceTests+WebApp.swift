import Foundation
import GameCenterStorage
import Testing

/// The storage queries the web app added, on every engine in ``TestDatabases/all``.
extension StorageConformanceTests {
    @Test(arguments: TestDatabases.all)
    func playersAreFoundByAccountNameOrExactAliasInTheirEnvironment(engine: String) async throws {
        try await TestDatabases.with(engine) { db in
            let alias = TestDatabases.unique("Twin")
            let first = {
                var player = newPlayer(); player.alias = alias; return player
            }()
            let second = {
                var player = newPlayer(); player.alias = alias; player.createdAt = 2_000; return player
            }()
            let named = newPlayer()
            let live = {
                var player = newPlayer("live"); player.alias = alias; return player
            }()
            try await db.write { storage in
                for player in [first, second, named, live] { _ = try await storage.insertPlayer(player) }
            }
            let byAlias = try await db.read { try await $0.players(environment: "sandbox", accountNameOrAlias: alias) }
            #expect(byAlias.map(\.playerID) == [first.playerID, second.playerID])
            // Account names are matched case-insensitively (they are stored lower-cased); aliases exactly.
            let byName = try await db.read { try await $0.players(environment: "sandbox", accountNameOrAlias: named.accountName.uppercased()) }
            #expect(byName.map(\.playerID) == [named.playerID])
            #expect(try await db.read { try await $0.players(environment: "sandbox", accountNameOrAlias: alias.lowercased()) }.isEmpty)
            #expect(try await db.read { try await $0.players(environment: "live", accountNameOrAlias: alias) }.map(\.playerID) == [live.playerID])
        }
    }

    /// A game's sign-in through the app is confirmed or declined once: "Not now" is kept (the device hears it), and a
    /// declined request can no longer be confirmed, nor a confirmed one declined.
    @Test(arguments: TestDatabases.all)
    func aDeviceSignInIsConfirmedOrDeclinedOnce(engine: String) async throws {
        try await TestDatabases.with(engine) { db in
            let player = newPlayer()
            func request() -> DeviceSignInRecord {
                DeviceSignInRecord(
                    requestID: TestDatabases.unique("dsi"), secretHash: "h1", bundleID: "com.example.open", environment: "sandbox",
                    playerID: nil, expiresAt: 10_000)
            }
            let declined = request(), confirmed = request(), late = request()
            try await db.write { storage in
                _ = try await storage.insertPlayer(player)
                try await storage.insertDeviceSignIn(declined, now: 1_000)
                try await storage.insertDeviceSignIn(confirmed, now: 1_000)
            }
            #expect(try await db.write { try await $0.declineDeviceSignIn(requestID: declined.requestID, now: 2_000) })
            #expect(try await db.read { try await $0.deviceSignIn(requestID: declined.requestID) }?.declinedAt == 2_000)
            #expect(try await db.write { try await $0.declineDeviceSignIn(requestID: declined.requestID, now: 2_500) } == false)
            #expect(try await db.write { try await $0.confirmDeviceSignIn(requestID: declined.requestID, playerID: player.playerID, now: 3_000) } == false)
            #expect(try await db.write { try await $0.confirmDeviceSignIn(requestID: confirmed.requestID, playerID: player.playerID, now: 3_000) })
            #expect(try await db.write { try await $0.declineDeviceSignIn(requestID: confirmed.requestID, now: 3_500) } == false)
            let taken = try await db.write { try await $0.takeConfirmedDeviceSignIn(requestID: confirmed.requestID, secretHash: "h1") }
            #expect(taken?.playerID == player.playerID && taken?.declinedAt == nil)
            // Expired requests are neither confirmed nor declined.
            try await db.write { try await $0.insertDeviceSignIn(late, now: 1_000) }
            #expect(try await db.write { try await $0.declineDeviceSignIn(requestID: late.requestID, now: 10_000) } == false)
        }
    }

    @Test(arguments: TestDatabases.all)
    func sentFriendRequestsAreListedWhilePending(engine: String) async throws {
        try await TestDatabases.with(engine) { db in
            let a = newPlayer(), b = newPlayer(), c = newPlayer()
            try await db.write { storage in
                for player in [a, b, c] { _ = try await storage.insertPlayer(player) }
            }
            let toB = FriendRequestRecord(
                requestID: TestDatabases.unique("fr"), fromPlayer: a.playerID, toPlayer: b.playerID,
                message: nil, status: .pending, createdAt: 1_000)
            let toC = FriendRequestRecord(
                requestID: TestDatabases.unique("fr"), fromPlayer: a.playerID, toPlayer: c.playerID,
                message: nil, status: .pending, createdAt: 2_000)
            try await db.write { storage in
                _ = try await storage.insertFriendRequest(toB)
                _ = try await storage.insertFriendRequest(toC)
            }
            #expect(try await db.read { try await $0.pendingFriendRequests(from: a.playerID) } == [toB, toC])
            _ = try await db.write { try await $0.answerFriendRequest(id: toB.requestID, recipient: b.playerID, status: .declined, now: 3_000) }
            #expect(try await db.read { try await $0.pendingFriendRequests(from: a.playerID) } == [toC])
            #expect(try await db.read { try await $0.pendingFriendRequests(from: b.playerID) }.isEmpty)
        }
    }

    @Test(arguments: TestDatabases.all)
    func achievementRarityCountsCompletionsAmongThePlayersOfTheGame(engine: String) async throws {
        try await TestDatabases.with(engine) { db in
            let game = TestDatabases.unique("com.example.rare")
            let a = newPlayer(), b = newPlayer(), c = newPlayer(), other = newPlayer("live")
            try await db.write { storage in
                for player in [a, b, c, other] {
                    _ = try await storage.insertPlayer(player)
                    try await storage.recordPlayedGame(playerID: player.playerID, bundleID: game, now: 1_000)
                }
            }
            for (player, identifier, percent) in [(a, "x", 100.0), (b, "x", 100), (c, "x", 50), (a, "y", 100), (other, "y", 100)] {
                _ = try await db.writeStatement {
                    try await $0.reportAchievements(
                        reportID: UUID().uuidString, [AchievementReportEntry(identifier: identifier, percent: percent, completionEvent: "{}")],
                        bundleID: game, playerID: player.playerID, eventKind: "achievementCompleted", now: 1_000)
                }
            }
            let rarity = try await db.read { try await $0.achievementRarity(bundleID: game, environment: "sandbox") }
            #expect(rarity == AchievementRarityRecord(players: 3, completions: ["x": 2, "y": 1]))
            let none = try await db.read { try await $0.achievementRarity(bundleID: "com.example.none", environment: "sandbox") }
            #expect(none == AchievementRarityRecord(players: 0, completions: [:]))
        }
    }
}
