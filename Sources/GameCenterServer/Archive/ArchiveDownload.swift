import Foundation
import GameCenterProtocol
import GameCenterStorage
import Hummingbird

/// An archive as a download (the format of `gamecenter export`) packed as one `.tar`: written to a temporary folder from
/// one snapshot and streamed from disk, so that a player with large saves or a whole server never fills the server's
/// memory. A player's is served to them (the Game Center app's "Download my data") and to the studio (admin routes,
/// console), as are a game's and the whole server's.
struct ArchiveDownload: Sendable {
    let database: Database
    let clock: ServerClock

    /// The response carrying `playerID`'s archive; unknown players are refused.
    func response(playerID: String) async throws -> Response {
        guard !(try await database.read { try await $0.players(ids: [playerID], environment: nil) }).isEmpty else {
            throw APIError.unknownPlayers([String(playerID.prefix(100))])
        }
        return try await response(scope: .player(playerID: playerID), name: "game-center-data")
    }

    /// The response carrying the archive of `scope`, as `NAME-DAY.tar`.
    func response(scope: ArchiveScope, name: String) async throws -> Response {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("gamecenter-archive-\(UUID().uuidString)")
        let tar = folder.appendingPathExtension("tar")
        do {
            let now = clock.now()
            _ = try await database.exportArchive(scope: scope, to: folder, now: now)
            try ArchiveTar.pack(folder, into: tar, modified: now)
            try FileManager.default.removeItem(at: folder)
        } catch {
            try? FileManager.default.removeItem(at: folder)
            try? FileManager.default.removeItem(at: tar)
            throw error
        }
        let day = ISO8601DateFormatter.string(from: clock.now(), timeZone: .gmt, formatOptions: [.withFullDate])
        return Response(
            status: .ok,
            headers: [
                .contentType: "application/x-tar", .cacheControl: "no-store",
                .contentDisposition: "attachment; filename=\"\(name)-\(day).tar\"",
            ],
            body: ResponseBody { writer in
                defer { try? FileManager.default.removeItem(at: tar) }
                let input = try FileHandle(forReadingFrom: tar)
                defer { try? input.close() }
                while let chunk = try input.read(upToCount: 1 << 16), !chunk.isEmpty {
                    try await writer.write(ByteBuffer(bytes: chunk))
                }
                try await writer.finish(nil)
            })
    }
}
