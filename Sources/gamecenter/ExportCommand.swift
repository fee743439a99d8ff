import ArgumentParser
import Foundation
import GameCenterStorage

/// `gamecenter export`: writes an archive of the whole server, one game or one player — JSON Lines files and a
/// manifest, in a folder or packed as `.tar.zst` — from a consistent snapshot, while the server keeps running.
struct ExportCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export",
        abstract: "Export the server's data (or one game's, or one player's) as an archive of JSON Lines.",
        discussion: "The archive's format is described in docs/EXPORT.md. A path ending in .tar.zst is packed with tar and zstd.")

    @OptionGroup var storage: DatabaseOption

    @Option(help: "Export only this game (its bundle id) and its players.")
    var game: String?

    @Option(help: "Export only this player's data (their player id).")
    var player: String?

    @Argument(help: "An empty or new folder, or a file ending in .tar.zst.")
    var destination: String

    func validate() throws {
        if game != nil && player != nil { throw ValidationError("give --game or --player, not both") }
    }

    func run() async throws {
        let scope: ArchiveScope = game.map { .game(bundleID: $0) } ?? player.map { .player(playerID: $0) } ?? .server
        let packed = destination.hasSuffix(".tar.zst")
        let folder = packed ? try ArchivePacking.temporaryFolder() : URL(fileURLWithPath: destination)
        defer { if packed { try? FileManager.default.removeItem(at: folder) } }
        do {
            let started = ContinuousClock.now
            let manifest = try await Database.withDatabase(url: storage.database) { try await $0.exportArchive(scope: scope, to: folder) }
            if packed { try ArchivePacking.pack(folder, into: URL(fileURLWithPath: destination)) }
            let records = manifest.files.reduce(0) { $0 + $1.records }
            print("exported \(records) records in \(manifest.files.count) files to \(destination) in \(ContinuousClock.now - started)")
        } catch let error as StorageError {
            FileHandle.standardError.write(Data("gamecenter: cannot export: \(error)\n".utf8))
            throw ExitCode(1)
        }
    }
}
