import Foundation
import GameCenterProtocol

/// One version of one of the local player's saves, as GameKit's `GKSavedGame`. Several versions of one name are a
/// conflict: resolve them with ``GKLocalPlayer/resolveConflictingSavedGames(_:with:)``.
public final class GKSavedGame: Sendable {
    let info: SavedGameInfo
    private let gameCenter: GKGameCenter

    init(info: SavedGameInfo, in gameCenter: GKGameCenter) {
        self.info = info
        self.gameCenter = gameCenter
    }

    /// The save's name.
    public var name: String? { info.name }
    /// The name of the device that saved this version.
    public var deviceName: String? { info.deviceName }
    /// When this version was saved (the server's clock).
    public var modificationDate: Date? { info.modifiedAt }
    /// The version's identifier.
    public var versionID: String { info.versionID }
    /// The data's size in bytes.
    public var size: Int64 { info.size }

    /// Downloads the version's data, a chunk at a time, and checks it against its SHA-256.
    public func loadData() async throws -> Data {
        var data = Data()
        data.reserveCapacity(Int(info.size))
        let chunkBytes = Int64(SavedGames.chunkBytes)
        let chunks = Int((info.size + chunkBytes - 1) / chunkBytes)
        for index in 0..<chunks {
            data += try await gameCenter.authenticated(
                .get, "/v1/saved-games/versions/\(pathComponent(info.versionID))/chunks/\(index)", as: Data.self)
        }
        guard SavedGameDigest.sha256(data) == info.sha256 else {
            throw GKError(.communicationsFailure, "the saved game \(info.name) arrived damaged (its SHA-256 differs); load it again")
        }
        return data
    }

    /// ``loadData()`` with a completion handler.
    public func loadData(completionHandler: @escaping @Sendable (Data?, (any Error)?) -> Void) {
        CompletionHandler.run(completionHandler) { try await self.loadData() }
    }
}

/// What the SDK's saved-game calls share.
enum SavedGames {
    /// The server's chunk size (``GameCenterProtocol/SavedGameLimits/chunkBytes``).
    static let chunkBytes = 1 << 20
}
