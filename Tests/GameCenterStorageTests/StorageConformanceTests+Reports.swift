import Foundation
import Testing

@testable import GameCenterStorage

/// Single reports of many players at the same moment, which go to the database together (group commit across
/// requests: one statement on PostgreSQL, one job of the writer's transaction on SQLite), on every engine in
/// ``TestDatabases/all``.
extension StorageConformanceTests {
    @Test(arguments: TestDatabases.all)
    func reportsOfManyPlayersAtOnceEachGetTheirOwnAnswerAndOnlyTheOneAtFaultFails(engine: String) async throws {
        try await TestDatabases.with(engine) { db in
            let players = (0..<24).map { _ in newPlayer() }
            // One of them was never stored: its reports break a foreign key, which must fail them alone.
            let missing = 7
            try await db.write { storage in
                for (n, player) in players.enumerated() where n != missing { _ = try await storage.insertPlayer(player) }
            }
            let bundle = TestDatabases.unique("com.example.many")
            let before = db.statements.value
            let answers = await withTaskGroup(of: (Int, Result<[ScoreRecord]?, any Error>, Result<AchievementReportOutcome, any Error>).self) { group in
                for (n, player) in players.enumerated() {
                    group.addTask {
                        let score = await outcome {
                            try await db.reportScores(
                                reportID: "r",
                                [NewScore(category: "points", value: Int64(n), context: UInt64(n), higherIsBetter: n.isMultiple(of: 2), earnedAt: 1_000)],
                                bundleID: bundle, environment: "sandbox", playerID: player.playerID, now: 1_000)
                        }
                        let achievement = await outcome {
                            try await db.reportAchievements(
                                reportID: "r", [AchievementReportEntry(identifier: "x", percent: 100, completionEvent: "{\"n\":\(n)}")],
                                bundleID: bundle, playerID: player.playerID, eventKind: "achievementCompleted", now: 2_000 + Int64(n))
                        }
                        return (n, score, achievement)
                    }
                }
                return await group.reduce(into: []) { $0.append($1) }
            }
            #expect(answers.count == players.count)
            for (n, score, achievement) in answers {
                let player = players[n]
                if n == missing {
                    #expect(throws: (any Error).self) { try score.get() }
                    #expect(throws: (any Error).self) { try achievement.get() }
                    continue
                }
                let records = try #require(try score.get())
                #expect(records.map(\.playerID) == [player.playerID])
                #expect(records.map(\.value) == [Int64(n)])
                #expect(records.map(\.context) == [UInt64(n)])
                let outcome = try achievement.get()
                #expect(outcome.applied && outcome.newlyCompleted == ["x"])
                #expect(outcome.progress.map(\.completedAt) == [2_000 + Int64(n)])
                let events = try await db.read { try await $0.events(playerID: player.playerID, after: 0, limit: 10) }
                #expect(events.map(\.seq) == [1])
                #expect(events.map(\.payload) == ["{\"n\":\(n)}"])
            }
            // Each stored player has one best, its own score.
            let bests = Shared<[String: Int64]>([:])
            try await db.read { storage in
                try await storage.forEachBestScore(bundleID: bundle, environment: "sandbox", categories: ["points"]) { player, _, value in
                    bests.withLock { $0[player] = value }
                }
            }
            #expect(
                bests.withLock { $0 } == Dictionary(uniqueKeysWithValues: players.enumerated().filter { $0.offset != missing }.map { ($1.playerID, Int64($0)) })
            )
            if engine == "postgres" {
                // At most one statement per report, and the failed ones' batches once more each alone. (On SQLite a batch
                // that fails is also replayed in savepoints beside the group's other jobs; its cost is pinned below.)
                #expect(db.statements.value - before <= 2 * players.count + 2 * players.count)
            }
            // Sent again, every report is known by its id.
            for (n, player) in players.enumerated() where n != missing {
                #expect(
                    try await db.reportScores(
                        reportID: "r", [NewScore(category: "points", value: 99, context: 0, higherIsBetter: true, earnedAt: 1_000)], bundleID: bundle,
                        environment: "sandbox", playerID: player.playerID, now: 3_000) == nil)
            }
        }
    }

    /// Signed reports in one batch: each takes its session key's counter in the batch's write when it is above the
    /// last, and one whose counter is not stores nothing (a replay); the others are stored.
    @Test(arguments: TestDatabases.all)
    func signedReportsTakeTheirCountersInTheBatchAndARefusedOneStoresNothing(engine: String) async throws {
        try await TestDatabases.with(engine) { db in
            let players = (0..<3).map { _ in newPlayer() }
            let sessions = players.map { player in
                SessionRecord(
                    sessionID: TestDatabases.unique("s"), tokenHash: TestDatabases.unique("h"), playerID: player.playerID,
                    bundleID: "com.example.game", environment: "sandbox", createdAt: 1_000, expiresAt: 10_000)
            }
            try await db.write { storage in
                for (player, session) in zip(players, sessions) {
                    _ = try await storage.insertPlayer(player)
                    try await storage.insertSession(session)
                    try await storage.setReportKey(sessionID: session.sessionID, secret: "k", now: 1_000)
                }
                _ = try await storage.advanceReportCounters([(sessions[1].sessionID, 4)])
            }
            let bundle = TestDatabases.unique("com.example.signed")
            func report(_ n: Int, counter: Int64) -> PendingScoreReport {
                PendingScoreReport(
                    reportID: TestDatabases.unique("r"),
                    scores: [NewScore(category: "points", value: Int64(n), context: 0, higherIsBetter: true, earnedAt: 1_000)], bundleID: bundle,
                    environment: "sandbox", playerID: players[n].playerID, now: 1_000,
                    counter: ReportCounter(sessionID: sessions[n].sessionID, counter: counter))
            }
            let batch = [report(0, counter: 1), report(1, counter: 4), report(2, counter: 9)]
            let answers = try await db.writeStatement { try await $0.reportScores(batch) }
            guard case .applied(let first?) = answers[0], case .counterTaken = answers[1], case .applied(let third?) = answers[2] else {
                Issue.record("expected stored, refused, stored; got \(answers)")
                return
            }
            #expect(first.map(\.value) == [0] && third.map(\.value) == [2])
            let replay = [report(2, counter: 9), report(1, counter: 5)]
            let again = try await db.writeStatement { try await $0.reportScores(replay) }
            guard case .counterTaken = again[0], case .applied(let second?) = again[1] else {
                Issue.record("expected refused, stored; got \(again)")
                return
            }
            #expect(second.map(\.value) == [1])
            let stored = try await db.read { try await $0.boardScores(playerID: players[2].playerID, bundleID: bundle) }
            #expect(stored.count == 1, "the replayed report stored nothing")
            await #expect(throws: ReportCounterTaken.self) {
                _ = try await db.reportScores(
                    reportID: "x", [NewScore(category: "points", value: 7, context: 0, higherIsBetter: true, earnedAt: 1_000)], bundleID: bundle,
                    environment: "sandbox", playerID: players[0].playerID, now: 1_000, counter: (sessions[0].sessionID, 1))
            }
        }
    }

    /// The batched statements themselves: several players' reports in one statement on PostgreSQL, in as many statements
    /// as one report on SQLite, each answered alone, a report applied before among them.
    @Test(arguments: TestDatabases.all)
    func oneBatchAppliesSeveralPlayersReportsAndAnswersEachAlone(engine: String) async throws {
        try await TestDatabases.with(engine) { db in
            let players = (0..<3).map { _ in newPlayer() }
            try await db.write { storage in
                for player in players { _ = try await storage.insertPlayer(player) }
            }
            let bundle = TestDatabases.unique("com.example.batch")
            // The second player already completed "y" (one event) and applied report "r".
            _ = try await db.reportAchievements(
                reportID: "r", [AchievementReportEntry(identifier: "y", percent: 100, completionEvent: "{}")], bundleID: bundle,
                playerID: players[1].playerID, eventKind: "achievementCompleted", now: 500)
            _ = try await db.reportScores(
                reportID: "r", [NewScore(category: "points", value: 1, context: 0, higherIsBetter: true, earnedAt: 500)], bundleID: bundle,
                environment: "sandbox", playerID: players[1].playerID, now: 500)
            // The first completed "y" before (one event).
            _ = try await db.reportAchievements(
                reportID: "q", [AchievementReportEntry(identifier: "y", percent: 100, completionEvent: "{}")], bundleID: bundle,
                playerID: players[0].playerID, eventKind: "achievementCompleted", now: 500)
            let scores = players.enumerated().map { n, player in
                PendingScoreReport(
                    reportID: "r",
                    scores: [
                        NewScore(category: "points", value: Int64(10 * n), context: 0, higherIsBetter: true, earnedAt: 1_000),
                        NewScore(category: "points", value: Int64(10 * n + 5), context: 0, higherIsBetter: true, earnedAt: 1_000),
                        NewScore(category: "time", value: Int64(10 * n), context: 0, higherIsBetter: false, earnedAt: 1_000),
                    ], bundleID: bundle, environment: "sandbox", playerID: player.playerID, now: 1_000)
            }
            let achievements = players.enumerated().map { n, player in
                PendingAchievementReport(
                    reportID: n == 1 ? "r" : "s", entries: [AchievementReportEntry(identifier: "x", percent: 100, completionEvent: "{\"n\":\(n)}")],
                    bundleID: bundle, playerID: player.playerID, eventKind: "achievementCompleted", now: 1_000)
            }
            let before = db.statements.value
            let (scored, achieved) = try await db.writeStatement { storage in
                (try await storage.reportScores(scores), try await storage.reportAchievements(achievements))
            }
            // PostgreSQL: one statement each, and one more for the report applied before (its answer is read).
            // SQLite, in one transaction (2): the scores' ids, rows and bests for each direction (4); the achievements'
            // ids and progress (2), two statements per completion's event (4), and the read for the report applied before.
            #expect(db.statements.value - before == (engine == "postgres" ? 3 : 2 + 4 + 2 + 4 + 1))
            let records = scored.map { answer -> [ScoreRecord]? in
                guard case .applied(let records) = answer else { return [] }
                return records
            }
            #expect(records[1] == nil)
            for n in [0, 2] {
                #expect(records[n]?.map(\.playerID) == Array(repeating: players[n].playerID, count: 3))
                #expect(records[n]?.map(\.value) == [Int64(10 * n), Int64(10 * n + 5), Int64(10 * n)])
                #expect(achieved[n].newlyCompleted == ["x"])
            }
            #expect(achieved[1] == AchievementReportOutcome(applied: false, progress: []))
            let bests = Shared<[String: Int64]>([:])
            for category in ["points", "time"] {
                try await db.read { storage in
                    try await storage.forEachBestScore(bundleID: bundle, environment: "sandbox", categories: [category]) { player, _, value in
                        bests.withLock { $0["\(category) \(player)"] = value }
                    }
                }
            }
            #expect(
                bests.withLock { $0 } == [
                    "points \(players[0].playerID)": 5, "points \(players[1].playerID)": 1, "points \(players[2].playerID)": 25,
                    "time \(players[0].playerID)": 0, "time \(players[2].playerID)": 20,
                ])
            // The completions take the next event number of their own player.
            for (n, expected) in [(0, [1, 2]), (1, [1]), (2, [1])] {
                #expect(try await db.read { try await $0.events(playerID: players[n].playerID, after: 0, limit: 10) }.map(\.seq) == expected.map(Int64.init))
            }
        }
    }
}
