import Crypto
import Foundation
import GameCenterProtocol

/// One version of one of the local player's saves, as GameKit's `GKSavedGame`. Several versions of one name are a
/// conflict: resolve them with ``GKLocalPlayer/resolveConflictingSavedGames(_:with:)``.
public final class GKSavedGame: Sendable {
    /// Where a version stands between this device and the server.
    public enum SyncState: Sendable, Equatable {
        /// Kept on this device, waiting to be uploaded: the server could not be reached when it was saved. The SDK
        /// uploads it by itself (at sign-in, when the realtime channel reconnects, and in the background with
        /// back-off), and tells the game as for another device's save; ``GKSavedGame/versionID`` is a local id
        /// (`local-…`) until then.
        case pending
        /// On the server, the save's only current version.
        case synced
        /// On the server, one of the save's current versions: the save is in conflict.
        case conflicted
    }

    /// Where the version's bytes are.
    enum Source: Sendable {
        /// On the server.
        case server
        /// In the device's outbox of pending saves, under its local version id.
        case outbox
        /// In a file on this device (a directory's local changes).
        case file(URL)
    }

    let info: SavedGameInfo
    let source: Source
    private let gameCenter: GKGameCenter

    /// Where this version stands: ``SyncState-swift.enum/pending`` on this device only, ``SyncState-swift.enum/synced``
    /// or ``SyncState-swift.enum/conflicted`` on the server.
    public let syncState: SyncState

    init(info: SavedGameInfo, in gameCenter: GKGameCenter, syncState: SyncState = .synced, source: Source = .server) {
        self.info = info
        self.gameCenter = gameCenter
        self.syncState = syncState
        self.source = source
    }

    /// A save waiting in the outbox.
    convenience init(pending entry: SavedGameOutbox.Entry, in gameCenter: GKGameCenter) {
        self.init(
            info: SavedGameInfo(
                versionID: entry.localID, name: entry.name, deviceName: entry.deviceName, modifiedAt: entry.createdAt, size: entry.size,
                sha256: entry.sha256, playedSeconds: nil, progress: nil), in: gameCenter, syncState: .pending, source: .outbox)
    }

    /// The current versions in `infos`, each `.conflicted` when its name has several, else `.synced`.
    static func current(_ infos: [SavedGameInfo], in gameCenter: GKGameCenter) -> [GKSavedGame] {
        let counts = Dictionary(infos.map { ($0.name, 1) }, uniquingKeysWith: +)
        return infos.map { GKSavedGame(info: $0, in: gameCenter, syncState: counts[$0.name, default: 0] > 1 ? .conflicted : .synced) }
    }

    /// The save's name.
    public var name: String? { info.name }
    /// The name of the device that saved this version.
    public var deviceName: String? { info.deviceName }
    /// When this version was saved (the server's clock; this device's for a ``SyncState-swift.enum/pending`` one).
    public var modificationDate: Date? { info.modifiedAt }
    /// The version's identifier (a local `local-…` id while ``syncState`` is ``SyncState-swift.enum/pending``).
    public var versionID: String { info.versionID }
    /// The data's size in bytes.
    public var size: Int64 { info.size }

    /// The version's data, checked against its SHA-256: downloaded a chunk at a time, or read from this device for a
    /// ``SyncState-swift.enum/pending`` save (downloaded once this device uploaded it; a pending save replaced by a newer
    /// one of the same name before it was uploaded, or refused by the server, has no data any more: fetch the saves
    /// again).
    public func loadData() async throws -> Data {
        var data = Data()
        data.reserveCapacity(Int(info.size))
        try await read { data += $0 }
        return data
    }

    /// ``loadData()`` with a completion handler.
    public func loadData(completionHandler: @escaping @Sendable (Data?, (any Error)?) -> Void) {
        CompletionHandler.run(completionHandler) { try await self.loadData() }
    }

    /// Writes the version's data to `file` (replaced), a chunk at a time, checked against its SHA-256.
    func write(to file: URL) async throws {
        guard FileManager.default.createFile(atPath: file.path, contents: nil, attributes: [.posixPermissions: 0o600]) else {
            throw GKError(.unknown, "cannot write in \(file.deletingLastPathComponent().path)")
        }
        let handle = try FileHandle(forWritingTo: file)
        defer { try? handle.close() }
        try await read { try handle.write(contentsOf: $0) }
        try handle.synchronize()
    }

    /// Hands the data to `take` a chunk at a time, then checks the SHA-256 of the whole.
    private func read(_ take: (Data) throws -> Void) async throws {
        var hash = SHA256()
        func hashing(_ chunk: Data) throws {
            hash.update(data: chunk)
            try take(chunk)
        }
        switch source {
        case .server:
            try await Self.download(info, from: gameCenter, into: hashing)
        case .file(let url):
            try Self.readFile(url, into: hashing)
        case .outbox:
            let outbox = gameCenter.savedGameOutbox
            if let data = await outbox.data(of: info.versionID) {
                try hashing(data)
            } else if let delivered = await outbox.deliveredVersion(of: info.versionID) {
                try await Self.download(delivered, from: gameCenter, into: hashing)
            } else {
                throw GKError(
                    .invalidParameter,
                    "the pending save \(info.name) is no longer on this device: it was replaced by a newer save of the same name before it was uploaded, or the server refused it; fetch the saves again"
                )
            }
        }
        guard SavedGameDigest.hex(hash.finalize()) == info.sha256 else {
            throw GKError(.communicationsFailure, "the saved game \(info.name) arrived damaged (its SHA-256 differs); load it again")
        }
    }

    private static func download(_ info: SavedGameInfo, from gameCenter: GKGameCenter, into take: (Data) throws -> Void) async throws {
        let chunkBytes = Int64(SavedGames.chunkBytes)
        let chunks = Int((info.size + chunkBytes - 1) / chunkBytes)
        for index in 0..<chunks {
            try take(try await gameCenter.authenticated(.get, "/v1/saved-games/versions/\(pathComponent(info.versionID))/chunks/\(index)", as: Data.self))
        }
    }

    private static func readFile(_ url: URL, into take: (Data) throws -> Void) throws {
        let handle = try FileHandle(forReadingFrom: url)
        defer { try? handle.close() }
        while let chunk = try handle.read(upToCount: SavedGames.chunkBytes), !chunk.isEmpty {
            try take(chunk)
        }
    }
}

/// What the SDK's saved-game calls share.
enum SavedGames {
    /// The server's chunk size (``GameCenterProtocol/SavedGameLimits/chunkBytes``).
    static let chunkBytes = 1 << 20

    /// Refuses a name no server takes (checked here too, so that a save made offline is not kept for nothing).
    static func checkName(_ name: String) throws {
        guard !name.isEmpty, !name.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
            throw GKError(.invalidParameter, "a save's name has 1 or more characters (255 at most by default), without control characters")
        }
    }
}
