import ArgumentParser
import AsyncHTTPClient
import Foundation
import GameCenterProtocol
import GameCenterServer
import GameCenterStorage
import Logging
import OpenGameKit
import SQLKit

/// `gamecenter-bench turns`: turn-based turns committed per second and the delay from `endTurn` returning to the next
/// player's device hearing it, with many open matches stored, against the same write as a plain SQL transaction on the
/// same engine in the same run; and the storage one open match takes.
struct TurnsBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "turns",
        abstract: "Turn-based turns/s and endTurn-to-next-player event p50/p99 with many open matches, vs the same write as a plain SQL transaction."
    )

    static let bundleID = "com.example.turns"

    @Option(help: "Open matches stored before measuring (made up, between made-up players).") var matches = 100_000
    @Option(help: "Matches played at once, each by two SDK devices.") var pairs = 16
    @Option(help: "Seconds to measure each target.") var seconds = 10.0
    @Option(help: "Bytes of match data each turn stores.") var bytes = 512
    @Option(help: "Database (default: a new SQLite file in a temporary folder).") var database: String?

    func validate() throws {
        guard matches >= 0, pairs >= 1, seconds > 0, (0...(1 << 20)).contains(bytes) else {
            throw ValidationError("--matches ≥ 0, --pairs ≥ 1, --seconds > 0, --bytes 0…1048576")
        }
    }

    func run() async throws {
        var logger = Logger(label: "bench") { StreamLogHandler.standardError(label: $0) }
        logger.logLevel = .warning
        let manifest = "bundleID: \(Self.bundleID)\nname: Turns\n"
        let seeded = SeededSize()
        let matches = matches
        let server = try await BenchServer.start(manifest: manifest, database: database, logger: logger) { services in
            seeded.set(try await Self.seed(matches, into: services.database))
        }
        do {
            try await measure(on: server, seeded: seeded, logger: logger)
        } catch {
            await server.stop()
            throw error
        }
        await server.stop()
    }

    private func measure(on server: BenchServer, seeded: SeededSize, logger: Logger) async throws {
        print(
            "gamecenter-bench turns — \(matches) open matches stored, \(pairs) matches played at once by SDK devices, \(seconds) s each, "
                + "\(bytes) B of match data per turn, \(ProcessInfo.processInfo.activeProcessorCount) cores")
        print("storage: \(database ?? "SQLite (temporary file), synchronous=FULL")")
        if let perMatch = seeded.bytesPerMatch { print(String(format: "storage per open match: %.0f bytes (tables and indexes)", perMatch)) }

        let commits = try await commitRate(on: server)
        let ours = try await play(on: server)
        let matches = matches
        let anchorURL = database ?? "sqlite:\(server.folder.path)/anchor.sqlite"
        let (bytes, pairs, seconds) = (bytes, pairs, seconds)
        let anchor = try await Database.withDatabase(url: anchorURL, logger: logger) { db in
            try await Self.anchor(db, matches: max(matches, pairs), bytes: bytes, concurrency: pairs, seconds: seconds)
        }
        let anchorRate = Double(anchor.upserts) / anchor.elapsed
        print(String(format: "anchor: the same write as a plain SQL transaction (read, compare-and-set, data, two events): %.0f turns/s", anchorRate))
        print(
            String(
                format: "gamecenter, turns over HTTP as fast as answered (no device listening): %.0f turns/s, %.2fx the anchor (goal ≥ 0.5x)",
                commits, commits / anchorRate))
        print(
            String(
                format: "gamecenter, SDK devices each waiting for its turn's event: %.0f turns/s (%.2fx the anchor), "
                    + "endTurn → next player's event p50 %.2f ms, p99 %.2f ms (goal ≤ 50 ms); %d turns",
                ours.rate, ours.rate / anchorRate, percentile(ours.delays, 0.5), percentile(ours.delays, 0.99), ours.delays.count))
    }

    /// Stores `count` open matches between made-up players, a thousand per transaction; returns the bytes the turn
    /// tables grew by per match (SQLite: pages; PostgreSQL: relation sizes).
    static func seed(_ count: Int, into database: Database) async throws -> Double? {
        guard count > 0 else { return nil }
        let before = try await turnTablesBytes(database)
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        for start in stride(from: 0, to: count, by: 1000) {
            try await database.write { storage in
                for index in start..<min(start + 1000, count) {
                    let match = try TurnBasedSeeding.openMatch(
                        id: "t_seed\(index)", bundleID: bundleID, environment: "sandbox", first: "S:\(2 * index)", second: "S:\(2 * index + 1)",
                        now: now)
                    try await storage.insertTurnMatch(match.record, data: Data(count: 512), members: match.members)
                }
            }
        }
        let after = try await turnTablesBytes(database)
        return Double(after - before) / Double(count)
    }

    static func turnTablesBytes(_ database: Database) async throws -> Int64 {
        try await database.read { storage in
            if storage.engine == .postgres {
                let row = try await storage.sql.raw(
                    """
                    SELECT COALESCE(SUM(pg_total_relation_size(c.oid)), 0)::BIGINT AS size FROM pg_class c
                    WHERE c.relname IN ('turn_matches', 'turn_match_members', 'turn_match_data')
                    """
                ).first()
                return try row?.decode(column: "size", as: Int64.self) ?? 0
            }
            // The whole file: on the bench's fresh database, what the seeding adds is the turn tables' growth.
            let pages = try await storage.sql.raw("PRAGMA page_count").first()?.decode(column: "page_count", as: Int64.self) ?? 0
            let size = try await storage.sql.raw("PRAGMA page_size").first()?.decode(column: "page_size", as: Int64.self) ?? 0
            return pages * size
        }
    }

    /// Turns committed per second by `pairs` matches played over plain HTTP as fast as the server answers, each write
    /// carrying the version the previous answer gave: the server's write path (rules, storage, events stored for both
    /// players), with no device listening.
    func commitRate(on server: BenchServer) async throws -> Double {
        var configuration = HTTPClient.Configuration()
        configuration.connectionPool.concurrentHTTP1ConnectionsPerHostSoftLimit = pairs
        let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
        do {
            let rate = try await commitRate(on: server, client: client)
            try await client.shutdown()
            return rate
        } catch {
            try? await client.shutdown()
            throw error
        }
    }

    private func commitRate(on server: BenchServer, client: HTTPClient) async throws -> Double {
        let tokens = try await BenchPlayers.signUpMany(client: client, port: server.port, count: 2 * pairs, bundleID: Self.bundleID)
        let base = "http://127.0.0.1:\(server.port)/v1/turn-matches"
        let headers: @Sendable (String) -> [(String, String)] = { token in
            [(DeviceHeader.bundleID, Self.bundleID), (DeviceHeader.environment, "sandbox"), ("Authorization", "Bearer \(token)")]
        }
        var matches: [(id: String, version: Int64)] = []
        for pair in 0..<pairs {
            let find = TurnBasedFindBody(minPlayers: 2, maxPlayers: 2, playerGroup: UInt32(10_000 + pair))
            let match = try await BenchPlayers.send(client, "POST", base, headers(tokens[2 * pair]), find, as: TurnBasedMatchInfo.self)
            let joined = try await BenchPlayers.send(client, "POST", base, headers(tokens[2 * pair + 1]), find, as: TurnBasedMatchInfo.self)
            matches.append((match.matchID, joined.version))
        }
        let data = Data(count: bytes)
        let deadline = ContinuousClock.now + .milliseconds(Int64(seconds * 1000))
        let start = ContinuousClock.now
        let turns = try await withThrowingTaskGroup(of: Int.self) { group in
            for (pair, match) in matches.enumerated() {
                group.addTask {
                    var (version, turn, count) = (match.version, 0, 0)
                    while ContinuousClock.now < deadline {
                        let body = TurnBasedTurnBody(action: .endTurn, version: version, matchData: data, nextParticipants: [1 - turn])
                        version = try await BenchPlayers.send(
                            client, "POST", "\(base)/\(match.id)/turn", headers(tokens[2 * pair + turn]), body, as: TurnBasedMatchInfo.self
                        ).version
                        turn = 1 - turn
                        count += 1
                    }
                    return count
                }
            }
            return try await group.reduce(0, +)
        }
        let (s, atto) = (ContinuousClock.now - start).components
        return Double(turns) / (Double(s) + Double(atto) / 1e18)
    }

    /// `pairs` matches, each between two SDK devices taking turns as fast as they hear it is their turn: the turns
    /// committed per second, and for each turn the delay from `endTurn` returning to the next player's event.
    func play(on server: BenchServer) async throws -> (rate: Double, delays: [Double]) {
        let url = URL(string: "http://127.0.0.1:\(server.port)")!
        let folder = server.folder.appendingPathComponent("devices")
        var games: [(GKGameCenter, GKGameCenter, String)] = []
        for pair in 0..<pairs {
            var players: [GKGameCenter] = []
            for side in 0..<2 {
                let device = GKGameCenter(
                    server: url, bundleID: Self.bundleID, storageDirectory: folder.appendingPathComponent("\(pair)-\(side)"))
                var events = device.events.makeAsyncIterator()
                try await device.localPlayer.authenticate(
                    .signUp(account: "turns-\(pair)-\(side)-\(UUID().uuidString.prefix(6).lowercased())", password: "bench-password", alias: "T\(side)"))
                while let event = await events.next() { if case .connected = event { break } }
                players.append(device)
            }
            // A group of its own per pair: each pair gets a new match, not a seeded one or another pair's.
            let request = GKMatchRequest(minPlayers: 2, maxPlayers: 2)
            request.playerGroup = UInt32(pair + 1)
            let match = try await GKTurnBasedMatch.find(for: request, in: players[0])
            _ = try await GKTurnBasedMatch.find(for: request, in: players[1])
            games.append((players[0], players[1], match.matchID))
        }
        let deadline = ContinuousClock.now + .milliseconds(Int64(seconds * 1000))
        let data = Data(count: bytes)
        let start = ContinuousClock.now
        let delays = try await withThrowingTaskGroup(of: [Double].self) { group in
            for (first, second, matchID) in games {
                group.addTask {
                    var delays: [Double] = []
                    let devices = [first, second]
                    let heard = devices.map { $0.events.makeAsyncIterator() }
                    var iterators = heard
                    var turn = 0
                    var match = try await GKTurnBasedMatch.load(withID: matchID, in: first)
                    while ContinuousClock.now < deadline {
                        let next = (turn + 1) % 2
                        try await match.endTurn(withNextParticipants: [match.participants[next]], turnTimeout: 0, match: data)
                        let ended = ContinuousClock.now
                        // The next player's device hears that the turn is theirs; the event carries the match as it is.
                        while let event = await iterators[next].next() {
                            if case .turnBased(let change) = event, change.matchID == matchID, change.didBecomeActive {
                                match = change.match
                                break
                            }
                        }
                        let (s, atto) = (ContinuousClock.now - ended).components
                        delays.append((Double(s) + Double(atto) / 1e18) * 1000)
                        turn = next
                    }
                    return delays
                }
            }
            return try await group.reduce(into: []) { $0 += $1 }
        }
        let (s, atto) = (ContinuousClock.now - start).components
        for (first, second, _) in games {
            await first.close()
            await second.close()
        }
        return (Double(delays.count) / (Double(s) + Double(atto) / 1e18), delays)
    }

    /// The anchor: per turn, one transaction that reads the match row, replaces it if its version is the one read,
    /// replaces the data row, and appends an event row for each of the two players — what a turn stores, without the
    /// rules, the JSON state, the HTTP or the push.
    static func anchor(_ db: Database, matches: Int, bytes: Int, concurrency: Int, seconds: Double) async throws -> (upserts: Int, elapsed: Double) {
        try await db.write { storage in
            for statement in [
                "CREATE TABLE anchor_match (id BIGINT PRIMARY KEY, version BIGINT NOT NULL, state TEXT NOT NULL)",
                "CREATE TABLE anchor_data (id BIGINT PRIMARY KEY, data TEXT NOT NULL)",
                "CREATE TABLE anchor_event (player BIGINT NOT NULL, seq BIGINT NOT NULL, payload TEXT NOT NULL, PRIMARY KEY (player, seq))",
            ] { try await storage.sql.raw(SQLQueryString(statement)).run() }
        }
        let state = String(repeating: "s", count: 600)
        for start in stride(from: 0, to: matches, by: 1000) {
            try await db.write { storage in
                for id in start..<min(start + 1000, matches) {
                    try await storage.sql.raw("INSERT INTO anchor_match (id, version, state) VALUES (\(bind: Int64(id)), 1, \(bind: state))").run()
                    try await storage.sql.raw("INSERT INTO anchor_data (id, data) VALUES (\(bind: Int64(id)), '')").run()
                }
            }
        }
        let data = String(repeating: "d", count: bytes)
        let payload = String(repeating: "e", count: 900)
        return try await db.runLoops(seconds: seconds, concurrency: concurrency) { worker, n in
            let id = Int64(worker)
            try await db.write { storage in
                guard let row = try await storage.sql.raw("SELECT version FROM anchor_match WHERE id = \(bind: id)").first() else { return }
                let version = try row.decode(column: "version", as: Int64.self)
                try await storage.sql.raw(
                    "UPDATE anchor_match SET version = \(bind: version + 1), state = \(bind: state) WHERE id = \(bind: id) AND version = \(bind: version)"
                ).run()
                try await storage.sql.raw("UPDATE anchor_data SET data = \(bind: data) WHERE id = \(bind: id)").run()
                for player in [2 * id, 2 * id + 1] {
                    try await storage.sql.raw(
                        "INSERT INTO anchor_event (player, seq, payload) VALUES (\(bind: player), \(bind: version), \(bind: payload))"
                    ).run()
                }
            }
        }
    }
}

/// The storage per seeded match, set from the server's preparation step.
private final class SeededSize: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Double?

    func set(_ bytes: Double?) { lock.withLock { value = bytes } }
    var bytesPerMatch: Double? { lock.withLock { value } }
}
