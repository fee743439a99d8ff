import ArgumentParser
import Foundation
import GameCenterStorage

/// `gamecenter import`: reads a server's or a game's archive into a database (stop the server on it first; on
/// PostgreSQL, restart its nodes after), skipping every record of a deleted account.
struct ImportCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import", abstract: "Import an archive made by `gamecenter export` into a database.",
        discussion: """
            Records whose key already exists are left as they are, so an interrupted import can be run again. Accounts \
            deleted on this server or in the archive never come back. Run it with the server stopped.
            """)

    @Option(help: "sqlite:PATH or postgres://USER:PASS@HOST:PORT/DB (default: sqlite:.gamecenter/gamecenter.sqlite).")
    var database = "sqlite:.gamecenter/gamecenter.sqlite"

    @Argument(help: "An archive folder, or a file ending in .tar.zst.")
    var source: String

    func run() async throws {
        let packed = source.hasSuffix(".tar.zst")
        do {
            let folder = packed ? try ArchivePacking.temporaryFolder() : URL(fileURLWithPath: source)
            defer { if packed { try? FileManager.default.removeItem(at: folder) } }
            if packed { try ArchivePacking.unpack(URL(fileURLWithPath: source), into: folder) }
            let lock = try SQLiteNodeLock.acquire(for: database)
            defer { withExtendedLifetime(lock) {} }
            let started = ContinuousClock.now
            let summary = try await Database.withDatabase(url: database) { try await $0.importArchive(from: folder) }
            for file in summary.files {
                print("\(file.name): \(file.records) records" + (file.skippedDeleted > 0 ? ", \(file.skippedDeleted) of deleted accounts skipped" : ""))
            }
            print("imported \(source) in \(ContinuousClock.now - started)")
        } catch let error as StorageError {
            FileHandle.standardError.write(Data("gamecenter: cannot import: \(error)\n".utf8))
            throw ExitCode(error.isInUse ? 75 : 1)
        }
    }
}
