import Crypto
import Foundation
import GameCenterProtocol
import GameCenterStorage
import Logging

/// Saved games: a player's saves of a game, each a name with versions. A new version is uploaded in chunks, checked
/// by SHA-256 and made current in one transaction; a version not based on every current one is kept beside them (a
/// conflict) unless the game's policy settles it. Nothing is ever overwritten silently.
struct SavedGameService: Sendable {
    let database: Database
    let bus: any EventBus
    let clock: ServerClock
    let logger: Logger

    /// How long an unfinished upload is kept.
    static let uploadLifetimeMillis: Int64 = 86_400_000
    /// The most unfinished uploads one player may have at once.
    static let uploadsPerPlayer = 16
    /// The most versions a write may be based on.
    static let maximumBases = 64

    // MARK: Reading

    /// The current versions of the player's saves of the device's game, with the game's limits.
    func list(device: DeviceIdentity, session: AuthenticatedSession) async throws -> SavedGameList {
        try await list(playerID: session.playerID, game: device.game, environment: device.environment)
    }

    /// The current versions of a player's saves of `game` in `environment` (the player's device, or the studio's game
    /// server with `saves:read`).
    func list(playerID: String, game: Game, environment: Environment) async throws -> SavedGameList {
        let versions = try await database.read {
            try await $0.savedGameVersions(playerID: playerID, bundleID: game.bundleID, environment: environment.rawValue, currentOnly: true)
        }
        return SavedGameList(saves: versions.map(Self.info), limits: Self.limits(game.savedGames))
    }

    /// One chunk of one of the player's versions.
    func chunk(versionID: String, index: Int, device: DeviceIdentity, session: AuthenticatedSession) async throws -> Data {
        try await chunk(versionID: versionID, index: index, playerID: session.playerID, game: device.game, environment: device.environment)
    }

    /// One chunk of one of a player's versions of `game` in `environment`.
    func chunk(versionID: String, index: Int, playerID: String, game: Game, environment: Environment) async throws -> Data {
        guard Self.isValidID(versionID), let version = try await database.read({ try await $0.savedGameVersion(id: versionID) }),
            version.playerID == playerID, version.bundleID == game.bundleID, version.environment == environment.rawValue
        else { throw APIError.saveNoSuchSave }
        guard (0..<Self.chunkCount(version.size)).contains(index) else {
            throw APIError.saveInvalidRequest("chunk \(index) is out of range: this version has chunks 0 to \(Self.chunkCount(version.size) - 1)")
        }
        guard let data = try await database.read({ try await $0.savedGameChunk(owner: versionID, index: index) }) else {
            throw APIError.saveNoSuchSave
        }
        return data
    }

    // MARK: Uploading

    /// Starts an upload of a new version, after checking it against the game's limits; a small save that comes with its
    /// `data` (the request's base64 field or raw body, checked for size by the route) is saved at once, in one
    /// transaction.
    func start(_ body: SavedGameUploadBody, data: Data?, device: DeviceIdentity, session: AuthenticatedSession) async throws -> SavedGameUpload {
        let settings = device.game.savedGames
        try Self.check(body, settings: settings)
        let (player, bundleID, environment) = (session.playerID, device.game.bundleID, device.environment.rawValue)
        let now = clock.nowMillis()
        let version = SavedGameVersionRecord(
            versionID: Credentials.newID(prefix: "v_"), playerID: player, bundleID: bundleID, environment: environment, name: body.name,
            deviceName: body.deviceName, size: body.size, sha256: body.sha256, playedSeconds: body.playedSeconds, progress: body.progress,
            createdAt: now, current: false)
        let chunks = Self.chunkCount(body.size)
        if let data {
            try Self.checkWhole(data, of: body)
            let policy = settings.conflictPolicy
            let current = try await database.write { storage in
                let (kept, saves, bytes) = try await Self.lockedVersions(of: version, in: storage)
                try Self.checkRoom(for: body, settings: settings, current: kept.filter(\.current), saves: saves, bytes: bytes)
                if !data.isEmpty { try await storage.putSavedGameChunk(owner: version.versionID, index: 0, data: data) }
                return try await Self.makeCurrent(version, basedOn: body.basedOn, kept: kept, policy: policy, now: now, in: storage)
            }
            bus.publish(.playerEvents(playerID: player))
            return SavedGameUpload(
                uploadID: version.versionID, chunkBytes: SavedGameSettings.chunkBytes, chunks: chunks, receivedChunks: Array(0..<chunks),
                saved: SavedGameVersions(name: body.name, versions: current.map(Self.info)))
        }
        try await database.write { storage in
            for stale in try await storage.staleSavedGameUploads(playerID: player, before: now - Self.uploadLifetimeMillis, limit: 100) {
                try await storage.deleteSavedGameUpload(id: stale, keepingChunks: false)
            }
            guard try await storage.staleSavedGameUploads(playerID: player, before: Int64.max, limit: Self.uploadsPerPlayer).count < Self.uploadsPerPlayer
            else {
                throw APIError.saveTooManyUploads(Self.uploadsPerPlayer)
            }
            let (current, saves, bytes) = try await storage.savedGameVersionsAndUsage(
                playerID: player, bundleID: bundleID, environment: environment, name: body.name, currentOnly: true)
            try Self.checkRoom(for: body, settings: settings, current: current, saves: saves, bytes: bytes)
            try await storage.insertSavedGameUpload(SavedGameUploadRecord(version: version, basedOn: body.basedOn))
        }
        return SavedGameUpload(uploadID: version.versionID, chunkBytes: SavedGameSettings.chunkBytes, chunks: chunks, receivedChunks: [])
    }

    /// Refuses a new version the player has no room for: a new save (no `current` version) beyond the game's count of
    /// `saves` (the player's others), or bytes beyond its total (`bytes` of every current version, less those this one
    /// is based on).
    private static func checkRoom(
        for body: SavedGameUploadBody, settings: SavedGameSettings, current: [SavedGameVersionRecord], saves: Int, bytes: Int64
    ) throws {
        if current.isEmpty, saves >= settings.saves {
            throw APIError.saveTooManySaves(saves, limit: settings.saves)
        }
        let replaced = current.filter { body.basedOn.contains($0.versionID) }.reduce(0) { $0 + $1.size }
        let total = bytes - replaced + body.size
        if total > settings.totalBytes {
            throw APIError.saveQuotaExceeded(used: bytes, adding: body.size, total: total, limit: settings.totalBytes)
        }
    }

    /// Checks data sent with the upload's first request: of the announced size and SHA-256.
    static func checkWhole(_ data: Data, of body: SavedGameUploadBody) throws {
        guard Int64(data.count) == body.size else {
            throw APIError.saveInvalidRequest("the data has \(data.count) bytes, not the announced size \(body.size)")
        }
        let digest = SavedGameDigest.sha256(data)
        guard digest == body.sha256 else { throw APIError.saveChecksumMismatch(digest, announced: body.sha256) }
    }

    /// An unfinished upload: which chunks the server has (to resume after a dropped connection).
    func upload(id: String, device: DeviceIdentity, session: AuthenticatedSession) async throws -> SavedGameUpload {
        let upload = try await ownUpload(id: id, device: device, session: session)
        let received = try await database.read { try await $0.savedGameChunkIndexes(owner: id) }
        return SavedGameUpload(
            uploadID: id, chunkBytes: SavedGameSettings.chunkBytes, chunks: Self.chunkCount(upload.version.size), receivedChunks: received)
    }

    /// Stores chunk `index` of an upload (again, when sent again): it must have exactly the chunk's length.
    func putChunk(uploadID: String, index: Int, data: Data, device: DeviceIdentity, session: AuthenticatedSession) async throws {
        let upload = try await ownUpload(id: uploadID, device: device, session: session)
        let size = upload.version.size
        let count = Self.chunkCount(size)
        guard (0..<count).contains(index) else {
            throw APIError(
                .saveInvalidRequest,
                count == 0 ? "an empty save has no chunks" : "chunk \(index) is out of range: this upload has chunks 0 to \(count - 1)")
        }
        let expected = index < count - 1 ? SavedGameSettings.chunkBytes : Int(size - Int64(count - 1) * Int64(SavedGameSettings.chunkBytes))
        guard data.count == expected else {
            throw APIError.saveInvalidRequest("chunk \(index) must have \(expected) bytes; this one has \(data.count)")
        }
        try await database.writeStatement { try await $0.putSavedGameChunk(owner: uploadID, index: index, data: data) }
    }

    /// Finishes an upload: checks that every chunk arrived and that the bytes have the announced SHA-256, then makes
    /// the version current (alone when it was based on every current version; else beside them, unless the game's
    /// policy picks one). Answers the save's current versions.
    func finish(uploadID: String, device: DeviceIdentity, session: AuthenticatedSession) async throws -> SavedGameVersions {
        let upload = try await ownUpload(id: uploadID, device: device, session: session)
        let count = Self.chunkCount(upload.version.size)
        let received = Set(try await database.read { try await $0.savedGameChunkIndexes(owner: uploadID) })
        let missing = (0..<count).filter { !received.contains($0) }
        guard missing.isEmpty else {
            let shown = missing.prefix(10).map(String.init).joined(separator: ", ")
            throw APIError.saveUploadIncomplete("\(missing.count) of \(count) chunks have not arrived yet: \(shown)\(missing.count > 10 ? ", …" : "")")
        }
        // One chunk in memory at a time.
        var hash = SHA256()
        for index in 0..<count {
            guard let chunk = try await database.read({ try await $0.savedGameChunk(owner: uploadID, index: index) }) else {
                throw APIError.saveUploadIncomplete("chunk \(index) has not arrived yet")
            }
            hash.update(data: chunk)
        }
        let digest = SavedGameDigest.hex(hash.finalize())
        guard digest == upload.version.sha256 else {
            try await database.write { try await $0.deleteSavedGameUpload(id: uploadID, keepingChunks: false) }
            throw APIError.saveChecksumMismatch(digest, announced: upload.version.sha256)
        }
        let policy = device.game.savedGames.conflictPolicy
        let now = clock.nowMillis()
        let current = try await database.write { storage -> [SavedGameVersionRecord] in
            guard try await storage.savedGameUpload(id: uploadID) != nil else { throw APIError.saveNoSuchUpload }
            try await storage.deleteSavedGameUpload(id: uploadID, keepingChunks: true)
            let kept = try await Self.lockedVersions(of: upload.version, in: storage).versions
            return try await Self.makeCurrent(upload.version, basedOn: upload.basedOn, kept: kept, policy: policy, now: now, in: storage)
        }
        bus.publish(.playerEvents(playerID: session.playerID))
        return SavedGameVersions(name: upload.version.name, versions: current.map(Self.info))
    }

    /// Takes the lock of `version`'s save (see ``StorageSession/lockSavedGame(playerID:bundleID:environment:name:)``) and
    /// answers its kept versions, current or not, with the player's usage of the game (see
    /// ``StorageSession/savedGameVersionsAndUsage(playerID:bundleID:environment:name:currentOnly:)``): read under the
    /// lock, they stay as read until the transaction ends.
    private static func lockedVersions(of version: SavedGameVersionRecord, in storage: StorageSession) async throws -> (
        versions: [SavedGameVersionRecord], saves: Int, bytes: Int64
    ) {
        try await storage.lockSavedGame(playerID: version.playerID, bundleID: version.bundleID, environment: version.environment, name: version.name)
        return try await storage.savedGameVersionsAndUsage(
            playerID: version.playerID, bundleID: version.bundleID, environment: version.environment, name: version.name, currentOnly: false)
    }

    /// Stores `version`, whose bytes are stored, and makes it current: alone when it is based on every current version,
    /// else beside them unless `policy` picks one; deletes the save's versions beyond the newest
    /// ``SavedGameSettings/keptVersions`` that are not current, and tells the player's devices (an event in their
    /// stream, published by the caller after the commit). `kept` are the save's versions read under its lock (see
    /// ``lockedVersions(of:in:)``). Returns the save's current versions.
    private static func makeCurrent(
        _ version: SavedGameVersionRecord, basedOn: [String], kept: [SavedGameVersionRecord], policy: SavedGameSettings.ConflictPolicy, now: Int64,
        in storage: StorageSession
    ) async throws -> [SavedGameVersionRecord] {
        let before = kept.filter(\.current)
        var made = version
        made.createdAt = max(now, (before.map(\.createdAt).max() ?? 0) + 1)
        made.current = true
        let superseded = before.filter { basedOn.contains($0.versionID) }
        let current = settle(before.filter { !basedOn.contains($0.versionID) } + [made], policy: policy)
        let currentIDs = Set(current.map(\.versionID))
        let dropped = before.filter { !currentIDs.contains($0.versionID) }.map(\.versionID)
        made.current = currentIDs.contains(made.versionID)
        let demoted = Set(dropped + superseded.map(\.versionID))
        try await storage.storeSavedGameVersions([made] + before.filter { demoted.contains($0.versionID) }.map { with($0, current: false) })
        // Newest first, as the Game Center app lists them: beyond the kept number, what is no longer current goes.
        let newestFirst = (kept + [made]).sorted { ($0.createdAt, $0.versionID) > ($1.createdAt, $1.versionID) }
        let old = newestFirst.dropFirst(SavedGameSettings.keptVersions).filter { !currentIDs.contains($0.versionID) }.map(\.versionID)
        try await storage.deleteSavedGameVersions(old)
        let event = SavedGameEventInfo(bundleID: version.bundleID, save: SavedGameVersions(name: version.name, versions: current.map(info)))
        _ = try await storage.appendEvents([(version.playerID, try EventLog.payload(event))], kind: EventKind.savedGame.rawValue, now: now)
        return current
    }

    /// Deletes every version of the save `name`.
    func delete(name: String, device: DeviceIdentity, session: AuthenticatedSession) async throws {
        let (bundleID, environment) = (device.game.bundleID, device.environment.rawValue)
        guard
            try await database.write({
                try await $0.deleteSavedGame(playerID: session.playerID, bundleID: bundleID, environment: environment, name: name)
            })
        else { throw APIError.saveNoSuchSave }
    }

    // MARK: The Game Center app

    /// Every kept version of the player's saves in every game of their environment.
    func overview(playerID: String, environment: String) async throws -> [SavedGameVersionRecord] {
        try await database.read { try await $0.savedGameVersions(playerID: playerID, environment: environment) }
    }

    /// Makes one of the player's kept versions the only current one of its save (restoring an older version, or
    /// keeping one side of a conflict); the player's devices hear of it.
    func restore(versionID: String, playerID: String) async throws {
        let now = clock.nowMillis()
        try await database.write { storage in
            guard Self.isValidID(versionID), let version = try await storage.savedGameVersion(id: versionID), version.playerID == playerID else {
                throw APIError.saveNoSuchSave
            }
            try await storage.lockSavedGame(playerID: playerID, bundleID: version.bundleID, environment: version.environment, name: version.name)
            let current = try await storage.savedGameVersions(
                playerID: playerID, bundleID: version.bundleID, environment: version.environment, name: version.name, currentOnly: true)
            try await storage.setSavedGameVersions(current.map(\.versionID), current: false)
            try await storage.setSavedGameVersions([versionID], current: true)
            var restored = version
            restored.current = true
            let event = SavedGameEventInfo(bundleID: version.bundleID, save: SavedGameVersions(name: version.name, versions: [Self.info(restored)]))
            _ = try await storage.appendEvents([(playerID, try EventLog.payload(event))], kind: EventKind.savedGame.rawValue, now: now)
        }
        bus.publish(.playerEvents(playerID: playerID))
    }

    /// Deletes the player's save `name` of game `bundleID` (the Game Center app's button).
    func delete(name: String, bundleID: String, playerID: String, environment: String) async throws {
        guard try await database.write({ try await $0.deleteSavedGame(playerID: playerID, bundleID: bundleID, environment: environment, name: name) })
        else { throw APIError.saveNoSuchSave }
    }

    // MARK: Rules

    /// The versions left current after a conflict under `policy`: all of them (manual), or the one it picks.
    static func settle(_ versions: [SavedGameVersionRecord], policy: SavedGameSettings.ConflictPolicy) -> [SavedGameVersionRecord] {
        guard versions.count > 1 else { return versions }
        // Ties go to the later save, then the greater id: the same answer on every node, every time.
        let later = { (a: SavedGameVersionRecord, b: SavedGameVersionRecord) in (a.createdAt, a.versionID) < (b.createdAt, b.versionID) }
        let winner: SavedGameVersionRecord? =
            switch policy {
            case .manual: nil
            case .mostRecent: versions.max(by: later)
            case .longestPlayed:
                versions.max { ($0.playedSeconds ?? 0, 0) == ($1.playedSeconds ?? 0, 0) ? later($0, $1) : ($0.playedSeconds ?? 0) < ($1.playedSeconds ?? 0) }
            case .highestProgress: versions.max { ($0.progress ?? 0) == ($1.progress ?? 0) ? later($0, $1) : ($0.progress ?? 0) < ($1.progress ?? 0) }
            }
        return winner.map { [$0] } ?? versions
    }

    static func check(_ body: SavedGameUploadBody, settings: SavedGameSettings) throws {
        try checkName(body.name, settings: settings)
        guard body.sha256.count == 64, body.sha256.allSatisfy({ $0.isHexDigit && !$0.isUppercase }) else {
            throw APIError.saveInvalidRequest("sha256 must be 64 lowercase hex digits")
        }
        guard body.size >= 0 else { throw APIError.saveInvalidRequest("size must be 0 or more bytes; got \(body.size)") }
        guard body.size <= settings.saveBytes else {
            throw APIError.saveTooLarge(body.size, limit: settings.saveBytes)
        }
        guard body.deviceName.count <= 100, !body.deviceName.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
            throw APIError.saveInvalidRequest("deviceName must be at most 100 characters, without control characters")
        }
        guard body.basedOn.count <= maximumBases, body.basedOn.allSatisfy(isValidID) else {
            throw APIError.saveInvalidRequest("basedOn names at most \(maximumBases) version ids of 1 to 64 characters")
        }
        for (field, value) in [("playedSeconds", body.playedSeconds), ("progress", body.progress)] {
            if let value, !(value.isFinite && value >= 0) { throw APIError.saveInvalidRequest("\(field) must be a finite number, 0 or more") }
        }
    }

    static func checkName(_ name: String, settings: SavedGameSettings) throws {
        guard (1...settings.nameLength).contains(name.count), !name.unicodeScalars.contains(where: { $0.properties.generalCategory == .control })
        else {
            throw APIError.saveInvalidRequest(
                "a save's name has 1 to \(settings.nameLength) characters, without control characters; got \(name.count)")
        }
    }

    static func chunkCount(_ size: Int64) -> Int { Int((size + Int64(SavedGameSettings.chunkBytes) - 1) / Int64(SavedGameSettings.chunkBytes)) }

    static func isValidID(_ id: String) -> Bool { (1...64).contains(id.count) }

    static func limits(_ settings: SavedGameSettings) -> SavedGameLimits {
        SavedGameLimits(
            saveBytes: settings.saveBytes, totalBytes: settings.totalBytes, saves: settings.saves, nameLength: settings.nameLength,
            chunkBytes: SavedGameSettings.chunkBytes)
    }

    private static func with(_ record: SavedGameVersionRecord, current: Bool) -> SavedGameVersionRecord {
        var record = record
        record.current = current
        return record
    }

    static func info(_ record: SavedGameVersionRecord) -> SavedGameInfo {
        SavedGameInfo(
            versionID: record.versionID, name: record.name, deviceName: record.deviceName, modifiedAt: StoredTime.date(record.createdAt),
            size: record.size, sha256: record.sha256, playedSeconds: record.playedSeconds, progress: record.progress)
    }

    private func ownUpload(id: String, device: DeviceIdentity, session: AuthenticatedSession) async throws -> SavedGameUploadRecord {
        guard Self.isValidID(id), let upload = try await database.read({ try await $0.savedGameUpload(id: id) }),
            upload.version.playerID == session.playerID, upload.version.bundleID == device.game.bundleID,
            upload.version.environment == device.environment.rawValue
        else { throw APIError.saveNoSuchUpload }
        return upload
    }
}

extension APIError {
    static func saveInvalidRequest(_ message: String) -> APIError { APIError(.saveInvalidRequest, message) }
    static func saveTooLarge(_ size: Int64, limit: Int64) -> APIError {
        APIError(.saveTooLarge, "a save of this game has at most \(limit) bytes; this one has \(size)")
    }
    static func saveQuotaExceeded(used: Int64, adding size: Int64, total: Int64, limit: Int64) -> APIError {
        APIError(
            .saveQuotaExceeded, "your saves in this game take \(used) bytes; with this one (\(size) bytes) they would take \(total), over the game's \(limit)")
    }
    static func saveTooManySaves(_ count: Int, limit: Int) -> APIError {
        APIError(.saveTooMany, "you have \(count) saves in this game, the most it allows (\(limit)); delete one first")
    }
    static func saveTooManyUploads(_ limit: Int) -> APIError {
        APIError(.saveTooMany, "you have \(limit) unfinished uploads, the most at once; finish them or wait a day for them to lapse")
    }
    static func saveUploadIncomplete(_ message: String) -> APIError { APIError(.saveUploadIncomplete, message) }
    static func saveChecksumMismatch(_ digest: String, announced: String) -> APIError {
        APIError(.saveChecksumMismatch, "the uploaded bytes have SHA-256 \(digest), not the announced \(announced); nothing was saved, upload the save again")
    }
    static let saveNoSuchSave = APIError(.saveNoSuchSave, "no save or version with this name or id is yours in this game")
    static let saveNoSuchUpload = APIError(
        .saveNoSuchUpload, "no unfinished upload with this id is yours (it was finished, failed its check, or lapsed after a day)")
}
