import Foundation
import GameCenterStorage
import Testing

/// An archive written by ``ArchiveBuilder`` (as an importer writes one) is imported as an exported one is, and
/// exported again as the same bytes; what is not a kind, column or type of the catalog is refused.
@Suite struct ArchiveBuilderTests {
    static func folder() -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("archive-builder-\(UUID().uuidString)")
    }

    @Test(arguments: TestDatabases.all)
    func builtArchiveImportsAndExportsAsTheSameBytes(engine: String) async throws {
        let built = Self.folder()
        defer { try? FileManager.default.removeItem(at: built) }
        let player = "G:" + TestDatabases.unique("b").replacingOccurrences(of: "-", with: "").prefix(20)
        let builder = try ArchiveBuilder(directory: built)
        try builder.append(
            [
                "player_id": .text(player), "environment": .text("sandbox"), "account_name": .text(TestDatabases.unique("acc")),
                "password_hash": .text("!none"), "alias": .text("Built \"one\"\n"), "underage": .integer(0), "event_seq": .integer(0),
                "created_at": .integer(1_700_000_000_000), "updated_at": .integer(1_700_000_000_001),
            ], to: "accounts.jsonl")
        let bundle = TestDatabases.unique("com.example.built")
        try builder.append(
            ["bundle_id": .text(bundle), "environment": .text("sandbox"), "name": .text("s"), "player_id": .text(player), "revision": .integer(1)],
            to: "saved_games.jsonl")
        let manifest = try builder.finish()
        #expect(manifest.scope == "server" && manifest.files.map(\.name) == ["accounts.jsonl", "saved_games.jsonl"])
        #expect(manifest.files.map(\.records) == [1, 1])

        try await TestDatabases.with(engine) { database in
            let summary = try await database.importArchive(from: built)
            #expect(summary.files.map(\.records) == [1, 1])
            let exported = Self.folder()
            defer { try? FileManager.default.removeItem(at: exported) }
            _ = try await database.exportArchive(scope: .game(bundleID: bundle), to: exported)
            for name in ["accounts.jsonl", "saved_games.jsonl"] {
                let again = try String(contentsOf: exported.appendingPathComponent(name), encoding: .utf8)
                #expect(again == (try String(contentsOf: built.appendingPathComponent(name), encoding: .utf8)), "\(name)")
            }
        }
    }

    @Test func whatIsNotInTheCatalogIsRefused() throws {
        let folder = Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let builder = try ArchiveBuilder(directory: folder)
        #expect(throws: StorageError.self) { try builder.append([:], to: "sessions.jsonl") }
        #expect(throws: StorageError.self) { try builder.append(["secret": .text("x")], to: "accounts.jsonl") }
        #expect(throws: StorageError.self) { try builder.append(["created_at": .text("yesterday")], to: "accounts.jsonl") }
        try builder.finish()
        #expect(throws: StorageError.self) { try ArchiveBuilder(directory: folder) }
    }
}
