import Foundation
import GameCenterProtocol
import Logging

extension GKLocalPlayer {
    /// Saves `data` as a new version of the save `name`, based on the version this game last fetched or saved. When another
    /// device saved meanwhile, the server keeps both and the save is in conflict (the answer is still this version);
    /// nothing is overwritten silently. Data of up to 256 KiB goes with one request;
    /// larger data in 1 MiB chunks. The server checks it by SHA-256.
    ///
    /// The save is first written to this device (and flushed to its disk when it must wait). When the server cannot be
    /// reached, this does **not** throw:
    /// the answer's ``GKSavedGame/syncState`` is ``GKSavedGame/SyncState-swift.enum/pending`` (its data loads from this
    /// device), and the SDK uploads it by itself when the server is back — at sign-in, when the realtime channel
    /// reconnects, and in the background with back-off — even after the game restarts. A newer save of the same name
    /// replaces a pending one. Once uploaded, registered ``GKSavedGameListener``s hear of it
    /// (``GKSavedGameListener/player(_:didModifySavedGame:)``, or ``GKSavedGameListener/player(_:hasConflictingSavedGames:)``
    /// when another device saved meanwhile); a save the server then refuses for good is dropped and reported as
    /// ``GKGameCenterEvent/savedGameRefused(name:error:)``. A save refused at once (over a limit, a bad name) throws.
    public func saveGameData(_ data: Data, withName name: String) async throws -> GKSavedGame {
        let (device, playerID) = try savedGameContext()
        try SavedGames.checkName(name)
        let basedOn = device.savedGameBases.load()?[playerID]?[name] ?? []
        return try await Self.keepAndSend(.data(data), name: name, basedOn: basedOn, device: device, playerID: playerID).made
    }

    /// ``saveGameData(_:withName:)`` with a completion handler.
    public func saveGameData(_ data: Data, withName name: String, completionHandler: @escaping @Sendable (GKSavedGame?, (any Error)?) -> Void) {
        CompletionHandler.run(completionHandler) { try await self.saveGameData(data, withName: name) }
    }

    /// The current versions of the local player's saves of this game: one per save (``GKSavedGame/SyncState-swift.enum/synced``),
    /// several for a save in conflict (each ``GKSavedGame/SyncState-swift.enum/conflicted``). A save of this device
    /// still waiting to be uploaded is listed instead of the server's versions of its name, as
    /// ``GKSavedGame/SyncState-swift.enum/pending``.
    ///
    /// When the server cannot be reached this throws (``GKError/Code/communicationsFailure``), with the pending saves
    /// in the error's ``GKError/partialResult`` (`[GKSavedGame]`).
    public func fetchSavedGames() async throws -> [GKSavedGame] {
        let (device, playerID) = try savedGameContext()
        let pending = await device.savedGameOutbox.entries(for: playerID).map { GKSavedGame(pending: $0, in: device) }
        let list: SavedGameList
        do {
            list = try await device.authenticated(.get, "/v1/saved-games", as: SavedGameList.self)
        } catch var error as GKError where error.isTransient {
            error.partialResult = pending
            throw error
        }
        let waiting = Set(pending.map(\.info.name))
        let saves = GKSavedGame.current(list.saves.filter { !waiting.contains($0.name) }, in: device)
        // A save with one current version: the next save is based on it. A conflict stays one until resolved. A name
        // with a pending save keeps its bases: the game was shown its own save, not the server's.
        for (name, versions) in Dictionary(grouping: saves, by: { $0.info.name }) where versions.count == 1 {
            Self.remember(versions, of: name, playerID: playerID, in: device)
        }
        // The server answers: the pending saves can go up now.
        if !pending.isEmpty { await device.retryOutbox() }
        return saves + pending
    }

    /// ``fetchSavedGames()`` with a completion handler.
    public func fetchSavedGames(completionHandler: @escaping @Sendable ([GKSavedGame]?, (any Error)?) -> Void) {
        CompletionHandler.run(completionHandler) { try await self.fetchSavedGames() }
    }

    /// Deletes the save `name`: every version of it, and a save of it waiting on this device to be uploaded.
    public func deleteSavedGames(withName name: String) async throws {
        let (device, playerID) = try savedGameContext()
        var query = URLComponents()
        query.queryItems = [URLQueryItem(name: "name", value: name)]
        let encoded = (query.percentEncodedQuery ?? "").replacingOccurrences(of: "+", with: "%2B")
        // No save of this name may go up meanwhile, or it would bring the save back: an upload under way finishes
        // first (and is deleted with the rest), and a save waiting on this device goes once the server deleted.
        let outbox = device.savedGameOutbox
        let key = SavedGameOutbox.key(playerID: playerID, name: name)
        await outbox.claim(key)
        do {
            _ = try await device.authenticated(.delete, "/v1/saved-games?\(encoded)", as: APIClient.Empty.self)
        } catch {
            await outbox.unclaim(key)
            throw error
        }
        await outbox.discard(playerID: playerID, name: name)
        await outbox.unclaim(key)
        device.savedGameBases.update { bases in bases?[playerID]?[name] = nil }
    }

    /// ``deleteSavedGames(withName:)`` with a completion handler.
    public func deleteSavedGames(withName name: String, completionHandler: @escaping @Sendable ((any Error)?) -> Void) {
        CompletionHandler.run(completionHandler) { try await self.deleteSavedGames(withName: name) }
    }

    /// Ends a conflict in one step: saves `data` as the version based on every one of `conflicting` (and on what this
    /// game last saw), so it becomes the save's only current version. Answers the save's current versions. When the
    /// server cannot be reached, the resolution is kept on this device and uploaded later, as
    /// ``saveGameData(_:withName:)`` does: the answer is then the pending save alone, and this does not throw.
    public func resolveConflictingSavedGames(_ conflicting: [GKSavedGame], with data: Data) async throws -> [GKSavedGame] {
        let (device, playerID) = try savedGameContext()
        guard let name = conflicting.first?.info.name, conflicting.allSatisfy({ $0.info.name == name }) else {
            throw GKError(.invalidParameter, "resolve the versions of one save at a time: give at least one, all with the same name")
        }
        let known = device.savedGameBases.load()?[playerID]?[name] ?? []
        // A pending version is this device's own: what it was based on counts, its local id does not.
        let pendingBases = await device.savedGameOutbox.entry(playerID: playerID, name: name)?.basedOn ?? []
        let onServer = conflicting.filter { $0.syncState != .pending }.map(\.versionID)
        let basedOn = Array(Set(known + onServer + (conflicting.contains { $0.syncState == .pending } ? pendingBases : []))).sorted()
        return try await Self.keepAndSend(.data(data), name: name, basedOn: basedOn, device: device, playerID: playerID).current
    }

    /// ``resolveConflictingSavedGames(_:with:)`` with a completion handler.
    public func resolveConflictingSavedGames(
        _ conflicting: [GKSavedGame], with data: Data, completionHandler: @escaping @Sendable ([GKSavedGame]?, (any Error)?) -> Void
    ) {
        CompletionHandler.run(completionHandler) { try await self.resolveConflictingSavedGames(conflicting, with: data) }
    }

    /// Registers `listener` for changes to the local player's saves (held weakly).
    public func register(_ listener: any GKSavedGameListener) {
        gameCenter.savedGameListeners.register(listener)
    }

    /// Stops `listener` hearing changes to the local player's saves.
    public func unregisterListener(_ listener: any GKSavedGameListener) {
        gameCenter.savedGameListeners.unregister(listener)
    }

    // MARK: Uploading

    /// The device and the signed-in player, or `notAuthenticated`.
    private func savedGameContext() throws -> (GKGameCenter, String) {
        let device = gameCenter
        _ = try device.requireToken()
        return (device, playerID)
    }

    /// Where an upload's bytes come from.
    enum Payload: Sendable {
        /// The game's data, in memory.
        case data(Data)
        /// A file this device wrote (a packed directory), with its size and SHA-256: moved into the outbox, never copied.
        case file(URL, size: Int64, sha256: String)
    }

    /// Keeps a new version in the outbox, then uploads it (flushing it to disk when it must wait). Answers the version
    /// and the save's current versions; when the server cannot be reached, the pending version alone (it stays in the
    /// outbox and goes up in the background). A refusal for good drops it and throws.
    static func keepAndSend(_ payload: Payload, name: String, basedOn: [String], device: GKGameCenter, playerID: String) async throws -> (
        made: GKSavedGame, current: [GKSavedGame]
    ) {
        let outbox = device.savedGameOutbox
        var entry = SavedGameOutbox.Entry(
            localID: "local-\(UUID().uuidString.lowercased())", playerID: playerID, name: name, basedOn: basedOn,
            deviceName: ProcessInfo.processInfo.hostName, size: 0, sha256: "", createdAt: Date())
        switch payload {
        case .data(let data):
            (entry.size, entry.sha256) = (Int64(data.count), SavedGameDigest.sha256(data))
            try await outbox.add(entry, data: data)
        case .file(let url, let size, let sha256):
            (entry.size, entry.sha256) = (size, sha256)
            try await outbox.add(entry, movingFile: url)
        }
        let key = SavedGameOutbox.key(playerID: playerID, name: name)
        await outbox.claim(key)
        // A background upload of an older save of this name may have delivered it meanwhile (this one is then based
        // on it too), or delivered this one.
        guard let current = await outbox.entry(playerID: playerID, name: name), current.localID == entry.localID else {
            await outbox.unclaim(key, after: entry.localID)
            if let delivered = await outbox.deliveredVersion(of: entry.localID) {
                let made = GKSavedGame(info: delivered, in: device)
                return (made, [made])
            }
            let pending = GKSavedGame(pending: entry, in: device)
            return (pending, [pending])
        }
        let source: Payload
        if case .data = payload { source = payload } else { source = .file(outbox.dataURL(entry.localID), size: entry.size, sha256: entry.sha256) }
        device.savedGameListeners.uploadStarted(name: name, sha256: current.sha256, playerID: playerID)
        defer { device.savedGameListeners.uploadEnded(name: name, playerID: playerID) }
        do {
            let result = try await deliver(current, from: source, device: device, retry: false)
            await outbox.delivered(current, as: result.made.info)
            // This game saw what it made current: its next save is based on that (a conflict stays one until resolved).
            if result.current.count == 1 { remember(result.current, of: name, playerID: playerID, in: device) }
            await outbox.unclaim(key, after: entry.localID)
            return result
        } catch let error where keepsPending(error) {
            do {
                try await outbox.keep(current)
            } catch {
                device.logger.error("a save waiting for the server could not be flushed to disk", metadata: [LogKey.error: "\(error)"])
            }
            await outbox.unclaim(key, after: entry.localID)
            await device.retryOutbox()
            // The server could not be reached, or could not take it now: the save is pending, not failed.
            if let error = error as? GKError, error.code != .notAuthenticated, error.code != .cancelled {
                let pending = GKSavedGame(pending: current, in: device)
                return (pending, [pending])
            }
            var kept = error as? GKError ?? GKError(.cancelled, "the save was cancelled")
            kept.queued = true
            kept.message += "; the save is kept on this device and will be uploaded when possible"
            throw kept
        } catch {
            await outbox.dropped(current)
            await outbox.unclaim(key, after: entry.localID)
            throw error
        }
    }

    /// Whether an upload that failed with `error` stays in the outbox (the network, the server, the session, a
    /// cancellation) rather than being refused for good.
    static func keepsPending(_ error: any Error) -> Bool {
        guard let error = error as? GKError else { return error is CancellationError }
        return error.isTransient || error.code == .notAuthenticated || error.code == .cancelled || error.retryAfterSeconds != nil
            || error.serverCode == WireErrorCode.requestRateLimited.rawValue
    }

    /// Uploads a pending save from the background: answers false when it should be tried again later. Delivered, the
    /// game hears of it as of another device's save; refused for good, it is dropped and reported.
    static func sendPending(_ entry: SavedGameOutbox.Entry, device: GKGameCenter) async -> Bool {
        // Only into its own player's account.
        guard device.state.withLock({ $0.session?.player.playerID }) == entry.playerID else { return false }
        let outbox = device.savedGameOutbox
        let key = SavedGameOutbox.key(playerID: entry.playerID, name: entry.name)
        await outbox.claim(key)
        guard let current = await outbox.entry(playerID: entry.playerID, name: entry.name), current.localID == entry.localID else {
            // Replaced by a newer save (its own turn comes) or delivered meanwhile.
            await outbox.unclaim(key, after: entry.localID)
            return true
        }
        device.savedGameListeners.uploadStarted(name: current.name, sha256: current.sha256, playerID: current.playerID)
        defer { device.savedGameListeners.uploadEnded(name: current.name, playerID: current.playerID) }
        do {
            let result = try await deliver(
                current, from: .file(outbox.dataURL(current.localID), size: current.size, sha256: current.sha256), device: device, retry: true)
            await outbox.delivered(current, as: result.made.info)
            // The next save is based on it before the game hears of it (and may save on at once); the game did not see
            // it itself, so it is told.
            if result.current.count == 1 {
                remember(result.current, of: current.name, playerID: current.playerID, in: device, seenByTheGame: false)
            }
            device.savedGameListeners.tell(name: current.name, versions: result.current, playerID: current.playerID, device: device)
            await outbox.unclaim(key, after: current.localID)
            return true
        } catch let error where keepsPending(error) {
            await outbox.unclaim(key, after: current.localID)
            return false
        } catch {
            await outbox.dropped(current)
            await outbox.unclaim(key, after: current.localID)
            let refusal = error as? GKError ?? GKError(.unknown, "\(error)")
            device.logger.error("a pending save was refused by the server", metadata: [LogKey.error: "\(refusal)"])
            device.eventHub.publish(.savedGameRefused(name: current.name, error: refusal))
            return true
        }
    }

    /// Uploads an entry of the outbox: resumes its upload when one was started, else starts one (a small save in one
    /// request). A `retry` first looks whether an earlier attempt saved it already (its answer lost): a current
    /// version of the name, not among its bases, with the same bytes and device. Answers the version and the save's
    /// current versions after it.
    private static func deliver(_ entry: SavedGameOutbox.Entry, from payload: Payload, device: GKGameCenter, retry: Bool) async throws -> (
        made: GKSavedGame, current: [GKSavedGame]
    ) {
        if let uploadID = entry.uploadID {
            let path = "/v1/saved-games/uploads/\(pathComponent(uploadID))"
            do {
                let upload = try await device.authenticated(.get, path, as: SavedGameUpload.self)
                return made(by: uploadID, in: try await send(payload, in: upload, device: device), entry: entry, device: device)
            } catch let error as GKError where error.code == .invalidParameter {
                // No such upload any more: it was finished (its answer lost), or it lapsed; then it starts again.
                let list = try await device.authenticated(.get, "/v1/saved-games", as: SavedGameList.self)
                if list.saves.contains(where: { $0.versionID == uploadID }) {
                    return made(
                        by: uploadID, in: SavedGameVersions(name: entry.name, versions: list.saves.filter { $0.name == entry.name }), entry: entry,
                        device: device)
                }
            }
        } else if retry {
            let list = try await device.authenticated(.get, "/v1/saved-games", as: SavedGameList.self)
            let versions = list.saves.filter { $0.name == entry.name }
            if let earlier = versions.first(where: {
                $0.sha256 == entry.sha256 && $0.size == entry.size && $0.deviceName == entry.deviceName && !entry.basedOn.contains($0.versionID)
            }) {
                return made(by: earlier.versionID, in: SavedGameVersions(name: entry.name, versions: versions), entry: entry, device: device)
            }
        }
        let fields = SavedGameUploadBody(name: entry.name, basedOn: entry.basedOn, deviceName: entry.deviceName, size: entry.size, sha256: entry.sha256)
        let upload: SavedGameUpload
        if entry.size <= Int64(SavedGameUploadBody.wholeBytes) {
            // A save of one chunk or less goes whole, in one request: its bytes as the body, its fields in a header.
            let whole: Data
            switch payload {
            case .data(let data): whole = data
            case .file(let url, _, _): whole = try Data(contentsOf: url)
            }
            upload = try await device.authenticated(
                .post, "/v1/saved-games/uploads", bytes: whole, headers: [(SavedGameUploadBody.header, try headerJSON(fields))], as: SavedGameUpload.self)
        } else {
            upload = try await device.authenticated(.post, "/v1/saved-games/uploads", body: fields, as: SavedGameUpload.self)
        }
        if let saved = upload.saved { return made(by: upload.uploadID, in: saved, entry: entry, device: device) }
        try await device.savedGameOutbox.setUploadID(upload.uploadID, of: entry)
        return made(by: upload.uploadID, in: try await send(payload, in: upload, device: device), entry: entry, device: device)
    }

    /// `fields` as JSON fit for an HTTP header: every character beyond ASCII escaped as `\uXXXX` (JSON's own escape, so
    /// the server reads the same text).
    static func headerJSON(_ fields: SavedGameUploadBody) throws -> String {
        var header = ""
        for unit in String(decoding: try WireCoding.makeEncoder().encode(fields), as: UTF8.self).utf16 {
            if unit < 0x80 {
                header.unicodeScalars.append(Unicode.Scalar(UInt8(unit)))
            } else {
                header += "\\u" + String(repeating: "0", count: 4 - String(unit, radix: 16).count) + String(unit, radix: 16)
            }
        }
        return header
    }

    /// The version `versionID` among the save's current versions after an upload; not among them when the game's
    /// conflict policy chose another.
    private static func made(by versionID: String, in current: SavedGameVersions, entry: SavedGameOutbox.Entry, device: GKGameCenter) -> (
        made: GKSavedGame, current: [GKSavedGame]
    ) {
        let saves = GKSavedGame.current(current.versions, in: device)
        let made =
            saves.first { $0.versionID == versionID }
            ?? GKSavedGame(
                info: SavedGameInfo(
                    versionID: versionID, name: entry.name, deviceName: entry.deviceName, modifiedAt: Date(), size: entry.size,
                    sha256: entry.sha256, playedSeconds: nil, progress: nil), in: device)
        return (made, saves)
    }

    /// How often an upload resumes after the connection failed, before the save fails.
    static let uploadResumptions = 8

    /// Sends the chunks the server does not have yet and finishes the upload; when the connection fails, asks the
    /// server which chunks it has and goes on from there. Answers the save's current versions.
    private static func send(_ payload: Payload, in upload: SavedGameUpload, device: GKGameCenter) async throws -> SavedGameVersions {
        let path = "/v1/saved-games/uploads/\(pathComponent(upload.uploadID))"
        let received = Set(upload.receivedChunks)
        var missing = (0..<upload.chunks).filter { !received.contains($0) }
        var failures = 0
        while true {
            do {
                for index in missing {
                    let chunk = try payload.chunk(index, of: upload.chunkBytes)
                    _ = try await device.authenticated(.put, "\(path)/chunks/\(index)", bytes: chunk, as: APIClient.Empty.self)
                }
                return try await device.authenticated(.post, "\(path)/finish", as: SavedGameVersions.self)
            } catch let error as GKError where error.code == .communicationsFailure && failures < uploadResumptions {
                failures += 1
                try await Task.sleep(for: .milliseconds(100 * failures))
                do {
                    let received = Set(try await device.authenticated(.get, path, as: SavedGameUpload.self).receivedChunks)
                    missing = (0..<upload.chunks).filter { !received.contains($0) }
                } catch let lookup as GKError where lookup.code == .invalidParameter {
                    // No such upload any more: the finish went through and only its answer was lost.
                    let list = try await device.authenticated(.get, "/v1/saved-games", as: SavedGameList.self)
                    guard let made = list.saves.first(where: { $0.versionID == upload.uploadID }) else { throw error }
                    return SavedGameVersions(name: made.name, versions: list.saves.filter { $0.name == made.name })
                } catch let lookup as GKError where lookup.code == .communicationsFailure {
                    continue  // Still unreachable: the next attempt sends the same chunks again.
                }
            }
        }
    }

    /// Records `saves` as the versions of `name` this game last saw current.
    /// `seenByTheGame`: the game saved or fetched them itself, so hearing of them later is no news.
    static func remember(_ saves: [GKSavedGame], of name: String, playerID: String, in device: GKGameCenter, seenByTheGame: Bool = true) {
        if seenByTheGame { device.savedGameListeners.saw(name: name, versionIDs: saves.map(\.versionID), playerID: playerID) }
        // Not flushed: a base lost with the machine's power makes the next save a conflict with this one, never an
        // overwrite.
        device.savedGameBases.update(flushed: false) { bases in
            var all = bases ?? [:]
            all[playerID, default: [:]][name] = saves.map(\.versionID)
            bases = all
        }
    }
}

extension GKLocalPlayer.Payload {
    /// Chunk `index` of `chunkBytes` bytes (the last one shorter): a slice of the data, or read from the file alone.
    func chunk(_ index: Int, of chunkBytes: Int) throws -> Data {
        switch self {
        case .data(let data):
            let start = index * chunkBytes
            return data.subdata(in: data.startIndex + start..<data.startIndex + min(start + chunkBytes, data.count))
        case .file(let url, _, _):
            let handle = try FileHandle(forReadingFrom: url)
            defer { try? handle.close() }
            try handle.seek(toOffset: UInt64(index) * UInt64(chunkBytes))
            return try handle.read(upToCount: chunkBytes) ?? Data()
        }
    }
}
