import Foundation
import GameCenterProtocol
import Synchronization

/// Hears changes to the local player's saves made elsewhere, as GameKit's `GKSavedGameListener`: register it with
/// ``GKLocalPlayer/register(_:)-(GKSavedGameListener)``. Both methods default to doing nothing.
public protocol GKSavedGameListener: AnyObject, Sendable {
    /// Another device saved a new version of a save; it is the only current one. Fetch it before saving on: a save
    /// based on the version this game had makes a conflict.
    func player(_ playerID: String, didModifySavedGame savedGame: GKSavedGame)
    /// A save is in conflict: these are its current versions. Resolve them with
    /// ``GKLocalPlayer/resolveConflictingSavedGames(_:with:)``.
    func player(_ playerID: String, hasConflictingSavedGames savedGames: [GKSavedGame])
}

extension GKSavedGameListener {
    /// Does nothing.
    public func player(_ playerID: String, didModifySavedGame savedGame: GKSavedGame) {}
    /// Does nothing.
    public func player(_ playerID: String, hasConflictingSavedGames savedGames: [GKSavedGame]) {}
}

/// The registered saved-game listeners, held weakly.
final class SavedGameListeners: Sendable {
    private struct Entry: @unchecked Sendable {
        weak var listener: (any GKSavedGameListener)?
    }

    private let entries = Mutex<[Entry]>([])

    func register(_ listener: any GKSavedGameListener) {
        entries.withLock { entries in
            entries.removeAll { $0.listener == nil || $0.listener === listener }
            entries.append(Entry(listener: listener))
        }
    }

    func unregister(_ listener: any GKSavedGameListener) {
        entries.withLock { $0.removeAll { $0.listener == nil || $0.listener === listener } }
    }

    func unregisterAll() {
        entries.withLock { $0.removeAll() }
    }

    /// The versions of each save the game was last told of, by player and name: a change is told once, whether it is
    /// heard on the realtime channel or from this device's own background upload.
    private let told = Mutex<[String: Set<String>]>([:])

    /// The SHA-256 of each save this device is uploading right now, by player and name: its echo on the realtime
    /// channel may come before the upload's answer.
    private let uploading = Mutex<[String: String]>([:])

    /// This device starts uploading `sha256` as the save `name` (until ``uploadEnded(name:playerID:)``).
    func uploadStarted(name: String, sha256: String, playerID: String) {
        uploading.withLock { $0["\(playerID)\n\(name)"] = sha256 }
    }

    func uploadEnded(name: String, playerID: String) {
        _ = uploading.withLock { $0.removeValue(forKey: "\(playerID)\n\(name)") }
    }

    /// Hands a change of a save to the game, unless it is this device's own save (it knows it already, or is uploading
    /// it and hears its echo before the answer).
    func deliver(_ info: SavedGameEventInfo, playerID: String, device: GKGameCenter) {
        let versions = info.save.versions
        let known = device.savedGameBases.load()?[playerID]?[info.save.name] ?? []
        guard !versions.isEmpty, Set(versions.map(\.versionID)) != Set(known) else { return }
        let own = uploading.withLock { $0["\(playerID)\n\(info.save.name)"] }
        if versions.count == 1, versions[0].sha256 == own { return }
        // Hearing is not loading: the next save stays based on what the game last fetched or saved, so a game that
        // saves without loading the other device's version makes a conflict rather than overwrite it.
        tell(name: info.save.name, versions: GKSavedGame.current(versions, in: device), playerID: playerID, device: device)
    }

    /// Records that the game knows these versions of a save (it saved or fetched them): hearing of them is no news, and
    /// hearing of any other versions later is (a restored older version included).
    func saw(name: String, versionIDs: [String], playerID: String) {
        told.withLock { $0["\(playerID)\n\(name)"] = Set(versionIDs) }
    }

    /// Tells the game (its listeners and ``GKGameCenter/events``) of a save's current versions, unless it was told of
    /// exactly these already.
    func tell(name: String, versions saves: [GKSavedGame], playerID: String, device: GKGameCenter) {
        let ids = Set(saves.map(\.versionID))
        let new = told.withLock { told in told.updateValue(ids, forKey: "\(playerID)\n\(name)") != ids }
        guard !saves.isEmpty, new else { return }
        device.eventHub.publish(.savedGame(name: name, versions: saves))
        for listener in entries.withLock({ $0.compactMap(\.listener) }) {
            if saves.count == 1 {
                listener.player(playerID, didModifySavedGame: saves[0])
            } else {
                listener.player(playerID, hasConflictingSavedGames: saves)
            }
        }
    }
}
