import ArgumentParser
import Foundation
import GameCenterStorage

/// `gamecenter migrate`: brings a database's schema up to this build's, then exits. `serve` migrates at start too;
/// this lets an operator do it once, before starting (or upgrading) several nodes. On PostgreSQL it takes the same
/// advisory lock as `serve`, so it never races a starting node; a SQLite database a server is running on is refused.
struct MigrateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "migrate", abstract: "Apply the pending schema migrations to a database and exit.")

    @OptionGroup var storage: DatabaseOption

    func run() async throws {
        do {
            let lock = try SQLiteNodeLock.acquire(for: storage.database)
            defer { withExtendedLifetime(lock) {} }
            let version = try await Database.withDatabase(url: storage.database) { try await $0.schemaVersion() }
            print("schema version \(version)")
        } catch let error as StorageError {
            FileHandle.standardError.write(Data("gamecenter: cannot migrate: \(error)\n".utf8))
            throw ExitCode(error.isInUse ? 75 : 1)
        }
    }
}
