import Foundation
import GameCenterStorage
import Testing

/// The storage contract, run on every engine in ``TestDatabases/all``.
@Suite struct StorageConformanceTests {
    func newPlayer(_ environment: String = "sandbox", account: String? = nil, underage: Bool = false) -> PlayerRecord {
        PlayerRecord(
            playerID: TestDatabases.unique("G"), environment: environment, accountName: account ?? TestDatabases.unique("acct"),
            passwordHash: "hash", alias: "Alias", underage: underage, createdAt: 1_000
        )
    }

    @Test(arguments: TestDatabases.all)
    func accountNamesAreUniquePerEnvironment(engine: String) async throws {
        try await TestDatabases.with(engine) { db in
            let name = TestDatabases.unique("name")
            let first = newPlayer(account: name)
            #expect(try await db.write { try await $0.insertPlayer(first) })
            #expect(try await db.write { try await $0.insertPlayer(self.newPlayer(account: name)) } == false)
            #expect(try await db.write { try await $0.insertPlayer(self.newPlayer("live", account: name)) })
            let loaded = try await db.read { try await $0.player(environment: "sandbox", accountName: name) }
            #expect(loaded == first)
        }
    }

    @Test(arguments: TestDatabases.all)
    func playersAreLoadedOnlyFromTheirEnvironment(engine: String) async throws {
        try await TestDatabases.with(engine) { db in
            let sandbox = newPlayer()
            let live = newPlayer("live")
            try await db.write { storage in
                _ = try await storage.insertPlayer(sandbox)
                _ = try await storage.insertPlayer(live)
            }
            let found = try await db.read { try await $0.players(ids: [sandbox.playerID, live.playerID, "G:none"], environment: "sandbox") }
            #expect(found.map(\.playerID) == [sandbox.playerID])
        }
    }

    @Test(arguments: TestDatabases.all)
    func profileUpdatesChangeOnlyWhatIsGiven(engine: String) async throws {
        try await TestDatabases.with(engine) { db in
            let player = newPlayer()
            _ = try await db.write { try await $0.insertPlayer(player) }
            let withStatus = try await db.write { try await $0.updateProfile(playerID: player.playerID, alias: nil, status: "Hello", now: 2_000) }
            #expect(withStatus?.status == "Hello")
            #expect(withStatus?.alias == "Alias")
            let renamed = try await db.write { try await $0.updateProfile(playerID: player.playerID, alias: ("New", "New"), status: nil, now: 3_000) }
            #expect(renamed?.alias == "New")
            #expect(renamed?.status == "Hello")
            let cleared = try await db.write { try await $0.updateProfile(playerID: player.playerID, alias: nil, status: "", now: 4_000) }
            #expect(cleared?.status == nil)
        }
    }

    @Test(arguments: TestDatabases.all)
    func aLookAlikeIsAnotherPlayersAliasWithTheSameSkeletonInTheSameEnvironment(engine: String) async throws {
        try await TestDatabases.with(engine) { db in
            // Skeletons are unique to this run: the PostgreSQL test database is shared with other tests.
            let skeleton = TestDatabases.unique("skeleton")
            var bob = newPlayer()
            bob.alias = "Bob"
            var live = newPlayer("live")
            live.alias = "B0b"
            try await db.write { [bob, live] storage in
                _ = try await storage.insertPlayer(bob, aliasSkeleton: skeleton)
                _ = try await storage.insertPlayer(live, aliasSkeleton: skeleton)
            }
            let newcomer = TestDatabases.unique("G")
            func lookAlike(_ alias: String, in environment: String = "sandbox", otherThan playerID: String = newcomer) async throws -> String? {
                try await db.read { try await $0.lookAlikeAlias(environment: environment, skeleton: skeleton, alias: alias, otherThan: playerID) }
            }
            #expect(try await lookAlike("Вob") == "Bob")
            #expect(try await lookAlike("Bob") == nil, "the same alias is not a look-alike")
            #expect(try await lookAlike("Вob", otherThan: bob.playerID) == nil, "a player's own alias is not a look-alike")
            #expect(try await lookAlike("Вob", in: "live") == "B0b")
            let other = try await db.read {
                try await $0.lookAlikeAlias(environment: "sandbox", skeleton: TestDatabases.unique("skeleton"), alias: "Вob", otherThan: newcomer)
            }
            #expect(other == nil)
        }
    }

    @Test(arguments: TestDatabases.all)
    func playersStoredWithoutASkeletonAreListedUntilTheyHaveOne(engine: String) async throws {
        try await TestDatabases.with(engine) { db in
            let player = newPlayer()
            _ = try await db.write { try await $0.insertPlayer(player) }
            // Other tests' players may be listed too: page until this one shows up.
            var missing = try await db.read { try await $0.playersWithoutAliasSkeleton(limit: 100_000) }
            #expect(missing.contains { $0.playerID == player.playerID && $0.alias == "Alias" })
            try await db.write { try await $0.setAliasSkeleton(playerID: player.playerID, alias: "Changed meanwhile", skeleton: "x") }
            missing = try await db.read { try await $0.playersWithoutAliasSkeleton(limit: 100_000) }
            #expect(missing.contains { $0.playerID == player.playerID }, "a skeleton for an alias the player no longer has is not stored")
            try await db.write { try await $0.setAliasSkeleton(playerID: player.playerID, alias: "Alias", skeleton: "Alias") }
            missing = try await db.read { try await $0.playersWithoutAliasSkeleton(limit: 100_000) }
            #expect(!missing.contains { $0.playerID == player.playerID })
        }
    }

    @Test(arguments: TestDatabases.all)
    func playersAreLoadedWithFriendshipAsSeenByTheViewer(engine: String) async throws {
        try await TestDatabases.with(engine) { db in
            let viewer = newPlayer(), friend = newPlayer(), stranger = newPlayer()
            try await db.write { storage in
                for player in [viewer, friend, stranger] { _ = try await storage.insertPlayer(player) }
                try await storage.insertFriendship(viewer.playerID, friend.playerID, now: 1_000)
            }
            let seen = try await db.read {
                try await $0.players(ids: [friend.playerID, stranger.playerID], environment: "sandbox", asSeenBy: viewer.playerID)
            }
            #expect(Dictionary(uniqueKeysWithValues: seen.map { ($0.player.playerID, $0.isFriend) }) == [friend.playerID: true, stranger.playerID: false])
        }
    }

    @Test(arguments: TestDatabases.all)
    func aFailedTransactionChangesNothing(engine: String) async throws {
        struct Abort: Error {}
        try await TestDatabases.with(engine) { db in
            let player = newPlayer()
            await #expect(throws: Abort.self) {
                try await db.write { storage -> Void in
                    _ = try await storage.insertPlayer(player)
                    throw Abort()
                }
            }
            let stored = try await db.read { try await $0.player(id: player.playerID) }
            #expect(stored == nil)
        }
    }

    @Test(arguments: TestDatabases.all)
    func sessionsAreRevokedOneOrAllButCurrent(engine: String) async throws {
        try await TestDatabases.with(engine) { db in
            let player = newPlayer()
            _ = try await db.write { try await $0.insertPlayer(player) }
            let sessions = (0..<3).map { index in
                SessionRecord(
                    sessionID: TestDatabases.unique("s"), tokenHash: TestDatabases.unique("h"), playerID: player.playerID,
                    bundleID: "com.example.game", environment: "sandbox", createdAt: 1_000 + Int64(index), expiresAt: 10_000)
            }
            try await db.write { storage in
                for session in sessions { try await storage.insertSession(session) }
            }
            #expect(try await db.read { try await $0.session(tokenHash: sessions[0].tokenHash) } == sessions[0])
            #expect(try await db.write { try await $0.revokeSession(sessionID: sessions[0].sessionID, playerID: player.playerID, now: 2_000) })
            #expect(try await db.write { try await $0.revokeSession(sessionID: sessions[0].sessionID, playerID: player.playerID, now: 2_000) } == false)
            let revoked = try await db.write { try await $0.revokeSessions(playerID: player.playerID, keeping: sessions[2].sessionID, now: 3_000) }
            #expect(revoked == [sessions[1].sessionID])
            let active = try await db.read { try await $0.activeSessions(playerID: player.playerID, now: 3_000) }
            #expect(active.map(\.sessionID) == [sessions[2].sessionID])
            #expect(try await db.read { try await $0.activeSessions(playerID: player.playerID, now: 10_000) }.isEmpty)
            #expect(try await db.read { try await $0.session(tokenHash: sessions[0].tokenHash) }?.revokedAt == 2_000)
        }
    }

    @Test(arguments: TestDatabases.all)
    func signInFailuresAreStoredAndCleared(engine: String) async throws {
        try await TestDatabases.with(engine) { db in
            let name = TestDatabases.unique("n")
            #expect(try await db.read { try await $0.signInFailures(environment: "sandbox", accountName: name) } == nil)
            try await db.write { try await $0.setSignInFailures(environment: "sandbox", accountName: name, .init(failures: 1, windowStart: 5, lockedUntil: 0)) }
            try await db.write {
                try await $0.setSignInFailures(environment: "sandbox", accountName: name, .init(failures: 6, windowStart: 5, lockedUntil: 99))
            }
            #expect(
                try await db.read { try await $0.signInFailures(environment: "sandbox", accountName: name) }
                    == .init(failures: 6, windowStart: 5, lockedUntil: 99))
            #expect(try await db.read { try await $0.signInFailures(environment: "live", accountName: name) } == nil)
            try await db.write { try await $0.clearSignInFailures(environment: "sandbox", accountName: name) }
            #expect(try await db.read { try await $0.signInFailures(environment: "sandbox", accountName: name) } == nil)
        }
    }

    @Test(arguments: TestDatabases.all)
    func friendRequestsArePendingOnceAndAnsweredOnce(engine: String) async throws {
        try await TestDatabases.with(engine) { db in
            let a = newPlayer(), b = newPlayer()
            try await db.write { storage in
                _ = try await storage.insertPlayer(a)
                _ = try await storage.insertPlayer(b)
            }
            let request = FriendRequestRecord(
                requestID: TestDatabases.unique("fr"), fromPlayer: a.playerID, toPlayer: b.playerID,
                message: "hi", status: .pending, createdAt: 1_000)
            #expect(try await db.write { try await $0.insertFriendRequest(request) })
            let duplicate = FriendRequestRecord(
                requestID: TestDatabases.unique("fr"), fromPlayer: a.playerID, toPlayer: b.playerID,
                message: "hi", status: .pending, createdAt: 1_000)
            #expect(try await db.write { try await $0.insertFriendRequest(duplicate) } == false)
            #expect(try await db.read { try await $0.pendingFriendRequests(to: b.playerID) } == [request])
            #expect(try await db.read { try await $0.pendingFriendRequest(from: a.playerID, to: b.playerID) } == request)
            // Only the recipient can answer.
            #expect(try await db.write { try await $0.answerFriendRequest(id: request.requestID, recipient: a.playerID, status: .accepted, now: 2_000) } == nil)
            let answered = try await db.write { try await $0.answerFriendRequest(id: request.requestID, recipient: b.playerID, status: .accepted, now: 2_000) }
            #expect(answered?.status == .accepted)
            #expect(try await db.write { try await $0.answerFriendRequest(id: request.requestID, recipient: b.playerID, status: .declined, now: 3_000) } == nil)
            #expect(try await db.read { try await $0.friendRequest(id: request.requestID) }?.status == .accepted)
            #expect(try await db.read { try await $0.pendingFriendRequests(to: b.playerID) }.isEmpty)
            // Once answered, a new request between the same players may be sent again.
            #expect(try await db.write { try await $0.insertFriendRequest(duplicate) })
        }
    }

    @Test(arguments: TestDatabases.all)
    func friendshipsGoBothWays(engine: String) async throws {
        try await TestDatabases.with(engine) { db in
            let a = newPlayer(), b = newPlayer(), c = newPlayer()
            try await db.write { storage in
                for player in [a, b, c] { _ = try await storage.insertPlayer(player) }
                try await storage.insertFriendship(a.playerID, b.playerID, now: 1_000)
                try await storage.insertFriendship(a.playerID, b.playerID, now: 1_000)
                try await storage.insertFriendship(a.playerID, c.playerID, now: 2_000)
            }
            #expect(try await db.read { try await $0.friendIDs(of: a.playerID) } == [b.playerID, c.playerID])
            #expect(try await db.read { try await $0.friendIDs(of: b.playerID) } == [a.playerID])
            #expect(try await db.read { try await $0.friends(of: b.playerID, among: [a.playerID, c.playerID]) } == [a.playerID])
            #expect(try await db.write { try await $0.deleteFriendship(b.playerID, a.playerID) })
            #expect(try await db.write { try await $0.deleteFriendship(b.playerID, a.playerID) } == false)
            #expect(try await db.read { try await $0.friendIDs(of: a.playerID) } == [c.playerID])
        }
    }

    @Test(arguments: TestDatabases.all)
    func concurrentEventsGetGaplessPerPlayerSequenceNumbers(engine: String) async throws {
        try await TestDatabases.with(engine) { db in
            let a = newPlayer(), b = newPlayer()
            try await db.write { storage in
                _ = try await storage.insertPlayer(a)
                _ = try await storage.insertPlayer(b)
            }
            let seqs = try await withThrowingTaskGroup(of: Int64.self) { group in
                for index in 0..<40 {
                    group.addTask {
                        try await db.write {
                            try await $0.appendEvent(
                                playerID: index.isMultiple(of: 2) ? a.playerID : b.playerID,
                                kind: "test", payload: "{\"n\":\(index)}", now: 1_000)
                        }
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(seqs.count == 40)
            let eventsA = try await db.read { try await $0.events(playerID: a.playerID, after: 0, limit: 100) }
            #expect(eventsA.map(\.seq) == Array(1...20))
            let afterFive = try await db.read { try await $0.events(playerID: b.playerID, after: 5, limit: 3) }
            #expect(afterFive.map(\.seq) == [6, 7, 8])
            #expect(try await db.read { try await $0.player(id: a.playerID) }?.eventSeq == 20)
        }
    }

    @Test(arguments: TestDatabases.all)
    func playedGamesKeepTheLatestTimeAndAreFilteredByAge(engine: String) async throws {
        try await TestDatabases.with(engine) { db in
            let a = newPlayer()
            try await db.write { storage in
                _ = try await storage.insertPlayer(a)
                try await storage.recordPlayedGame(playerID: a.playerID, bundleID: "com.example.one", now: 1_000)
                try await storage.recordPlayedGame(playerID: a.playerID, bundleID: "com.example.two", now: 2_000)
                try await storage.recordPlayedGame(playerID: a.playerID, bundleID: "com.example.one", now: 3_000)
            }
            let games = try await db.read { try await $0.playedGames(playerIDs: [a.playerID, "G:none"], since: 0, limit: 10) }
            #expect(games == [a.playerID: [.init(bundleID: "com.example.one", lastPlayedAt: 3_000), .init(bundleID: "com.example.two", lastPlayedAt: 2_000)]])
            #expect(try await db.read { try await $0.playedGames(playerIDs: [a.playerID], since: 2_500, limit: 10) }[a.playerID]?.count == 1)
            #expect(try await db.read { try await $0.playedGames(playerIDs: [a.playerID], since: 0, limit: 1) }[a.playerID]?.count == 1)
        }
    }

    /// Reports `entries` (identifier, percent) for `player` on `com.example.g` with a new report id, or `reportID`.
    func reportAchievements(
        _ entries: [(String, Double)], for player: PlayerRecord, at now: Int64, reportID: String = UUID().uuidString, in db: Database
    ) async throws -> AchievementReportOutcome {
        try await db.reportAchievements(
            reportID: reportID, entries.map { AchievementReportEntry(identifier: $0.0, percent: $0.1, completionEvent: "{\"done\":\"\($0.0)\"}") },
            bundleID: "com.example.g", playerID: player.playerID, eventKind: "achievementCompleted", now: now)
    }

    @Test(arguments: TestDatabases.all)
    func achievementProgressOnlyGrowsAndCompletesOnce(engine: String) async throws {
        try await TestDatabases.with(engine) { db in
            let a = newPlayer()
            _ = try await db.write { try await $0.insertPlayer(a) }
            func report(_ percent: Double, at now: Int64) async throws -> AchievementReportOutcome {
                try await reportAchievements([("x", percent)], for: a, at: now, in: db)
            }
            func record(_ percent: Double, completedAt: Int64?, at now: Int64) -> AchievementProgressRecord {
                AchievementProgressRecord(identifier: "x", percent: percent, completedAt: completedAt, lastReportedAt: now)
            }
            #expect(try await report(50, at: 1_000) == AchievementReportOutcome(applied: true, progress: [record(50, completedAt: nil, at: 1_000)]))
            #expect(try await report(30, at: 2_000).progress == [record(50, completedAt: nil, at: 2_000)])
            #expect(
                try await report(100, at: 3_000)
                    == AchievementReportOutcome(applied: true, progress: [record(100, completedAt: 3_000, at: 3_000)], newlyCompleted: ["x"]))
            #expect(
                try await report(100, at: 4_000) == AchievementReportOutcome(applied: true, progress: [record(100, completedAt: 3_000, at: 4_000)]))
            // The completion, once, in the player's stream.
            let events = try await db.read { try await $0.events(playerID: a.playerID, after: 0, limit: 10) }
            #expect(events.map(\.kind) == ["achievementCompleted"] && events.map(\.payload) == ["{\"done\":\"x\"}"] && events.map(\.createdAt) == [3_000])
            #expect(try await db.read { try await $0.achievementProgress(bundleID: "com.example.other", playerID: a.playerID) }.isEmpty)
            #expect(try await db.write { try await $0.resetAchievements(bundleID: "com.example.g", playerID: a.playerID) } == 1)
            #expect(try await db.read { try await $0.achievementProgress(bundleID: "com.example.g", playerID: a.playerID) }.isEmpty)
        }
    }

    @Test(arguments: TestDatabases.all)
    func completedAchievementsAreReadForSeveralGamesAtOnce(engine: String) async throws {
        try await TestDatabases.with(engine) { db in
            let (a, b) = (newPlayer(), newPlayer())
            _ = try await db.write { try await $0.insertPlayer(a) }
            _ = try await db.write { try await $0.insertPlayer(b) }
            _ = try await reportAchievements([("y", 100), ("x", 100), ("z", 60)], for: a, at: 1_000, in: db)
            _ = try await reportAchievements([("w", 100)], for: b, at: 1_000, in: db)
            for (game, identifier) in [("com.example.h", "h1"), ("com.example.i", "i1")] {
                _ = try await db.reportAchievements(
                    reportID: UUID().uuidString, [AchievementReportEntry(identifier: identifier, percent: 100, completionEvent: "{}")],
                    bundleID: game, playerID: a.playerID, eventKind: "achievementCompleted", now: 2_000)
            }
            let completed = try await db.read {
                try await $0.completedAchievements(playerID: a.playerID, bundleIDs: ["com.example.g", "com.example.h", "com.example.none"])
            }
            // Only the games asked for, only completed achievements, only the player's.
            #expect(completed == ["com.example.g": ["x", "y"], "com.example.h": ["h1"]])
            #expect(try await db.read { try await $0.completedAchievements(playerID: a.playerID, bundleIDs: []) }.isEmpty)
        }
    }

    @Test(arguments: TestDatabases.all)
    func anAchievementReportAnswersTheReportedAchievementsAndIsAppliedOncePerID(engine: String) async throws {
        try await TestDatabases.with(engine) { db in
            let a = newPlayer()
            _ = try await db.write { try await $0.insertPlayer(a) }
            _ = try await reportAchievements([("b", 20), ("c", 100)], for: a, at: 1_000, in: db)
            // One achievement twice in a report: the higher progress counts.
            let outcome = try await reportAchievements([("a", 100), ("b", 40), ("a", 10), ("d", 5)], for: a, at: 2_000, reportID: "once", in: db)
            #expect(outcome.applied && outcome.newlyCompleted == ["a"])
            #expect(outcome.progress.map(\.identifier) == ["a", "b", "d"])
            #expect(outcome.progress.map(\.percent) == [100, 40, 5])
            #expect(outcome.progress.map(\.completedAt) == [2_000, nil, nil])
            // Sent again (its answer lost, say): nothing changes, and the answer is the reported achievements as stored.
            let again = try await reportAchievements([("b", 90), ("c", 100), ("e", 100)], for: a, at: 3_000, reportID: "once", in: db)
            #expect(again.applied == false && again.newlyCompleted.isEmpty)
            #expect(again.progress.map(\.identifier) == ["b", "c"] && again.progress.map(\.percent) == [40, 100])
            #expect(
                try await db.read { try await $0.achievementProgress(bundleID: "com.example.g", playerID: a.playerID) }.map(\.percent) == [100, 40, 100, 5])
            let events = try await db.read { try await $0.events(playerID: a.playerID, after: 0, limit: 10) }
            #expect(events.map(\.payload) == ["{\"done\":\"c\"}", "{\"done\":\"a\"}"] && events.map(\.seq) == [1, 2])
        }
    }

    @Test(arguments: TestDatabases.all)
    func reportsRacingToCompleteAnAchievementLogOneCompletion(engine: String) async throws {
        try await TestDatabases.with(engine) { db in
            let a = newPlayer()
            _ = try await db.write { try await $0.insertPlayer(a) }
            // 16 reports at once, all completing "x"; half of them also complete their own achievement. All in the same
            // millisecond: the completion time cannot tell which report completed "x".
            let outcomes = try await withThrowingTaskGroup(of: AchievementReportOutcome.self) { group in
                for n in 0..<16 {
                    group.addTask {
                        try await self.reportAchievements([("x", 100)] + (n.isMultiple(of: 2) ? [("own\(n)", 100.0)] : []), for: a, at: 1_000, in: db)
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(outcomes.filter { $0.newlyCompleted.contains("x") }.count == 1)
            #expect(outcomes.flatMap(\.newlyCompleted).count == 9)
            let events = try await db.read { try await $0.events(playerID: a.playerID, after: 0, limit: 100) }
            #expect(events.map(\.seq) == Array(1...9))
            #expect(events.filter { $0.payload == "{\"done\":\"x\"}" }.count == 1)
        }
    }

    @Test(arguments: TestDatabases.all)
    func aScoreReportIsAppliedOncePerIDEvenWhenSentTwiceAtOnce(engine: String) async throws {
        try await TestDatabases.with(engine) { db in
            let a = newPlayer()
            _ = try await db.write { try await $0.insertPlayer(a) }
            let bundle = TestDatabases.unique("com.example.once")
            let score = NewScore(category: "points", value: 7, context: 0, higherIsBetter: true, earnedAt: 1_000)
            let applied = try await withThrowingTaskGroup(of: [ScoreRecord]?.self) { group in
                for _ in 0..<8 {
                    group.addTask {
                        try await db.reportScores(reportID: "same", [score], bundleID: bundle, environment: "sandbox", playerID: a.playerID, now: 1_000)
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(applied.compactMap { $0 }.count == 1)
            #expect(try await db.write { try await $0.deleteScores(bundleID: bundle, playerID: a.playerID) } == 1)
        }
    }

    /// The statements one report costs (a behaviour, not a time): one on PostgreSQL, where a report is one
    /// statement (shared with the other players' reports of the same moment, see
    /// ``reportsOfManyPlayersAtOnceEachGetTheirOwnAnswerAndOnlyTheOneAtFaultFails(engine:)``); on SQLite, a score report's three (report id, scores, bests) or an achievement report's two (report
    /// id, progress), plus the group's `BEGIN` and `COMMIT` when it is alone.
    @Test(arguments: TestDatabases.all)
    func aSingleReportCostsOneStatementOnPostgreSQL(engine: String) async throws {
        try await TestDatabases.with(engine) { db in
            let a = newPlayer()
            _ = try await db.write { try await $0.insertPlayer(a) }
            let (scoreStatements, achievementStatements) = engine == "postgres" ? (1, 1) : (5, 4)
            let bundle = TestDatabases.unique("com.example.cost")
            for n in 0..<3 {
                let before = db.statements.value
                _ = try await db.reportScores(
                    reportID: "s\(n)", [NewScore(category: "points", value: Int64(n), context: 0, higherIsBetter: true, earnedAt: 1_000)], bundleID: bundle,
                    environment: "sandbox", playerID: a.playerID, now: 1_000)
                #expect(db.statements.value - before == scoreStatements, "a score report")
                let beforeAchievement = db.statements.value
                _ = try await reportAchievements([("x", 10 * Double(n))], for: a, at: 1_000, in: db)
                #expect(db.statements.value - beforeAchievement == achievementStatements, "an achievement report")
            }
        }
    }

    @Test(arguments: TestDatabases.all)
    func aFailingWriteLeavesTheWritesBesideItIntact(engine: String) async throws {
        try await TestDatabases.with(engine) { db in
            struct Refused: Error {}
            let players = (0..<48).map { _ in newPlayer() }
            // At once: on SQLite they share groups, where one failing must not take the others with it.
            let outcomes = await withTaskGroup(of: (Int, Bool).self) { group in
                for (n, player) in players.enumerated() {
                    group.addTask {
                        do {
                            try await db.write { storage in
                                _ = try await storage.insertPlayer(player)
                                if n.isMultiple(of: 5) { throw Refused() }
                            }
                            return (n, true)
                        } catch {
                            return (n, false)
                        }
                    }
                }
                return await group.reduce(into: [Int: Bool]()) { $0[$1.0] = $1.1 }
            }
            for (n, player) in players.enumerated() {
                #expect(outcomes[n] == !n.isMultiple(of: 5))
                let stored = try await db.read { try await $0.player(id: player.playerID) }
                #expect((stored != nil) == !n.isMultiple(of: 5), "player \(n)")
            }
        }
    }

    /// Sign-in reserves an attempt by reading and writing these rows in one transaction: concurrent transactions
    /// (on PostgreSQL, at READ COMMITTED, possibly from several nodes) must take turns, or counts are lost.
    @Test(arguments: TestDatabases.all)
    func signInFailuresAreLockedSoThatConcurrentCountsAddUp(engine: String) async throws {
        try await TestDatabases.with(engine) { db in
            let name = TestDatabases.unique("n"), address = TestDatabases.unique("198.51.100")
            let fresh = try await db.write { try await $0.lockSignInFailures(environment: "sandbox", accountName: name, now: 7) }
            #expect(fresh == .init(failures: 0, windowStart: 7, lockedUntil: 0))
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<50 {
                    group.addTask {
                        try await db.write { storage in
                            var fromAddress = try await storage.lockAddressSignInFailures(address: address, now: 9)
                            var ofAccount = try await storage.lockSignInFailures(environment: "sandbox", accountName: name, now: 9)
                            fromAddress.failures += 1
                            ofAccount.failures += 1
                            try await storage.setAddressSignInFailures(address: address, fromAddress)
                            try await storage.setSignInFailures(environment: "sandbox", accountName: name, ofAccount)
                        }
                    }
                }
                try await group.waitForAll()
            }
            #expect(
                try await db.read { try await $0.signInFailures(environment: "sandbox", accountName: name) }
                    == .init(failures: 50, windowStart: 7, lockedUntil: 0))
            #expect(
                try await db.write { try await $0.lockAddressSignInFailures(address: address, now: 99) } == .init(failures: 50, windowStart: 9, lockedUntil: 0))
            #expect(
                try await db.write { try await $0.lockAddressSignInFailures(address: "other-\(address)", now: 99) }
                    == .init(failures: 0, windowStart: 99, lockedUntil: 0))
        }
    }

    @Test(arguments: TestDatabases.all)
    func reportIDsAreAppliedOncePerPlayerAndKind(engine: String) async throws {
        try await TestDatabases.with(engine) { db in
            let a = newPlayer(), b = newPlayer()
            try await db.write { storage in
                _ = try await storage.insertPlayer(a)
                _ = try await storage.insertPlayer(b)
            }
            #expect(try await db.write { try await $0.markReportApplied(reportID: "r-1", playerID: a.playerID, kind: "k", now: 1) })
            #expect(try await db.write { try await $0.markReportApplied(reportID: "r-1", playerID: a.playerID, kind: "k", now: 2) } == false)
            #expect(try await db.write { try await $0.markReportApplied(reportID: "r-1", playerID: b.playerID, kind: "k", now: 3) })
            // Another kind of report with the same id is another report.
            #expect(try await db.write { try await $0.markReportApplied(reportID: "r-1", playerID: a.playerID, kind: "other", now: 4) })
            #expect(try await db.write { try await $0.markReportApplied(reportID: "r-1", playerID: a.playerID, kind: "other", now: 5) } == false)
        }
    }

    @Test(arguments: TestDatabases.all)
    func everyScoreIsKeptAndTheBestFollowsTheOrder(engine: String) async throws {
        try await TestDatabases.with(engine) { db in
            let player = newPlayer()
            let bundle = "com.example.scores-\(UUID().uuidString.prefix(8))"
            _ = try await db.write { try await $0.insertPlayer(player) }
            func report(_ scores: [NewScore], at now: Int64) async throws -> [ScoreRecord] {
                let stored = try await db.writeStatement {
                    try await $0.reportScores(
                        reportID: UUID().uuidString, scores, bundleID: bundle, environment: "sandbox", playerID: player.playerID, now: now)
                }
                return try #require(stored)
            }
            // A batch with duplicates: each gets its own id, in the order sent.
            let first = try await report(
                [
                    NewScore(category: "high", value: 10, context: 1, higherIsBetter: true, earnedAt: 100),
                    NewScore(category: "high", value: 10, context: 1, higherIsBetter: true, earnedAt: 100),
                    NewScore(category: "low", value: 500, context: UInt64.max, higherIsBetter: false, earnedAt: 100),
                    NewScore(category: "high", value: 30, context: 2, higherIsBetter: true, earnedAt: 100),
                ], at: 100)
            #expect(first.map(\.value) == [10, 10, 500, 30])
            #expect(Set(first.map(\.scoreID)).count == 4)
            #expect(first[2].context == UInt64.max)
            _ = try await report(
                [
                    NewScore(category: "high", value: 20, context: 3, higherIsBetter: true, earnedAt: 200),
                    NewScore(category: "low", value: 400, context: 4, higherIsBetter: false, earnedAt: 200),
                ], at: 200)
            let equal = try await report([NewScore(category: "high", value: 30, context: 5, higherIsBetter: true, earnedAt: 300)], at: 300)
            // Scores that waited in a device's outbox keep the date they were earned, each its own.
            let waited = try await report(
                [
                    NewScore(category: "high", value: 25, context: 6, higherIsBetter: true, earnedAt: 250),
                    NewScore(category: "high", value: 26, context: 7, higherIsBetter: true, earnedAt: 150),
                ], at: 400)
            #expect(waited.map(\.earnedAt) == [250, 150])
            #expect(try await db.read { try await $0.scores(ids: waited.map(\.scoreID)) }.sorted { $0.scoreID < $1.scoreID }.map(\.earnedAt) == [250, 150])

            let best = BestRows()
            try await db.read { storage in
                for category in ["high", "low"] {
                    try await storage.forEachBestScore(bundleID: bundle, environment: "sandbox", categories: [category]) { playerID, id, value in
                        #expect(playerID == player.playerID)
                        best.add(category, id, value)
                    }
                }
            }
            let both = BestRows()
            try await db.read { storage in
                try await storage.forEachBestScore(bundleID: bundle, environment: "sandbox", categories: ["high", "low"]) { _, id, value in
                    both.add("\(id)", id, value)
                }
            }
            #expect(both.rows.count == 2)
            // The highest and the lowest; an equal later value does not replace the earlier one.
            #expect(best.rows["high"]?.value == 30 && best.rows["high"]?.id == first[3].scoreID && best.rows["high"]?.id != equal[0].scoreID)
            #expect(best.rows["low"]?.value == 400)

            let recent = RecentRows()
            try await db.read { storage in
                try await storage.forEachRecentScore(bundleID: bundle, environment: "sandbox", categories: ["high"], since: 200) {
                    playerID, id, value, earnedAt in
                    recent.add(RecentRow(playerID: playerID, scoreID: id, value: value, earnedAt: earnedAt))
                }
            }
            let earnedSince200 = recent.rows.sorted { $0.scoreID < $1.scoreID }
            #expect(earnedSince200.map(\.value) == [20, 30, 25])
            #expect(earnedSince200.map(\.earnedAt) == [200, 300, 250])
            #expect(earnedSince200.allSatisfy { $0.playerID == player.playerID })
            #expect(earnedSince200[1].scoreID == equal[0].scoreID)
            #expect(try await db.read { try await $0.scores(ids: first.map(\.scoreID)) }.count == 4)

            #expect(try await db.write { try await $0.deleteScores(bundleID: bundle, playerID: player.playerID) } == 9)
            let after = BestRows()
            try await db.read { storage in
                try await storage.forEachBestScore(bundleID: bundle, environment: "sandbox", categories: ["high", "low"]) { _, id, value in
                    after.add("\(id)", id, value)
                }
            }
            #expect(after.rows.isEmpty)
        }
    }

    @Test(arguments: TestDatabases.all)
    func reopeningKeepsDataAndDoesNotReapplyMigrations(engine: String) async throws {
        guard engine == "sqlite" else { return }  // PostgreSQL: every test above reopens the shared database.
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("gc-reopen-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = "sqlite:\(folder.path)/db.sqlite"
        let player = newPlayer()
        try await Database.withDatabase(url: url) { db in _ = try await db.write { try await $0.insertPlayer(player) } }
        let loaded = try await Database.withDatabase(url: url) { db in try await db.read { try await $0.player(id: player.playerID) } }
        #expect(loaded == player)
    }

    @Test func invalidDatabaseURLsAreRefused() async {
        for url in ["mysql://x", "sqlite:", "postgres://", "postgres://host-without-user/db"] {
            await #expect(throws: StorageError.self, "\(url)") {
                try await Database.withDatabase(url: url) { _ in }
            }
        }
    }
}

/// Best-score rows streamed from storage.
private final class BestRows: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: [String: (id: Int64, value: Int64)] = [:]
    func add(_ category: String, _ id: Int64, _ value: Int64) { lock.withLock { stored[category] = (id, value) } }
    var rows: [String: (id: Int64, value: Int64)] { lock.withLock { stored } }
}

/// Score records streamed from storage.
private struct RecentRow {
    var playerID: String
    var scoreID: Int64
    var value: Int64
    var earnedAt: Int64
}

private final class RecentRows: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: [RecentRow] = []
    func add(_ row: RecentRow) { lock.withLock { stored.append(row) } }
    var rows: [RecentRow] { lock.withLock { stored } }
}
