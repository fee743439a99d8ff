import Foundation
import Synchronization
@testable import GameCenterStorage
import Testing

/// Upgrades of a database that already holds data: nothing is lost, and the new schema is the one queries expect.
@Suite struct MigrationTests {
    /// Version 5 rebuilds `best_scores` (SQLite: WITHOUT ROWID) and the time index; every stored score survives and
    /// both rebuild scans read one index only.
    @Test func leaderboardScansUpgradeKeepsEveryScore() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("gc-migration-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = "sqlite:\(folder.path)/upgrade.sqlite"
        let bundle = "com.example.upgrade"
        let players = (0..<50).map { n in
            PlayerRecord(
                playerID: "G:upgrade-\(n)", environment: "sandbox", accountName: "upgrade-\(n)", passwordHash: "hash",
                alias: "Player \(n)", underage: false, createdAt: 1_000)
        }
        let before = try await Database.withDatabase(url: url, migrations: Migrations.all.filter { $0.version <= 4 }) { db in
            var stored: [ScoreRecord] = []
            for (n, player) in players.enumerated() {
                try await db.write { try await $0.insertPlayerBeforeAliasSkeletons(player) }
                stored += try await db.write { storage in
                    try await storage.insertScores(
                        [
                            NewScore(category: "points", value: Int64(n % 7), context: UInt64(n), higherIsBetter: true, earnedAt: 10_000 + Int64(n)),
                            NewScore(category: "points", value: Int64(n % 5), context: 0, higherIsBetter: true, earnedAt: 10_000 + Int64(n)),
                        ],
                        bundleID: bundle, environment: "sandbox", playerID: player.playerID)
                }
            }
            return stored
        }

        try await Database.withDatabase(url: url) { db in
            let best = Collected<(String, Int64, Int64)>()
            let recent = Collected<(String, Int64, Int64, Int64)>()
            let plans = try await db.read { storage in
                try await storage.forEachBestScore(bundleID: bundle, environment: "sandbox", categories: ["points"]) { best.add(($0, $1, $2)) }
                try await storage.forEachRecentScore(bundleID: bundle, environment: "sandbox", categories: ["points"], since: 0) {
                    recent.add(($0, $1, $2, $3))
                }
                let schema = try await storage.sql.raw("SELECT sql FROM sqlite_master WHERE name = 'best_scores'").all()
                    .map { try $0.decode(column: "sql", as: String.self) }
                let plan = try await storage.sql.raw(
                    """
                    EXPLAIN QUERY PLAN SELECT player_id, score_id, value, reported_at FROM scores INDEXED BY scores_by_time
                    WHERE bundle_id = 'b' AND environment = 'sandbox' AND reported_at >= 0 AND category IN ('points')
                    """
                ).all().map { try $0.decode(column: "detail", as: String.self) }
                return (schema, plan)
            }
            // Every player's best: the highest value, the earlier report among equals.
            let expectedBest = Dictionary(grouping: before, by: \.playerID).mapValues { reports in
                reports.min { ($1.value, $0.scoreID) < ($0.value, $1.scoreID) }!
            }
            #expect(best.rows.count == players.count)
            for (playerID, scoreID, value) in best.rows {
                #expect(expectedBest[playerID]?.scoreID == scoreID && expectedBest[playerID]?.value == value)
            }
            #expect(recent.rows.map(\.1).sorted() == before.map(\.scoreID).sorted())
            #expect(recent.rows.map(\.3) == recent.rows.map(\.3).sorted(), "the time index gives reports in time order")
            #expect(plans.0.first?.contains("WITHOUT ROWID") == true)
            #expect(plans.1.contains { $0.contains("COVERING INDEX scores_by_time") }, "plan: \(plans.1)")
        }
    }

    /// Version 6 adds the kind to the applied reports' key: reports applied before the upgrade stay applied, and the
    /// same id of another kind is then applied.
    @Test func reportIDsPerKindUpgradeKeepsAppliedReports() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("gc-migration-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = "sqlite:\(folder.path)/upgrade.sqlite"
        let player = PlayerRecord(
            playerID: "G:reports", environment: "sandbox", accountName: "reports", passwordHash: "hash",
            alias: "Reporter", underage: false, createdAt: 1_000)
        try await Database.withDatabase(url: url, migrations: Migrations.all.filter { $0.version <= 5 }) { db in
            try await db.write { try await $0.insertPlayerBeforeAliasSkeletons(player) }
            #expect(try await db.write { try await $0.markReportApplied(reportID: "report-1", playerID: player.playerID, kind: "scores", now: 1) })
        }
        let (repeated, otherKind) = try await Database.withDatabase(url: url) { db in
            (
                try await db.write { try await $0.markReportApplied(reportID: "report-1", playerID: player.playerID, kind: "scores", now: 2) },
                try await db.write { try await $0.markReportApplied(reportID: "report-1", playerID: player.playerID, kind: "achievements", now: 3) }
            )
        }
        #expect(repeated == false, "the report applied before the upgrade is still applied")
        #expect(otherKind, "the same id of another kind is another report")
    }

    /// Version 8 adds alias skeletons: players stored before it have none until a server computes theirs.
    @Test func aliasSkeletonsUpgradeLeavesEarlierPlayersToBeFilled() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("gc-migration-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = "sqlite:\(folder.path)/upgrade.sqlite"
        let player = PlayerRecord(
            playerID: "G:early", environment: "sandbox", accountName: "early", passwordHash: "hash", alias: "Early", underage: false,
            createdAt: 1_000)
        try await Database.withDatabase(url: url, migrations: Migrations.all.filter { $0.version <= 7 }) { db in
            try await db.write { try await $0.insertPlayerBeforeAliasSkeletons(player) }
        }
        let missing = try await Database.withDatabase(url: url) { db in
            try await db.read { try await $0.playersWithoutAliasSkeleton(limit: 10) }
        }
        #expect(missing.map(\.playerID) == ["G:early"] && missing.map(\.alias) == ["Early"])
    }

    /// Version 9: an invitation stored before it is still open, not accepted in the app, and can then be.
    @Test func invitationsStoredBeforeAppAcceptanceStayOpenAndCanBeAcceptedInTheApp() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("gc-migration-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = "sqlite:\(folder.path)/upgrade.sqlite"
        let players = ["G:inviter", "G:invitee"].map {
            PlayerRecord(playerID: $0, environment: "sandbox", accountName: $0, passwordHash: "hash", alias: $0, underage: false, createdAt: 1_000)
        }
        let match = MatchRecord(matchID: "m-old", bundleID: "com.example.game", environment: "sandbox", hosted: false, state: .started, createdAt: 1_000)
        let invitation = InvitationRecord(
            invitationID: "inv-old", matchID: "m-old", bundleID: "com.example.game", environment: "sandbox", inviter: "G:inviter",
            invitee: "G:invitee", hosted: false, minPlayers: 2, maxPlayers: 2, message: nil, state: .pending, createdAt: 1_000,
            expiresAt: 100_000)
        try await Database.withDatabase(url: url, migrations: Migrations.all.filter { $0.version <= 8 }) { db in
            try await db.write { storage in
                for player in players { try await storage.insertPlayerBeforeAliasSkeletons(player) }
                try await storage.insertMatchBeforeNodes(match)
                try await storage.insertInvitation(invitation)
            }
        }
        let (stored, accepted) = try await Database.withDatabase(url: url) { db in
            (
                try await db.read { try await $0.invitation(id: "inv-old") },
                try await db.write { try await $0.acceptInvitationInApp(id: "inv-old", now: 2_000) }
            )
        }
        #expect(stored == invitation)
        #expect(accepted?.acceptedInAppAt == 2_000 && accepted?.state == .pending)
    }

    /// Version 10: finding players by account name or alias searches two indexes on both their columns, not every
    /// player of the environment.
    @Test func findingPlayersByNameUsesIndexesOnly() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("gc-migration-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        try await Database.withDatabase(url: "sqlite:\(folder.path)/plan.sqlite") { db in
            let plan = try await db.read { storage in
                try await storage.sql.raw(
                    """
                    EXPLAIN QUERY PLAN
                    SELECT * FROM players WHERE environment = 'sandbox' AND account_name = 'ann'
                    UNION
                    SELECT * FROM players WHERE environment = 'sandbox' AND alias = 'Ann'
                    ORDER BY created_at, player_id
                    """
                ).all().map { try $0.decode(column: "detail", as: String.self) }
            }
            // The query of `players(environment:accountNameOrAlias:)`: each side a search on both columns of an index.
            #expect(!plan.contains { $0.contains("SCAN players") }, "the lookup reads the whole table: \(plan)")
            #expect(plan.contains { $0.contains("INDEX players_by_alias (environment=? AND alias=?)") }, "plan: \(plan)")
            #expect(plan.contains { $0.contains("(environment=? AND account_name=?)") }, "plan: \(plan)")
        }
    }
}

extension StorageSession {
    /// Stores a player with the columns every schema version has (`insertPlayer` writes columns later versions added).
    fileprivate func insertPlayerBeforeAliasSkeletons(_ player: PlayerRecord) async throws {
        try await sql.raw(
            """
            INSERT INTO players (player_id, environment, account_name, password_hash, alias, underage, event_seq, created_at, updated_at)
            VALUES (\(bind: player.playerID), \(bind: player.environment), \(bind: player.accountName), \(bind: player.passwordHash),
                    \(bind: player.alias), 0, 0, \(bind: player.createdAt), \(bind: player.createdAt))
            """
        ).run()
    }

    /// A match as stored before version 17 (no node or relay columns).
    fileprivate func insertMatchBeforeNodes(_ match: MatchRecord) async throws {
        try await sql.raw(
            """
            INSERT INTO matches (match_id, bundle_id, environment, hosted, state, created_at)
            VALUES (\(bind: match.matchID), \(bind: match.bundleID), \(bind: match.environment), \(bind: match.hosted ? 1 : 0),
                    \(bind: match.state.rawValue), \(bind: match.createdAt))
            """
        ).run()
    }
}

/// Rows streamed from storage.
private final class Collected<Row: Sendable>: Sendable {
    private let stored = Mutex<[Row]>([])
    func add(_ row: Row) { stored.withLock { $0.append(row) } }
    var rows: [Row] { stored.withLock { $0 } }
}
