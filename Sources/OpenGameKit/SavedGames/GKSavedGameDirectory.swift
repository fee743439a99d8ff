import Foundation
import GameCenterProtocol
import Synchronization

/// A save as a folder the game reads and writes freely, kept in sync with the player's Game Center account (the model
/// of Apple's GameSave framework): open it, use its files, finish syncing when the game reached a point worth keeping.
///
/// ```swift
/// let directory = try await GKSavedGameDirectory.open(named: "world")
/// let level = try? Data(contentsOf: directory.url.appendingPathComponent("level.json"))
/// try progress.write(to: directory.url.appendingPathComponent("level.json"))
/// try await directory.finishSyncing()
/// ```
///
/// The folder is ``url``, under the game's ``GKGameCenter/storageDirectory``, one per player (subfolders allowed; empty
/// folders, dates and permissions are not kept). It is uploaded as one save named ``name``, packed (see
/// `docs/SAVED_GAMES.md`, "The directory form"), through the same versions as ``GKLocalPlayer/saveGameData(_:withName:)``:
/// ``GKLocalPlayer/fetchSavedGames()`` lists it, and nothing is ever overwritten silently.
///
/// Follow ``state`` (or ``states``): opening downloads a newer version from the server into the folder
/// (``State-swift.enum/syncing``, then ``State-swift.enum/ready``); when another device saves, an open directory fetches it
/// at once unless the folder has changes not synced yet, and is then ``State-swift.enum/conflicted(_:)``. Do not write in
/// the folder while it is ``State-swift.enum/syncing``. Open a directory once at a time; ``close()`` it when done.
public final class GKSavedGameDirectory: Sendable {
    /// Where a directory stands.
    public enum State: Sendable {
        /// Comparing with the server, downloading a newer version into the folder, or waiting for a save kept while
        /// offline to go up.
        case syncing
        /// The folder holds the newest version the device knows of (plus the game's changes not synced yet).
        case ready
        /// The server cannot be reached: the folder is usable, and ``GKSavedGameDirectory/finishSyncing()`` keeps the
        /// save on this device until the server is back (the SDK uploads it by itself).
        case offline
        /// No player was signed in when it was opened: the folder is this device's only and is never uploaded.
        case local
        /// The save is in conflict: these versions are current (a version whose ``GKSavedGame/syncState`` is
        /// ``GKSavedGame/SyncState-swift.enum/conflicted`` is on the server; the folder's changes not synced yet are one
        /// more, with a local `versionID`). Choose one with ``GKSavedGameDirectory/resolveConflicts(with:)``.
        case conflicted([GKSavedGame])
        /// Syncing failed for this reason (the server refused the save, or a download was damaged); the folder is as
        /// it was. Finishing syncing again tries again.
        case error(GKError)
        /// ``GKSavedGameDirectory/close()`` was called: every call throws.
        case closed
    }

    /// What the directory last synced, kept beside the folder.
    private struct Record: Codable {
        /// The server version the folder was last the same as (nil: none yet, or its upload is pending or was refused).
        var versionID: String?
        /// The SHA-256 of the folder's pack when it was last synced (downloaded, or taken by the upload or the outbox).
        var sha256: String?
        /// The game's most bytes per save, as the server last said.
        var saveBytes: Int64?
    }

    /// The save's name: the directory is uploaded as the save of this name.
    public let name: String
    /// The folder the game reads and writes: `storageDirectory/saved-game-directories/PLAYER/…/files`.
    public let url: URL
    private let home: URL
    private let gameCenter: GKGameCenter
    /// The player the directory belongs to; nil: ``State-swift.enum/local``.
    private let playerID: String?
    private let current = Mutex<State>(.syncing)
    private let watchers = Mutex<(next: Int, all: [Int: AsyncStream<State>.Continuation])>((0, [:]))
    /// One operation at a time: syncing, finishing, resolving.
    private let serial = KeyedLocks()
    private let listening = Mutex<Task<Void, Never>?>(nil)

    private init(name: String, home: URL, gameCenter: GKGameCenter, playerID: String?) {
        self.name = name
        self.home = home
        self.url = home.appendingPathComponent("files", isDirectory: true)
        self.gameCenter = gameCenter
        self.playerID = playerID
    }

    /// Opens the saved-game directory `name` of the player signed in on `gameCenter`: downloads the server's version
    /// into the folder when it is newer than the folder's, and follows the player's other devices until ``close()``.
    /// Returns once the first sync is done: ``state`` is then ``State-swift.enum/ready``,
    /// ``State-swift.enum/offline``, ``State-swift.enum/conflicted(_:)`` or ``State-swift.enum/error(_:)``, or still
    /// ``State-swift.enum/syncing`` while a save of the folder kept offline goes up (it throws only for a bad name or a
    /// folder it cannot create). With no player signed in, the directory is
    /// ``State-swift.enum/local``. `name` has 1 to 255 characters, without control characters.
    public static func open(named name: String, in gameCenter: GKGameCenter = .default) async throws -> GKSavedGameDirectory {
        guard (1...255).contains(name.count), !name.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
            throw GKError(
                .invalidParameter, "a saved-game directory's name has 1 to 255 characters, without control characters; got \(name.debugDescription)")
        }
        let playerID = gameCenter.state.withLock { $0.session?.player.playerID }
        let owner = String((playerID ?? "local").map { $0.isLetter || $0.isNumber || $0 == "_" || $0 == "-" ? $0 : "_" })
        let home = gameCenter.storageDirectory.appendingPathComponent("saved-game-directories", isDirectory: true)
            .appendingPathComponent(owner, isDirectory: true)
            .appendingPathComponent(String(SavedGameDigest.sha256(Data(name.utf8)).prefix(32)), isDirectory: true)
        let directory = GKSavedGameDirectory(name: name, home: home, gameCenter: gameCenter, playerID: playerID)
        try directory.prepare()
        guard playerID != nil else {
            directory.set(.local)
            return directory
        }
        directory.listen()
        await directory.serially { await directory.sync() }
        return directory
    }

    /// ``open(named:in:)`` with a completion handler.
    public static func open(
        named name: String, in gameCenter: GKGameCenter = .default,
        completionHandler: @escaping @Sendable (GKSavedGameDirectory?, (any Error)?) -> Void
    ) {
        CompletionHandler.run(completionHandler) { try await open(named: name, in: gameCenter) }
    }

    /// Where the directory stands now.
    public var state: State { current.withLock { $0 } }

    /// The directory's states as they change, starting with the current one; the stream ends after
    /// ``State-swift.enum/closed``. Each access returns a new stream.
    public var states: AsyncStream<State> {
        let (stream, continuation) = AsyncStream.makeStream(of: State.self, bufferingPolicy: .bufferingNewest(100))
        let (id, now) = watchers.withLock { watchers -> (Int, State) in
            watchers.next += 1
            watchers.all[watchers.next] = continuation
            return (watchers.next, current.withLock { $0 })
        }
        continuation.yield(now)
        if case .closed = now { continuation.finish() }
        continuation.onTermination = { [weak self] _ in _ = self?.watchers.withLock { $0.all.removeValue(forKey: id) } }
        return stream
    }

    /// Packs the folder and uploads it as the save's new version, based on the version the folder was synced with.
    /// When the server cannot be reached, the save is kept on this device (``State-swift.enum/offline``) and uploaded
    /// by itself later, as ``GKLocalPlayer/saveGameData(_:withName:)`` does. When another device saved meanwhile, the
    /// server keeps both and the directory is ``State-swift.enum/conflicted(_:)``. Throws when the directory is closed,
    /// local or in conflict, when the folder holds a symbolic link or a path that is not allowed, or when its pack is
    /// larger than the game allows per save.
    public func finishSyncing() async throws {
        try await serially {
            let playerID = try self.syncable()
            if case .conflicted = self.state {
                throw GKError(
                    .invalidParameter,
                    "the saved-game directory \(self.name) is in conflict; choose one of its versions with resolveConflicts(with:) first")
            }
            let packed = self.home.appendingPathComponent("upload-\(UUID().uuidString).pack")
            defer { try? FileManager.default.removeItem(at: packed) }
            let (size, sha256) = try DirectoryPack.pack(self.url, to: packed)
            var record = self.record()
            if let limit = record.saveBytes, size > limit {
                throw GKError(
                    .invalidParameter,
                    "the saved-game directory \(self.name) packs to \(size) bytes; a save of this game has at most \(limit) bytes: remove files and finish syncing again"
                )
            }
            // Nothing changed since the last sync: no new version.
            let pending = await self.gameCenter.savedGameOutbox.entry(playerID: playerID, name: self.name)
            if record.versionID != nil, record.sha256 == sha256, pending == nil {
                self.set(.ready)
                return
            }
            let basedOn = self.gameCenter.savedGameBases.load()?[playerID]?[self.name] ?? []
            try await self.upload(packed, size: size, sha256: sha256, basedOn: basedOn, playerID: playerID, record: &record)
        }
    }

    /// ``finishSyncing()`` with a completion handler.
    public func finishSyncing(completionHandler: @escaping @Sendable ((any Error)?) -> Void) {
        CompletionHandler.run(completionHandler) { try await self.finishSyncing() }
    }

    /// Ends a conflict in one step with `version`, one of those ``state`` lists in
    /// ``State-swift.enum/conflicted(_:)``: a version from the server is unpacked into the folder (replacing its files),
    /// the folder's own changes are kept as they are; then the folder is uploaded based on every conflicting version, so
    /// it becomes the save's only current version on every device. Offline, the resolution waits on this device as
    /// ``finishSyncing()``'s upload does.
    public func resolveConflicts(with version: GKSavedGame) async throws {
        try await serially {
            let playerID = try self.syncable()
            guard case .conflicted(let versions) = self.state else {
                throw GKError(.invalidParameter, "the saved-game directory \(self.name) is not in conflict; there is nothing to resolve")
            }
            guard versions.contains(where: { $0.versionID == version.versionID }) else {
                throw GKError(
                    .invalidParameter,
                    "choose one of the conflicting versions the directory's state lists (\(versions.map(\.versionID).joined(separator: ", "))); \(version.versionID) is not one of them"
                )
            }
            if case .server = version.source { try await self.download(version) }
            let packed = self.home.appendingPathComponent("upload-\(UUID().uuidString).pack")
            defer { try? FileManager.default.removeItem(at: packed) }
            let (size, sha256) = try DirectoryPack.pack(self.url, to: packed)
            var record = self.record()
            let onServer = versions.filter { if case .server = $0.source { true } else { false } }.map(\.versionID)
            let known = self.gameCenter.savedGameBases.load()?[playerID]?[self.name] ?? []
            let basedOn = Array(Set(known + onServer)).sorted()
            try await self.upload(packed, size: size, sha256: sha256, basedOn: basedOn, playerID: playerID, record: &record)
        }
    }

    /// ``resolveConflicts(with:)`` with a completion handler.
    public func resolveConflicts(with version: GKSavedGame, completionHandler: @escaping @Sendable ((any Error)?) -> Void) {
        CompletionHandler.run(completionHandler) { try await self.resolveConflicts(with: version) }
    }

    /// Stops following the server; ``state`` becomes ``State-swift.enum/closed`` and every later call throws. The folder
    /// and a save waiting to be uploaded stay.
    public func close() async {
        set(.closed)
        listening.withLock { task in
            task?.cancel()
            task = nil
        }
        // Waits for an operation under way to end.
        await serial.withLock("") {}
    }

    /// ``close()`` with a completion handler, called once it is closed.
    public func close(completionHandler: @escaping @Sendable () -> Void) {
        CompletionHandler.run(completionHandler) { await self.close() }
    }

    // MARK: Syncing

    /// The player, or why the directory cannot sync.
    private func syncable() throws -> String {
        if case .closed = state {
            throw GKError(.invalidParameter, "the saved-game directory \(name) was closed; open it again with GKSavedGameDirectory.open(named:in:)")
        }
        guard let playerID else {
            throw GKError(
                .notAuthenticated,
                "no player was signed in when the saved-game directory \(name) was opened: it is local only; sign in and open it again to sync it")
        }
        return playerID
    }

    /// Uploads a pack of the folder (moved into the outbox) and records the outcome.
    /// A refused upload leaves the record as it was.
    private func upload(_ packed: URL, size: Int64, sha256: String, basedOn: [String], playerID: String, record: inout Record) async throws {
        let result: (made: GKSavedGame, current: [GKSavedGame])
        do {
            result = try await GKLocalPlayer.keepAndSend(
                .file(packed, size: size, sha256: sha256), name: name, basedOn: basedOn, device: gameCenter, playerID: playerID)
        } catch let error as GKError {
            set(.error(error))
            throw error
        }
        // Pending: no version yet, so the folder counts as changed until a server version has its bytes.
        record.sha256 = sha256
        record.versionID = result.made.syncState == .pending ? nil : result.made.versionID
        try save(record)
        if result.made.syncState == .pending {
            set(.offline)
        } else {
            set(result.current.count > 1 ? .conflicted(result.current) : .ready)
        }
    }

    /// Compares the folder with the server and brings them together where that loses nothing; sets the state.
    private func sync() async {
        guard let playerID, !isClosed else { return }
        set(.syncing)
        do {
            let list: SavedGameList
            do {
                list = try await gameCenter.authenticated(.get, "/v1/saved-games", as: SavedGameList.self)
            } catch let error as GKError where error.isTransient {
                set(.offline)
                return
            }
            var record = self.record()
            record.saveBytes = list.limits.saveBytes
            try save(record)
            // A save of the folder waits to go up: the server takes it first (the delivery brings the next sync).
            if await gameCenter.savedGameOutbox.entry(playerID: playerID, name: name) != nil {
                await gameCenter.retryOutbox()
                return
            }
            let local = try DirectoryPack.digest(of: url).sha256
            // Changed: not the files of the version last synced (an upload that never became a version, kept offline
            // then refused, leaves the folder changed too).
            let changed = (record.versionID == nil && record.sha256 != nil) || local != (record.sha256 ?? DirectoryPack.emptySHA256)
            let versions = list.saves.filter { $0.name == name }
            if versions.count == 1 {
                let version = versions[0]
                if version.versionID == record.versionID || version.sha256 == record.sha256 || version.sha256 == local {
                    // The folder's own version (its pending upload delivered, or the same files).
                    if version.sha256 == local { record.sha256 = local }
                    record.versionID = version.versionID
                    try save(record)
                    remember(version)
                    set(.ready)
                } else if !changed {
                    try await download(GKSavedGame(info: version, in: gameCenter))
                    set(.ready)
                } else {
                    set(.conflicted([try localVersion(), GKSavedGame(info: version, in: gameCenter, syncState: .conflicted)]))
                }
            } else if versions.isEmpty {
                set(.ready)
            } else {
                var conflicting = GKSavedGame.current(versions, in: gameCenter)
                if changed, !versions.contains(where: { $0.sha256 == local }) { conflicting.insert(try localVersion(), at: 0) }
                set(.conflicted(conflicting))
            }
        } catch let error as GKError {
            set(.error(error))
        } catch {
            set(.error(GKError(.unknown, "syncing the saved-game directory \(name) failed: \(error)")))
        }
    }

    /// Downloads `version` (checked by SHA-256) and unpacks it in place of the folder's files.
    private func download(_ version: GKSavedGame) async throws {
        let packed = home.appendingPathComponent("download-\(UUID().uuidString).pack")
        let incoming = home.appendingPathComponent("incoming-\(UUID().uuidString)", isDirectory: true)
        defer {
            try? FileManager.default.removeItem(at: packed)
            try? FileManager.default.removeItem(at: incoming)
        }
        try await version.write(to: packed)
        try DirectoryPack.unpack(packed, into: incoming)
        try replaceFolder(with: incoming)
        var record = self.record()
        record.versionID = version.versionID
        // The folder as this SDK packs it (the same bytes as the version, unless another writer packed it differently).
        record.sha256 = try DirectoryPack.digest(of: url).sha256
        try save(record)
        remember(version.info)
    }

    /// The folder's changes not synced yet, as a version to choose in a conflict (packed now, to be loaded). The pack is
    /// named by its SHA-256, so a version handed out earlier never reads other bytes; older ones are removed.
    private func localVersion() throws -> GKSavedGame {
        let packing = home.appendingPathComponent("packing-\(UUID().uuidString).pack")
        defer { try? FileManager.default.removeItem(at: packing) }
        let (size, sha256) = try DirectoryPack.pack(url, to: packing)
        let file = home.appendingPathComponent("local-\(sha256.prefix(16)).pack")
        for old in (try? FileManager.default.contentsOfDirectory(atPath: home.path)) ?? [] where old.hasPrefix("local-") && old != file.lastPathComponent {
            try? FileManager.default.removeItem(at: home.appendingPathComponent(old))
        }
        guard rename(packing.path, file.path) == 0 else { throw GKError(.unknown, "cannot write \(file.path)") }
        let info = SavedGameInfo(
            versionID: "local-\(sha256.prefix(16))", name: name, deviceName: ProcessInfo.processInfo.hostName, modifiedAt: Date(), size: size,
            sha256: sha256, playedSeconds: nil, progress: nil)
        return GKSavedGame(info: info, in: gameCenter, syncState: .pending, source: .file(file))
    }

    /// The folder's files become those of `incoming`: the old folder is moved aside, then removed.
    private func replaceFolder(with incoming: URL) throws {
        let old = home.appendingPathComponent("replaced", isDirectory: true)
        try? FileManager.default.removeItem(at: old)
        guard rename(url.path, old.path) == 0 else { throw GKError(.unknown, "cannot move \(url.path) aside") }
        guard rename(incoming.path, url.path) == 0 else {
            _ = rename(old.path, url.path)
            throw GKError(.unknown, "cannot move the downloaded files into \(url.path)")
        }
        try? FileManager.default.removeItem(at: old)
    }

    /// The next save of the name is based on `version`, as after fetching it.
    private func remember(_ version: SavedGameInfo) {
        guard let playerID else { return }
        GKLocalPlayer.remember([GKSavedGame(info: version, in: gameCenter)], of: name, playerID: playerID, in: gameCenter)
    }

    /// Follows the player's saves: another device's save of this name (or this device's pending one delivered), the
    /// channel reconnecting, a pending save refused.
    private func listen() {
        let events = gameCenter.events
        let name = self.name
        let task = Task { [weak self] in
            for await event in events {
                guard let self, !self.isClosed else { return }
                switch event {
                case .savedGame(let changed, let versions) where changed == name:
                    await self.serially {
                        // The version the folder already holds (heard while opening, or late): nothing to fetch.
                        if versions.count == 1, versions[0].versionID == self.record().versionID, case .ready = self.state { return }
                        await self.sync()
                    }
                case .connected:
                    if case .offline = self.state { await self.serially { await self.sync() } }
                case .savedGameRefused(let refused, let error) where refused == name:
                    self.set(.error(error))
                default:
                    break
                }
            }
        }
        listening.withLock { $0 = task }
    }

    // MARK: Keeping

    private var isClosed: Bool {
        if case .closed = state { true } else { false }
    }

    /// Sets the state and tells the watchers; nothing changes once closed.
    private func set(_ state: State) {
        let changed = current.withLock { current -> Bool in
            if case .closed = current { return false }
            current = state
            return true
        }
        guard changed else { return }
        let all = watchers.withLock { Array($0.all.values) }
        for continuation in all {
            continuation.yield(state)
            if case .closed = state { continuation.finish() }
        }
    }

    /// Runs `body` alone among the directory's operations.
    private func serially<T>(_ body: () async throws -> T) async rethrows -> T {
        try await serial.withLock("", body)
    }

    private func prepare() throws {
        try FileManager.default.createDirectory(at: home, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        // A crash while the folder was being replaced: the old files are still whole aside.
        let old = home.appendingPathComponent("replaced", isDirectory: true)
        if !FileManager.default.fileExists(atPath: url.path), FileManager.default.fileExists(atPath: old.path) {
            _ = rename(old.path, url.path)
        }
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
    }

    private var recordURL: URL { home.appendingPathComponent("state.json") }

    private func record() -> Record {
        (try? Data(contentsOf: recordURL)).flatMap { try? JSONDecoder().decode(Record.self, from: $0) } ?? Record()
    }

    private func save(_ record: Record) throws {
        try DurableFile.write(try JSONEncoder().encode(record), to: recordURL)
    }
}
