import ArgumentParser
import Foundation
import GameCenterProtocol
import GameCenterServer
import GameCenterStorage

/// `gamecenter import`: reads a server's or a game's archive into a database (stop the server on it first; on
/// PostgreSQL, restart its nodes after), skipping every record of a deleted account. With `--nakama`, the archive is
/// first made from a Nakama server's database (see docs/EXPORT.md, "Importing from Nakama").
struct ImportCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import", abstract: "Import an archive made by `gamecenter export`, or a Nakama server's data, into a database.",
        discussion: """
            Records whose key already exists are left as they are, so an interrupted import can be run again. Accounts \
            deleted on this server or in the archive never come back. Run it with the server stopped.

            With --nakama postgres://… --game BUNDLE_ID, a Nakama server's users, friends, leaderboard records and \
            storage objects are converted into an archive (kept with --keep-archive) and imported into that game; the \
            leaderboards' entries for the game's manifest are printed. Running it again imports nothing twice.
            """)

    @OptionGroup var storage: DatabaseOption

    @Option(help: "A Nakama server's database to import from (postgres://USER:PASS@HOST:PORT/DB), instead of an archive.")
    var nakama: String?

    @Option(help: "With --nakama: the game (bundle id) whose boards and saves Nakama's records become.")
    var game: String?

    @Option(help: "With --nakama: the environment of the imported accounts (sandbox or live).")
    var environment: GameCenterProtocol.Environment = .live

    @Option(help: "With --nakama: keep the converted archive in this new or empty folder.")
    var keepArchive: String?

    @Argument(help: "An archive folder, or a file ending in .tar.zst.")
    var source: String?

    func validate() throws {
        if nakama == nil {
            guard source != nil else { throw ValidationError("give an archive to import, or --nakama URL --game BUNDLE_ID") }
            if game != nil || keepArchive != nil { throw ValidationError("--game and --keep-archive go with --nakama") }
        } else {
            guard source == nil else { throw ValidationError("give an archive or --nakama, not both") }
            guard game != nil else { throw ValidationError("--nakama needs --game BUNDLE_ID: the game Nakama's records become") }
        }
    }

    func run() async throws {
        do {
            if let nakama, let game {
                try await importNakama(from: nakama, game: game)
            } else if let source {
                try await importArchive(source)
            }
        } catch let error as StorageError {
            FileHandle.standardError.write(Data("gamecenter: cannot import: \(error)\n".utf8))
            throw ExitCode(error.isInUse ? 75 : 1)
        }
    }

    private func importArchive(_ source: String) async throws {
        let packed = source.hasSuffix(".tar.zst")
        let folder = packed ? try ArchivePacking.temporaryFolder() : URL(fileURLWithPath: source)
        defer { if packed { try? FileManager.default.removeItem(at: folder) } }
        if packed { try ArchivePacking.unpack(URL(fileURLWithPath: source), into: folder) }
        let lock = try SQLiteNodeLock.acquire(for: storage.database)
        defer { withExtendedLifetime(lock) {} }
        let started = ContinuousClock.now
        let summary = try await Database.withDatabase(url: storage.database) { try await $0.importArchive(from: folder) }
        printSummary(summary)
        print("imported \(source) in \(ContinuousClock.now - started)")
    }

    private func importNakama(from url: String, game: String) async throws {
        let folder = try keepArchive.map { URL(fileURLWithPath: $0) } ?? ArchivePacking.temporaryFolder()
        defer { if keepArchive == nil { try? FileManager.default.removeItem(at: folder) } }
        let lock = try SQLiteNodeLock.acquire(for: storage.database)
        defer { withExtendedLifetime(lock) {} }
        let started = ContinuousClock.now
        let configuration = NakamaConverter.Configuration(
            bundleID: game, environment: environment.rawValue, chunkBytes: SavedGameSettings.chunkBytes)
        let (conversion, summary) = try await Database.withDatabase(url: storage.database) { target in
            let builder = try ArchiveBuilder(directory: folder)
            let conversion = try await NakamaConverter.convert(from: url, into: builder, configuration: configuration, target: target)
            try builder.finish()
            return (conversion, try await target.importArchive(from: folder))
        }
        print("converted from Nakama:")
        for (file, records) in conversion.written { print("  \(file): \(records) records") }
        if !conversion.notes.isEmpty {
            print("not carried, or carried with a change:")
            for (what, count) in conversion.notes { print("  \(what): \(count)") }
        }
        printSummary(summary)
        if let keepArchive { print("the converted archive is in \(keepArchive)") }
        print("imported Nakama's data into \(game) (\(environment.rawValue)) in \(ContinuousClock.now - started)")
        print("\nAdd these boards to \(game)'s manifest (see docs/MANIFEST.md):\n")
        print(NakamaManifestSnippet.yaml(conversion.leaderboards), terminator: "")
    }

    private func printSummary(_ summary: ArchiveImportSummary) {
        for file in summary.files {
            print("\(file.name): \(file.records) records" + (file.skippedDeleted > 0 ? ", \(file.skippedDeleted) of deleted accounts skipped" : ""))
        }
    }
}
