import Foundation
import GameCenterProtocol

extension GKLocalPlayer {
    /// Saves `data` as a new version of the save `name`, based on the version this game last fetched or saved. When another
    /// device saved meanwhile, the server keeps both and the save is in conflict (the answer is still this version);
    /// nothing is overwritten silently. Data of up to 256 KiB goes with one request;
    /// larger data in 1 MiB chunks. The server checks it by SHA-256.
    public func saveGameData(_ data: Data, withName name: String) async throws -> GKSavedGame {
        let (device, playerID) = try savedGameContext()
        let basedOn = device.savedGameBases.load()?[playerID]?[name] ?? []
        return try await upload(data, name: name, basedOn: basedOn, device: device, playerID: playerID).made
    }

    /// ``saveGameData(_:withName:)`` with a completion handler.
    public func saveGameData(_ data: Data, withName name: String, completionHandler: @escaping @Sendable (GKSavedGame?, (any Error)?) -> Void) {
        CompletionHandler.run(completionHandler) { try await self.saveGameData(data, withName: name) }
    }

    /// The current versions of the local player's saves of this game: one per save, several for a save in conflict.
    public func fetchSavedGames() async throws -> [GKSavedGame] {
        let (device, playerID) = try savedGameContext()
        let list = try await device.authenticated(.get, "/v1/saved-games", as: SavedGameList.self)
        let saves = list.saves.map { GKSavedGame(info: $0, in: device) }
        // A save with one current version: the next save is based on it. A conflict stays one until resolved.
        for (name, versions) in Dictionary(grouping: saves, by: { $0.info.name }) where versions.count == 1 {
            Self.remember(versions, of: name, playerID: playerID, in: device)
        }
        return saves
    }

    /// ``fetchSavedGames()`` with a completion handler.
    public func fetchSavedGames(completionHandler: @escaping @Sendable ([GKSavedGame]?, (any Error)?) -> Void) {
        CompletionHandler.run(completionHandler) { try await self.fetchSavedGames() }
    }

    /// Deletes the save `name`: every version of it.
    public func deleteSavedGames(withName name: String) async throws {
        let (device, playerID) = try savedGameContext()
        var query = URLComponents()
        query.queryItems = [URLQueryItem(name: "name", value: name)]
        let encoded = (query.percentEncodedQuery ?? "").replacingOccurrences(of: "+", with: "%2B")
        _ = try await device.authenticated(.delete, "/v1/saved-games?\(encoded)", as: APIClient.Empty.self)
        device.savedGameBases.update { bases in bases?[playerID]?[name] = nil }
    }

    /// ``deleteSavedGames(withName:)`` with a completion handler.
    public func deleteSavedGames(withName name: String, completionHandler: @escaping @Sendable ((any Error)?) -> Void) {
        CompletionHandler.run(completionHandler) { try await self.deleteSavedGames(withName: name) }
    }

    /// Ends a conflict in one step: saves `data` as the version based on every one of `conflicting` (and on what this
    /// game last saw), so it becomes the save's only current version. Answers the save's current versions.
    public func resolveConflictingSavedGames(_ conflicting: [GKSavedGame], with data: Data) async throws -> [GKSavedGame] {
        let (device, playerID) = try savedGameContext()
        guard let name = conflicting.first?.info.name, conflicting.allSatisfy({ $0.info.name == name }) else {
            throw GKError(.invalidParameter, "resolve the versions of one save at a time: give at least one, all with the same name")
        }
        let known = device.savedGameBases.load()?[playerID]?[name] ?? []
        let basedOn = Array(Set(known + conflicting.map(\.versionID))).sorted()
        return try await upload(data, name: name, basedOn: basedOn, device: device, playerID: playerID).current
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

    /// Uploads a new version; answers it and the save's current versions after it.
    private func upload(_ data: Data, name: String, basedOn: [String], device: GKGameCenter, playerID: String) async throws -> (
        made: GKSavedGame, current: [GKSavedGame]
    ) {
        // A small save goes with its first request: one request, one transaction.
        let body = SavedGameUploadBody(
            name: name, basedOn: basedOn, deviceName: ProcessInfo.processInfo.hostName, size: Int64(data.count), sha256: SavedGameDigest.sha256(data),
            data: data.count <= SavedGameUploadBody.inlineBytes ? data : nil)
        let upload = try await device.authenticated(.post, "/v1/saved-games/uploads", body: body, as: SavedGameUpload.self)
        let current: SavedGameVersions
        if let saved = upload.saved {
            current = saved
        } else {
            current = try await Self.send(data, in: upload, device: device)
        }
        let saves = current.versions.map { GKSavedGame(info: $0, in: device) }
        // This game saw what it made current: its next save is based on that (a conflict stays one until resolved).
        if saves.count == 1 { Self.remember(saves, of: name, playerID: playerID, in: device) }
        // Not current when the game's conflict policy chose another version.
        let made =
            saves.first { $0.versionID == upload.uploadID }
            ?? GKSavedGame(
                info: SavedGameInfo(
                    versionID: upload.uploadID, name: name, deviceName: body.deviceName, modifiedAt: Date(), size: body.size, sha256: body.sha256,
                    playedSeconds: nil, progress: nil), in: device)
        return (made, saves)
    }

    /// How often an upload resumes after the connection failed, before the save fails.
    static let uploadResumptions = 8

    /// Sends the chunks the server does not have yet and finishes the upload; when the connection fails, asks the
    /// server which chunks it has and goes on from there. Answers the save's current versions.
    private static func send(_ data: Data, in upload: SavedGameUpload, device: GKGameCenter) async throws -> SavedGameVersions {
        let path = "/v1/saved-games/uploads/\(pathComponent(upload.uploadID))"
        var missing = Array(0..<upload.chunks)
        var failures = 0
        while true {
            do {
                for index in missing {
                    let start = index * upload.chunkBytes
                    let chunk = data.subdata(in: data.startIndex + start..<data.startIndex + min(start + upload.chunkBytes, data.count))
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
    static func remember(_ saves: [GKSavedGame], of name: String, playerID: String, in device: GKGameCenter) {
        device.savedGameBases.update { bases in
            var all = bases ?? [:]
            all[playerID, default: [:]][name] = saves.map(\.versionID)
            bases = all
        }
    }
}
