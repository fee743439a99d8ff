import Foundation
import GameCenterProtocol

/// The device's signed-in session as saved in `storageDirectory/session.json`, readable by its owner only.
struct SavedSession: Codable, Sendable, Equatable {
    var server: String
    var bundleID: String
    var environment: GKEnvironment
    var token: String
    var sessionID: String
    var expiresAt: Date
    var player: LocalPlayerProfile
    /// The sequence number of the last realtime event this device handled.
    var eventCursor: Int64
}

/// Reads and writes ``SavedSession`` atomically with owner-only permissions (file 0600, folder 0700).
struct SessionFile: Sendable {
    let directory: URL
    var url: URL { directory.appendingPathComponent("session.json") }

    func load() -> SavedSession? {
        guard let data = try? Data(contentsOf: url) else { return nil }
        return try? WireCoding.makeDecoder().decode(SavedSession.self, from: data)
    }

    /// Writes `session` atomically; `flushed`: on disk before this returns (see
    /// ``DurableFile/write(_:to:permissions:flushed:)``).
    func save(_ session: SavedSession, flushed: Bool = true) throws {
        let manager = FileManager.default
        try manager.createDirectory(at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        try manager.setAttributes([.posixPermissions: 0o700], ofItemAtPath: directory.path)
        try DurableFile.write(try WireCoding.makeEncoder().encode(session), to: url, flushed: flushed)
    }

    func delete() {
        try? FileManager.default.removeItem(at: url)
    }
}
