import Foundation
import SQLKit

/// One stored version of a save.
public struct SavedGameVersionRecord: Sendable, Equatable {
    public var versionID: String
    public var playerID: String
    public var bundleID: String
    public var environment: String
    public var name: String
    public var deviceName: String
    public var size: Int64
    public var sha256: String
    public var playedSeconds: Double?
    public var progress: Double?
    public var createdAt: Int64
    /// One of the save's current versions (several: a conflict).
    public var current: Bool

    /// A version with every field given.
    public init(
        versionID: String, playerID: String, bundleID: String, environment: String, name: String, deviceName: String, size: Int64, sha256: String,
        playedSeconds: Double?, progress: Double?, createdAt: Int64, current: Bool
    ) {
        self.versionID = versionID
        self.playerID = playerID
        self.bundleID = bundleID
        self.environment = environment
        self.name = name
        self.deviceName = deviceName
        self.size = size
        self.sha256 = sha256
        self.playedSeconds = playedSeconds
        self.progress = progress
        self.createdAt = createdAt
        self.current = current
    }
}

/// An upload not yet finished: the version it becomes (not current yet) and the versions it was based on.
public struct SavedGameUploadRecord: Sendable, Equatable {
    /// The version it becomes; its `versionID` is the upload's id.
    public var version: SavedGameVersionRecord
    public var basedOn: [String]

    /// An upload of `version`, based on `basedOn`.
    public init(version: SavedGameVersionRecord, basedOn: [String]) {
        self.version = version
        self.basedOn = basedOn
    }
}

extension StorageSession {
    // MARK: Versions

    /// The player's versions of the game's saves (of one save when `name` is given), current ones only or every
    /// kept one, by name then date.
    public func savedGameVersions(playerID: String, bundleID: String, environment: String, name: String? = nil, currentOnly: Bool) async throws
        -> [SavedGameVersionRecord]
    {
        var query: SQLQueryString = """
            SELECT * FROM saved_game_versions
            WHERE player_id = \(bind: playerID) AND bundle_id = \(bind: bundleID) AND environment = \(bind: environment)
            """
        if let name { query += " AND name = \(bind: name)" }
        if currentOnly { query += " AND current = 1" }
        query += " ORDER BY name, created_at, version_id"
        return try await sql.raw(query).all().map(Self.savedGameVersion)
    }

    /// Every kept version of every save of `playerID` in `environment`, in every game, by game, name, then date.
    public func savedGameVersions(playerID: String, environment: String) async throws -> [SavedGameVersionRecord] {
        try await sql.raw(
            """
            SELECT * FROM saved_game_versions WHERE player_id = \(bind: playerID) AND environment = \(bind: environment)
            ORDER BY bundle_id, name, created_at, version_id
            """
        ).all().map(Self.savedGameVersion)
    }

    /// One version, whoever's it is.
    public func savedGameVersion(id: String) async throws -> SavedGameVersionRecord? {
        try await sql.raw("SELECT * FROM saved_game_versions WHERE version_id = \(bind: id)").first().map(Self.savedGameVersion)
    }

    /// The save `name`'s versions (current ones only, or every kept one) by date, with the player's usage of the game:
    /// how many saves they have besides `name`, and the bytes the current versions of all their saves take (`name`'s
    /// included); one statement.
    public func savedGameVersionsAndUsage(playerID: String, bundleID: String, environment: String, name: String, currentOnly: Bool) async throws -> (
        versions: [SavedGameVersionRecord], saves: Int, bytes: Int64
    ) {
        // The usage is one row, joined with the versions: a save with none still answers it.
        var query: SQLQueryString = """
            SELECT usage.saves, usage.bytes, v.*
            FROM (SELECT (SELECT COUNT(*) FROM saved_games
                          WHERE player_id = \(bind: playerID) AND bundle_id = \(bind: bundleID) AND environment = \(bind: environment)
                            AND name <> \(bind: name)) AS saves,
                         (SELECT CAST(COALESCE(SUM(size), 0) AS BIGINT) FROM saved_game_versions
                          WHERE player_id = \(bind: playerID) AND bundle_id = \(bind: bundleID) AND environment = \(bind: environment)
                            AND current = 1) AS bytes) AS usage
            LEFT JOIN saved_game_versions v
              ON v.player_id = \(bind: playerID) AND v.bundle_id = \(bind: bundleID) AND v.environment = \(bind: environment) AND v.name = \(bind: name)
            """
        if currentOnly { query += " AND v.current = 1" }
        query += " ORDER BY v.created_at, v.version_id"
        let rows = try await sql.raw(query).all()
        let versions = try rows.filter { try !$0.decodeNil(column: "version_id") }.map(Self.savedGameVersion)
        return (versions, Int(try rows.first?.int("saves") ?? 0), try rows.first?.int("bytes") ?? 0)
    }

    /// Takes the save's row (making it when new) for the rest of the transaction: on PostgreSQL a second transaction
    /// doing the same waits for this one to end, so versions are made current one after the other.
    public func lockSavedGame(playerID: String, bundleID: String, environment: String, name: String) async throws {
        try await sql.raw(
            """
            INSERT INTO saved_games (player_id, bundle_id, environment, name, revision)
            VALUES (\(bind: playerID), \(bind: bundleID), \(bind: environment), \(bind: name), 1)
            ON CONFLICT (player_id, bundle_id, environment, name) DO UPDATE SET revision = saved_games.revision + 1
            """
        ).run()
    }

    /// Stores versions in one statement: a new one whole; of one already stored, only whether it is current (a new
    /// version and the ones it supersedes go together).
    public func storeSavedGameVersions(_ versions: [SavedGameVersionRecord]) async throws {
        guard !versions.isEmpty else { return }
        let rows = versions.map { version -> SQLQueryString in
            """
            (\(bind: version.versionID), \(bind: version.playerID), \(bind: version.bundleID), \(bind: version.environment), \(bind: version.name),
             \(bind: version.deviceName), \(bind: version.size), \(bind: version.sha256), \(bind: version.playedSeconds), \(bind: version.progress),
             \(bind: version.createdAt), \(bind: Int64(version.current ? 1 : 0)))
            """
        }
        try await sql.raw(
            """
            INSERT INTO saved_game_versions (version_id, player_id, bundle_id, environment, name, device_name, size, sha256, played_seconds, progress,
                                             created_at, current)
            VALUES \(rows.joined(separator: ", "))
            ON CONFLICT (version_id) DO UPDATE SET current = excluded.current
            """
        ).run()
    }

    /// Marks versions current or not.
    public func setSavedGameVersions(_ ids: [String], current: Bool) async throws {
        guard !ids.isEmpty else { return }
        try await sql.raw(
            "UPDATE saved_game_versions SET current = \(bind: Int64(current ? 1 : 0)) WHERE version_id IN (\(binds: ids))"
        ).run()
    }

    /// Deletes versions that are not current, with their bytes.
    public func deleteSavedGameVersions(_ ids: [String]) async throws {
        guard !ids.isEmpty else { return }
        try await sql.raw(
            """
            DELETE FROM saved_game_chunks WHERE owner_id IN (SELECT version_id FROM saved_game_versions WHERE version_id IN (\(binds: ids)) AND current = 0)
            """
        ).run()
        try await sql.raw("DELETE FROM saved_game_versions WHERE version_id IN (\(binds: ids)) AND current = 0").run()
    }

    /// Deletes every version of a save and its bytes; false when there was no such save.
    public func deleteSavedGame(playerID: String, bundleID: String, environment: String, name: String) async throws -> Bool {
        let deleted = try await sql.raw(
            """
            DELETE FROM saved_games
            WHERE player_id = \(bind: playerID) AND bundle_id = \(bind: bundleID) AND environment = \(bind: environment) AND name = \(bind: name)
            RETURNING name
            """
        ).all()
        guard !deleted.isEmpty else { return false }
        try await sql.raw(
            """
            DELETE FROM saved_game_chunks WHERE owner_id IN (
                SELECT version_id FROM saved_game_versions
                WHERE player_id = \(bind: playerID) AND bundle_id = \(bind: bundleID) AND environment = \(bind: environment) AND name = \(bind: name))
            """
        ).run()
        try await sql.raw(
            """
            DELETE FROM saved_game_versions
            WHERE player_id = \(bind: playerID) AND bundle_id = \(bind: bundleID) AND environment = \(bind: environment) AND name = \(bind: name)
            """
        ).run()
        return true
    }

    // MARK: Uploads and chunks

    /// Stores a new upload.
    public func insertSavedGameUpload(_ upload: SavedGameUploadRecord) async throws {
        let version = upload.version
        let basedOn = String(decoding: try JSONEncoder().encode(upload.basedOn), as: UTF8.self)
        try await sql.raw(
            """
            INSERT INTO saved_game_uploads (upload_id, player_id, bundle_id, environment, name, based_on, device_name, size, sha256, played_seconds,
                                            progress, created_at)
            VALUES (\(bind: version.versionID), \(bind: version.playerID), \(bind: version.bundleID), \(bind: version.environment),
                    \(bind: version.name), \(bind: basedOn), \(bind: version.deviceName), \(bind: version.size), \(bind: version.sha256),
                    \(bind: version.playedSeconds), \(bind: version.progress), \(bind: version.createdAt))
            """
        ).run()
    }

    /// An unfinished upload.
    public func savedGameUpload(id: String) async throws -> SavedGameUploadRecord? {
        guard let row = try await sql.raw("SELECT * FROM saved_game_uploads WHERE upload_id = \(bind: id)").first() else { return nil }
        let version = SavedGameVersionRecord(
            versionID: try row.string("upload_id"), playerID: try row.string("player_id"), bundleID: try row.string("bundle_id"),
            environment: try row.string("environment"), name: try row.string("name"), deviceName: try row.string("device_name"),
            size: try row.int("size"), sha256: try row.string("sha256"), playedSeconds: try row.decode(column: "played_seconds", as: Double?.self),
            progress: try row.decode(column: "progress", as: Double?.self), createdAt: try row.int("created_at"), current: false)
        let basedOn = try JSONDecoder().decode([String].self, from: Data(try row.string("based_on").utf8))
        return SavedGameUploadRecord(version: version, basedOn: basedOn)
    }

    /// Forgets an upload: with its chunks, or keeping them when they became a version's.
    public func deleteSavedGameUpload(id: String, keepingChunks: Bool) async throws {
        try await sql.raw("DELETE FROM saved_game_uploads WHERE upload_id = \(bind: id)").run()
        if !keepingChunks { try await sql.raw("DELETE FROM saved_game_chunks WHERE owner_id = \(bind: id)").run() }
    }

    /// The player's uploads started before `before` (abandoned), at most `limit`.
    public func staleSavedGameUploads(playerID: String, before: Int64, limit: Int) async throws -> [String] {
        try await sql.raw(
            """
            SELECT upload_id FROM saved_game_uploads WHERE player_id = \(bind: playerID) AND created_at < \(bind: before)
            ORDER BY created_at LIMIT \(bind: Int64(limit))
            """
        ).all().map { try $0.string("upload_id") }
    }

    /// Stores (or replaces) one chunk of an upload.
    public func putSavedGameChunk(owner: String, index: Int, data: Data) async throws {
        try await sql.raw(
            """
            INSERT INTO saved_game_chunks (owner_id, idx, data) VALUES (\(bind: owner), \(bind: Int64(index)), \(bind: data))
            ON CONFLICT (owner_id, idx) DO UPDATE SET data = excluded.data
            """
        ).run()
    }

    /// The indexes of an upload's or version's stored chunks, ascending.
    public func savedGameChunkIndexes(owner: String) async throws -> [Int] {
        try await sql.raw("SELECT idx FROM saved_game_chunks WHERE owner_id = \(bind: owner) ORDER BY idx").all().map { Int(try $0.int("idx")) }
    }

    /// One chunk's bytes.
    public func savedGameChunk(owner: String, index: Int) async throws -> Data? {
        try await sql.raw("SELECT data FROM saved_game_chunks WHERE owner_id = \(bind: owner) AND idx = \(bind: Int64(index))").first()?.decode(
            column: "data", as: Data.self)
    }

    private static func savedGameVersion(_ row: any SQLRow) throws -> SavedGameVersionRecord {
        SavedGameVersionRecord(
            versionID: try row.string("version_id"), playerID: try row.string("player_id"), bundleID: try row.string("bundle_id"),
            environment: try row.string("environment"), name: try row.string("name"), deviceName: try row.string("device_name"),
            size: try row.int("size"), sha256: try row.string("sha256"), playedSeconds: try row.decode(column: "played_seconds", as: Double?.self),
            progress: try row.decode(column: "progress", as: Double?.self), createdAt: try row.int("created_at"), current: try row.int("current") == 1)
    }
}
