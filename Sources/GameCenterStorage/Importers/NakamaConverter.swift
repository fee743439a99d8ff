import Crypto
import Foundation
import GameCenterProtocol
import Logging
import PostgresNIO

/// Converts a Nakama server's database (PostgreSQL or CockroachDB, read with its own schema) into records of an
/// archive, for ``Database/importArchive(from:)`` to load into one game of this server.
///
/// Users become accounts (with ids derived from their Nakama UUID, so running it again writes the same records),
/// friends and pending invites become friendships and friend requests, leaderboard records become scores and best
/// scores of the game's boards, and storage objects become saved games. Disabled (banned) users and everything of
/// theirs are left out, as is what has no equivalent here; ``Summary`` counts both. Every table is read as a stream,
/// so memory stays flat in the users' and records' number (only the players already ranked on a board by an earlier
/// run are held, to skip their scores).
public struct NakamaConverter: Sendable {
    /// Where the converted records go.
    public struct Configuration: Sendable {
        /// The game (bundle id) whose boards and saves the records become.
        public var bundleID: String
        /// `sandbox` or `live`: the accounts' environment.
        public var environment: String
        /// The largest chunk of a save's bytes the server stores (its saved games' chunk size).
        public var chunkBytes: Int

        /// A configuration for `bundleID` in `environment`, saves cut in chunks of `chunkBytes`.
        public init(bundleID: String, environment: String, chunkBytes: Int) {
            self.bundleID = bundleID
            self.environment = environment
            self.chunkBytes = chunkBytes
        }
    }

    /// What a conversion wrote and what it left out.
    public struct Summary: Sendable {
        /// Records written, per archive file, in the order they were written.
        public var written: [(file: String, records: Int)] = []
        /// What was left out, or carried with a change, with how many of each.
        public var notes: [(what: String, count: Int)] = []
        /// Every leaderboard and tournament Nakama defines, for the game's manifest.
        public var leaderboards: [NakamaLeaderboard] = []
    }

    /// The device name a converted save's version carries.
    public static let deviceName = "Nakama"
    /// The hash given to an account that had no password on Nakama (device or social sign-in): no password matches it.
    public static let unusablePasswordHash = "!nakama:no-password"

    private static let epoch = "TIMESTAMPTZ '1970-01-01 00:00:00+00'"
    private static let systemUser = "'00000000-0000-0000-0000-000000000000'"
    /// The users who are carried: everyone but Nakama's system user and disabled (banned) users.
    private static let carriedUser = "u.id <> \(systemUser) AND u.disable_time <= \(epoch)"

    /// Reads the Nakama database at `url` (`postgres://USER:PASS@HOST:PORT/DB`) and appends its records to `builder`.
    /// `target` is the database the archive will be imported into: the scores are numbered after its last one, and
    /// a player's score on a board that already ranks them (an earlier run) is left out.
    public static func convert(
        from url: String, into builder: ArchiveBuilder, configuration: Configuration, target: Database,
        logger: Logger = Logger(label: "gamecenter.import.nakama")
    ) async throws -> Summary {
        guard case .postgres(let postgres) = try DatabaseLocation(url) else {
            throw StorageError.invalidURL("a Nakama database is PostgreSQL or CockroachDB: postgres://USER:PASS@HOST:PORT/DB")
        }
        let client = PostgresClient(configuration: postgres, backgroundLogger: logger)
        return try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await client.run() }
            defer { group.cancelAll() }
            var conversion = Conversion(client: client, builder: builder, configuration: configuration, logger: logger)
            try await conversion.run(target: target)
            return conversion.summary
        }
    }

    /// The account id a Nakama user gets in `environment`: `G:` and twenty base64url characters of a SHA-256 of both.
    public static func playerID(nakamaUser: String, environment: String) -> String {
        "G:" + derived("nakama user \(environment) \(nakamaUser.lowercased())")
    }

    /// Fifteen bytes of the SHA-256 of `text`, base64url (twenty characters): a stable id.
    static func derived(_ text: String) -> String {
        Data(SHA256.hash(data: Data(text.utf8)).prefix(15)).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
    }

    /// A Nakama bcrypt hash as this server stores it: the bcrypt string of the password itself (the form that
    /// predates pre-hashing, still verified as it is); `$2y$` is the same algorithm as `$2b$`.
    static func passwordHash(_ stored: ByteBuffer?) -> String {
        guard let stored, stored.readableBytes > 0 else { return unusablePasswordHash }
        let hash = String(decoding: stored.readableBytesView, as: UTF8.self)
        return hash.hasPrefix("$2y$") ? "$2b$" + hash.dropFirst(4) : hash
    }

    /// One run: the client, where records go, and the counts so far.
    private struct Conversion {
        let client: PostgresClient
        let builder: ArchiveBuilder
        let configuration: Configuration
        let logger: Logger
        var summary = Summary()
        private var counts: [String: Int] = [:]

        init(client: PostgresClient, builder: ArchiveBuilder, configuration: Configuration, logger: Logger) {
            self.client = client
            self.builder = builder
            self.configuration = configuration
            self.logger = logger
        }

        mutating func run(target: Database) async throws {
            try await leaderboards()
            try await users()
            try await edges()
            try await records(target: target)
            try await storage()
            for kind in ArchiveCatalog.kinds {
                if let count = counts[kind.file] { summary.written.append((kind.file, count)) }
            }
            try await countLeftOut()
        }

        private mutating func append(_ values: [String: ArchiveValue], to file: String) throws {
            try builder.append(values, to: file)
            counts[file, default: 0] += 1
        }

        private func rows(_ sql: String) async throws -> PostgresRowSequence {
            try await client.query(PostgresQuery(unsafeSQL: sql), logger: logger)
        }

        private func player(_ nakamaUser: String) -> ArchiveValue {
            .text(NakamaConverter.playerID(nakamaUser: nakamaUser, environment: configuration.environment))
        }

        private static func millis(_ column: String) -> String {
            "CAST(EXTRACT(EPOCH FROM \(column)) * 1000 AS BIGINT)"
        }

        private mutating func leaderboards() async throws {
            let query = """
                SELECT id, CAST(sort_order AS BIGINT), CAST(operator AS BIGINT), reset_schedule, CAST(duration AS BIGINT), title, description
                FROM leaderboard ORDER BY id
                """
            let operators = ["best", "set", "increment", "decrement"]
            for try await (id, sortOrder, scoreOperator, reset, duration, title, description) in try await rows(query).decode(
                (String, Int64, Int64, String?, Int64, String, String).self)
            {
                summary.leaderboards.append(
                    NakamaLeaderboard(
                        id: id, ascending: sortOrder == 0,
                        scoreOperator: operators.indices.contains(Int(scoreOperator)) ? operators[Int(scoreOperator)] : "best",
                        resetSchedule: reset.flatMap { $0.isEmpty ? nil : $0 }, title: title, description: description, isTournament: duration > 0))
            }
        }

        private mutating func users() async throws {
            // Account names are lower-cased here; Nakama's are unique as typed, so a second "Bob" beside "bob" gets "bob-2".
            let query = """
                SELECT CAST(u.id AS TEXT), u.username, u.display_name, u.password, \(Self.millis("u.create_time")), \(Self.millis("u.update_time")),
                  CAST(ROW_NUMBER() OVER (PARTITION BY lower(u.username) ORDER BY u.create_time, u.id) AS BIGINT)
                FROM users u WHERE \(NakamaConverter.carriedUser) ORDER BY u.id
                """
            for try await (id, username, displayName, password, created, updated, sameName) in try await rows(query).decode(
                (String, String, String?, ByteBuffer?, Int64, Int64, Int64).self)
            {
                let account = username.lowercased() + (sameName > 1 ? "-\(sameName)" : "")
                if sameName > 1 { counts["account names given a suffix (same name but for case)", default: 0] += 1 }
                let trimmed = (displayName ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
                let alias = String((trimmed.isEmpty ? username : trimmed).prefix(Limits.aliasLength.upperBound))
                if password == nil || password?.readableBytes == 0 {
                    counts["accounts without a password (support gives them one in the console)", default: 0] += 1
                }
                try append(
                    [
                        "player_id": player(id), "environment": .text(configuration.environment), "account_name": .text(account),
                        "password_hash": .text(NakamaConverter.passwordHash(password)), "alias": .text(alias), "underage": .integer(0),
                        "event_seq": .integer(0), "created_at": .integer(created), "updated_at": .integer(updated),
                    ], to: "accounts.jsonl")
                try append(
                    ["player_id": player(id), "bundle_id": .text(configuration.bundleID), "last_played_at": .integer(updated)], to: "played_games.jsonl")
            }
        }

        private mutating func edges() async throws {
            // Nakama keeps an edge per direction: a friendship is two state-0 rows, an invite a state-1 row from the
            // sender beside a state-2 row from the recipient (only the first is read).
            let query = """
                SELECT CAST(e.source_id AS TEXT), CAST(e.destination_id AS TEXT), CAST(e.state AS BIGINT), \(Self.millis("e.update_time"))
                FROM user_edge e JOIN users u ON u.id = e.source_id JOIN users d ON d.id = e.destination_id
                WHERE e.state IN (0, 1) AND \(NakamaConverter.carriedUser) AND \(NakamaConverter.carriedUser.replacingOccurrences(of: "u.", with: "d."))
                ORDER BY e.source_id, e.position
                """
            for try await (source, destination, state, updated) in try await rows(query).decode((String, String, Int64, Int64).self) {
                if state == 0 {
                    try append(["player_id": player(source), "friend_id": player(destination), "created_at": .integer(updated)], to: "friendships.jsonl")
                } else {
                    let id = "fr_" + NakamaConverter.derived("nakama invite \(configuration.environment) \(source) \(destination)")
                    try append(
                        [
                            "request_id": .text(id), "from_player": player(source), "to_player": player(destination), "status": .text("pending"),
                            "created_at": .integer(updated),
                        ], to: "friend_requests.jsonl")
                }
            }
        }

        /// The records that never expire (`expiry_time` at the epoch) of leaderboards that are not tournaments, as one
        /// score per player and board, numbered in the order they were last updated.
        private mutating func records(target: Database) async throws {
            let carried = summary.leaderboards.filter { !$0.isTournament && $0.isValidCategory }
            var ranked: [String: Set<String>] = [:]
            for board in carried {
                let (bundleID, environment) = (configuration.bundleID, configuration.environment)
                ranked[board.id] = try await target.read {
                    try await $0.playersWithBestScores(bundleID: bundleID, environment: environment, category: board.id)
                }
            }
            var scoreID = try await target.read { try await $0.largestScoreID() }
            let query = """
                SELECT r.leaderboard_id, CAST(r.owner_id AS TEXT), r.score, r.subscore, \(Self.millis("r.update_time"))
                FROM leaderboard_record r JOIN users u ON u.id = r.owner_id
                WHERE r.expiry_time <= \(NakamaConverter.epoch) AND \(NakamaConverter.carriedUser)
                ORDER BY r.update_time, r.leaderboard_id, r.owner_id
                """
            for try await (board, owner, score, subscore, updated) in try await rows(query).decode((String, String, Int64, Int64, Int64).self) {
                guard let already = ranked[board] else { continue }
                let playerID = NakamaConverter.playerID(nakamaUser: owner, environment: configuration.environment)
                guard !already.contains(playerID) else {
                    counts["scores already imported by an earlier run", default: 0] += 1
                    continue
                }
                scoreID += 1
                let (bundle, environment) = (ArchiveValue.text(configuration.bundleID), ArchiveValue.text(configuration.environment))
                try append(
                    [
                        "score_id": .integer(scoreID), "bundle_id": bundle, "environment": environment, "category": .text(board),
                        "player_id": .text(playerID), "value": .integer(score), "context": .integer(subscore), "reported_at": .integer(updated),
                    ], to: "scores.jsonl")
                try append(
                    [
                        "bundle_id": bundle, "environment": environment, "category": .text(board), "player_id": .text(playerID),
                        "score_id": .integer(scoreID), "value": .integer(score),
                    ], to: "best_scores.jsonl")
            }
        }

        /// Each user's storage object as a save named `collection/key`, one version whose bytes are the JSON value.
        private mutating func storage() async throws {
            let query = """
                SELECT s.collection, s.key, CAST(s.user_id AS TEXT), CAST(s.value AS TEXT), \(Self.millis("s.update_time"))
                FROM storage s JOIN users u ON u.id = s.user_id WHERE \(NakamaConverter.carriedUser)
                ORDER BY s.user_id, s.collection, s.key
                """
            for try await (collection, key, owner, value, updated) in try await rows(query).decode((String, String, String, String, Int64).self) {
                let name = "\(collection)/\(key)"
                let bytes = Array(value.utf8)
                let versionID = "v_" + NakamaConverter.derived("nakama storage \(configuration.environment) \(owner) \(name)")
                let (bundle, environment) = (ArchiveValue.text(configuration.bundleID), ArchiveValue.text(configuration.environment))
                try append(
                    ["player_id": player(owner), "bundle_id": bundle, "environment": environment, "name": .text(name), "revision": .integer(1)],
                    to: "saved_games.jsonl")
                try append(
                    [
                        "version_id": .text(versionID), "player_id": player(owner), "bundle_id": bundle, "environment": environment, "name": .text(name),
                        "device_name": .text(NakamaConverter.deviceName), "size": .integer(Int64(bytes.count)),
                        "sha256": .text(SHA256.hash(data: bytes).map { String(format: "%02x", $0) }.joined()), "created_at": .integer(updated),
                        "current": .integer(1),
                    ], to: "saved_game_versions.jsonl")
                for (index, start) in stride(from: 0, to: bytes.count, by: configuration.chunkBytes).enumerated() {
                    let chunk = Array(bytes[start..<min(start + configuration.chunkBytes, bytes.count)])
                    try append(["owner_id": .text(versionID), "idx": .integer(Int64(index)), "data": .bytes(chunk)], to: "saved_game_chunks.jsonl")
                }
            }
        }

        /// Counts, in Nakama's tables, what has no equivalent here or was not carried.
        private mutating func countLeftOut() async throws {
            let carriedIDs = summary.leaderboards.filter { !$0.isTournament && $0.isValidCategory }.map {
                "'\($0.id.replacingOccurrences(of: "'", with: "''"))'"
            }
            let onCarriedBoard = carriedIDs.isEmpty ? "FALSE" : "r.leaderboard_id IN (\(carriedIDs.joined(separator: ", ")))"
            let queries: [(String, String)] = [
                (
                    "disabled (banned) users, with all of theirs",
                    "SELECT COUNT(*) FROM users WHERE id <> \(NakamaConverter.systemUser) AND disable_time > \(NakamaConverter.epoch)"
                ),
                ("blocked users (state 3 edges)", "SELECT COUNT(*) FROM user_edge WHERE state = 3"),
                (
                    "leaderboard records of a period that ends (boards with a reset schedule)",
                    "SELECT COUNT(*) FROM leaderboard_record r WHERE r.expiry_time > \(NakamaConverter.epoch) AND \(onCarriedBoard)"
                ),
                (
                    "tournament records, and records of boards whose id is not a category",
                    "SELECT COUNT(*) FROM leaderboard_record r WHERE NOT (\(onCarriedBoard))"
                ),
                ("storage objects of the system user", "SELECT COUNT(*) FROM storage WHERE user_id = \(NakamaConverter.systemUser)"),
                ("groups", "SELECT COUNT(*) FROM groups"),
                ("notifications", "SELECT COUNT(*) FROM notification"),
                ("chat messages", "SELECT COUNT(*) FROM message"),
                ("wallet ledger entries", "SELECT COUNT(*) FROM wallet_ledger"),
            ]
            for (what, sql) in queries {
                for try await count in try await rows(sql).decode(Int64.self) where count > 0 {
                    summary.notes.append((what, Int(count)))
                }
            }
            for (what, count) in counts.sorted(by: { $0.key < $1.key }) where !what.hasSuffix(".jsonl") {
                summary.notes.append((what, count))
            }
        }
    }
}
