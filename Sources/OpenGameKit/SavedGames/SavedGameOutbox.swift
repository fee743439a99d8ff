import Foundation
import GameCenterProtocol
import Synchronization

/// Saves that must reach the server, kept on disk until it took them (``GKLocalPlayer/saveGameData(_:withName:)``
/// when the server cannot be reached, a directory's ``GKSavedGameDirectory/finishSyncing()``), as ``Outbox`` keeps
/// reports.
///
/// In `storageDirectory/saved-game-outbox/`: per player and save name, one metadata file (`KEY.json`: name, the
/// versions it is based on, device name, size, SHA-256, date, player) and one data file (`LOCALID.data`), both written
/// before the first attempt — a game killed mid-upload finds them at its next start — and flushed to disk (fsync,
/// ``keep(_:)``) when the save must wait: a save the server took at once costs no fsync on the device. A newer save of the same name replaces the waiting one: only the newest data of
/// a name goes up, based on what the game last loaded, so a device that was offline while another saved makes a
/// conflict, never an overwrite. Entries wait for their own player to be signed in; they are kept until the server
/// takes or refuses them.
actor SavedGameOutbox {
    /// A save waiting to be uploaded.
    struct Entry: Codable, Sendable {
        /// The save's local version id (`local-…`), also its data file's name.
        var localID: String
        var playerID: String
        var name: String
        var basedOn: [String]
        var deviceName: String
        var size: Int64
        var sha256: String
        var createdAt: Date
        /// The server's upload this entry goes up in, once one was started: a later attempt resumes it.
        var uploadID: String?
    }

    private let directory: URL
    private var retrying: Task<Void, Never>?
    private var retryingPlayer: String?
    /// Which background loop is the current one (a stopped loop ending later leaves a newer one alone).
    private var generation = 0
    /// Set to cut the re-sender's wait short (the server is back).
    private var nudged = false
    /// Saves being uploaded right now, by key: one upload per save at a time.
    private let uploading = KeyedLocks()
    /// What delivered entries became, by local id: a pending ``GKSavedGame`` the game kept loads it from there.
    private var deliveredVersions: [String: SavedGameInfo] = [:]

    init(directory: URL) {
        self.directory = directory
    }

    /// The key of a player's save: its metadata file's name.
    static func key(playerID: String, name: String) -> String {
        String(SavedGameDigest.sha256(Data("\(playerID)\n\(name)".utf8)).prefix(40))
    }

    /// Stores `data` as the newest pending save of its name, replacing a waiting one; not flushed yet (``keep(_:)``).
    func add(_ entry: Entry, data: Data) throws {
        try prepareDirectory()
        try DurableFile.write(data, to: dataURL(entry.localID), flushed: false)
        try replace(with: entry)
    }

    /// Moves `file` (written by the caller, on the same volume) into the outbox as the newest pending save of its
    /// name, replacing a waiting one: no copy; not flushed yet (``keep(_:)``).
    func add(_ entry: Entry, movingFile file: URL) throws {
        try prepareDirectory()
        guard rename(file.path, dataURL(entry.localID).path) == 0 else {
            throw GKError(.unknown, "cannot move \(file.lastPathComponent) into \(directory.path)")
        }
        try replace(with: entry)
    }

    private func replace(with entry: Entry) throws {
        let key = Self.key(playerID: entry.playerID, name: entry.name)
        let old = self.entry(key: key)
        do {
            try DurableFile.write(try JSONEncoder().encode(entry), to: metadataURL(key), flushed: false)
        } catch {
            try? FileManager.default.removeItem(at: dataURL(entry.localID))
            throw error
        }
        // The older data is no longer needed, unless it is going up right now (the uploader removes it then).
        if let old, old.localID != entry.localID, !uploading.isHeld(key) {
            try? FileManager.default.removeItem(at: dataURL(old.localID))
        }
    }

    /// Flushes a save that must wait to disk (its data, its metadata, their names), so that it survives the machine
    /// losing power, not only the game being killed.
    func keep(_ entry: Entry) throws {
        let key = Self.key(playerID: entry.playerID, name: entry.name)
        guard self.entry(key: key)?.localID == entry.localID else { return }
        try DurableFile.flush([dataURL(entry.localID), metadataURL(key)], in: directory)
    }

    /// The waiting save of `name`, if any.
    func entry(playerID: String, name: String) -> Entry? {
        entry(key: Self.key(playerID: playerID, name: name))
    }

    private func entry(key: String) -> Entry? {
        guard let data = try? Data(contentsOf: metadataURL(key)) else { return nil }
        return try? JSONDecoder().decode(Entry.self, from: data)
    }

    /// The saves waiting for `playerID`, oldest first.
    func entries(for playerID: String) -> [Entry] {
        let files = (try? FileManager.default.contentsOfDirectory(at: directory, includingPropertiesForKeys: nil)) ?? []
        return files.filter { $0.pathExtension == "json" }
            .compactMap { try? JSONDecoder().decode(Entry.self, from: Data(contentsOf: $0)) }
            .filter { $0.playerID == playerID }
            .sorted { ($0.createdAt, $0.localID) < ($1.createdAt, $1.localID) }
    }

    /// The file holding a pending save's data.
    nonisolated func dataURL(_ localID: String) -> URL {
        directory.appendingPathComponent("\(localID).data")
    }

    /// Waits until no one else uploads the save `key`, then holds it until ``unclaim(_:)``.
    func claim(_ key: String) async {
        await uploading.lock(key)
    }

    /// Lets the next uploader of `key` go.
    func unclaim(_ key: String) {
        uploading.unlock(key)
    }

    /// Drops the save of `name` waiting for `playerID`, data included (the game deleted the save); the caller holds its
    /// claim.
    func discard(playerID: String, name: String) {
        let key = Self.key(playerID: playerID, name: name)
        guard let entry = entry(key: key) else { return }
        try? FileManager.default.removeItem(at: metadataURL(key))
        try? FileManager.default.removeItem(at: dataURL(entry.localID))
    }

    /// Lets the next uploader of `key` go; removes data of `localID` that no entry names any more.
    func unclaim(_ key: String, after localID: String) {
        if entry(key: key)?.localID != localID { try? FileManager.default.removeItem(at: dataURL(localID)) }
        uploading.unlock(key)
    }

    /// Records the server's upload id of an entry, so that a later attempt resumes it (flushed with the entry by
    /// ``keep(_:)``: without it, an attempt starts the upload again).
    func setUploadID(_ uploadID: String, of entry: Entry) throws {
        let key = Self.key(playerID: entry.playerID, name: entry.name)
        guard var current = self.entry(key: key), current.localID == entry.localID else { return }
        current.uploadID = uploadID
        try DurableFile.write(try JSONEncoder().encode(current), to: metadataURL(key), flushed: false)
    }

    /// Forgets a delivered entry. A newer save of the same name that replaced it meanwhile is now based on it too: it
    /// supersedes it, it does not conflict with it.
    func delivered(_ entry: Entry, as version: SavedGameInfo) {
        deliveredVersions[entry.localID] = version
        let key = Self.key(playerID: entry.playerID, name: entry.name)
        guard var current = self.entry(key: key) else { return }
        if current.localID == entry.localID {
            try? FileManager.default.removeItem(at: metadataURL(key))
        } else {
            current.basedOn = Array(Set(current.basedOn + [version.versionID])).sorted()
            if let data = try? JSONEncoder().encode(current) { try? DurableFile.write(data, to: metadataURL(key)) }
        }
    }

    /// Forgets an entry the server refused for good.
    func dropped(_ entry: Entry) {
        let key = Self.key(playerID: entry.playerID, name: entry.name)
        if self.entry(key: key)?.localID == entry.localID { try? FileManager.default.removeItem(at: metadataURL(key)) }
    }

    /// The data of a pending save, while it waits; nil once delivered or replaced.
    func data(of localID: String) -> Data? {
        try? Data(contentsOf: dataURL(localID))
    }

    /// The version a pending save became on the server, once delivered by this device.
    func deliveredVersion(of localID: String) -> SavedGameInfo? {
        deliveredVersions[localID]
    }

    /// Starts uploading in the background (if not already; else cuts its wait short), with back-off from 1 s to 60 s
    /// between rounds, until nothing is left for `playerID`. `send` returns false when an entry should be tried again
    /// later.
    func startRetrying(playerID: String, send: @escaping @Sendable (Entry) async -> Bool) {
        if retrying != nil, retryingPlayer == playerID {
            nudged = true
            return
        }
        retrying?.cancel()
        retryingPlayer = playerID
        generation += 1
        let mine = generation
        removeOrphans()
        retrying = Task {
            var delay = 1.0
            while !Task.isCancelled {
                nudged = false
                var left = 0
                for entry in entries(for: playerID) where !Task.isCancelled {
                    if !(await send(entry)) { left += 1 }
                }
                if left == 0 { break }
                // Waits in short steps, so that a nudge (sign-in, reconnect, a new save) starts the next round at once.
                var waited = 0.0
                while waited < delay, !nudged, !Task.isCancelled {
                    try? await Task.sleep(for: .milliseconds(250))
                    waited += 0.25
                }
                delay = nudged ? 1 : min(delay * 2, 60)
            }
            finishedRetrying(mine)
        }
    }

    /// Stops the background uploads (sign-out, close).
    func stopRetrying() {
        retrying?.cancel()
        retrying = nil
        retryingPlayer = nil
        generation += 1
    }

    private func finishedRetrying(_ loop: Int) {
        guard generation == loop else { return }
        retrying = nil
        retryingPlayer = nil
    }

    /// Removes data files no entry names (a crash between writing the data and its metadata), while no upload runs.
    private func removeOrphans() {
        guard !uploading.isAnyHeld else { return }
        let files = (try? FileManager.default.contentsOfDirectory(at: directory, includingPropertiesForKeys: nil)) ?? []
        let named = Set(
            files.filter { $0.pathExtension == "json" }.compactMap { try? JSONDecoder().decode(Entry.self, from: Data(contentsOf: $0)).localID })
        for file in files where file.pathExtension == "data" && !named.contains(file.deletingPathExtension().lastPathComponent) {
            try? FileManager.default.removeItem(at: file)
        }
    }

    private func prepareDirectory() throws {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
    }

    private func metadataURL(_ key: String) -> URL {
        directory.appendingPathComponent("\(key).json")
    }
}

/// Locks by key for async code: `lock` waits (first come, first served) until the key is free.
final class KeyedLocks: Sendable {
    private struct State {
        var held: Set<String> = []
        var waiters: [String: [CheckedContinuation<Void, Never>]] = [:]
    }

    private let state = Mutex(State())

    func lock(_ key: String) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let free = state.withLock { state -> Bool in
                if state.held.insert(key).inserted { return true }
                state.waiters[key, default: []].append(continuation)
                return false
            }
            if free { continuation.resume() }
        }
    }

    /// Hands the key to the next waiter, or frees it.
    func unlock(_ key: String) {
        let next = state.withLock { state -> CheckedContinuation<Void, Never>? in
            guard var waiting = state.waiters[key], !waiting.isEmpty else {
                state.held.remove(key)
                return nil
            }
            let next = waiting.removeFirst()
            state.waiters[key] = waiting.isEmpty ? nil : waiting
            return next
        }
        next?.resume()
    }

    func isHeld(_ key: String) -> Bool { state.withLock { $0.held.contains(key) } }

    var isAnyHeld: Bool { state.withLock { !$0.held.isEmpty } }

    /// Runs `body` holding `key`.
    func withLock<T>(_ key: String, _ body: () async throws -> T) async rethrows -> T {
        await lock(key)
        do {
            let result = try await body()
            unlock(key)
            return result
        } catch {
            unlock(key)
            throw error
        }
    }
}
