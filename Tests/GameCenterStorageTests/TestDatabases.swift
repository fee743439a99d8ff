import Foundation
import GameCenterStorage
import Testing

/// The engines every storage test runs on: SQLite always, PostgreSQL when `GAMECENTER_TEST_POSTGRES_URL` is set
/// (the test script starts one). With `GAMECENTER_REQUIRE_POSTGRES=1`, a missing PostgreSQL fails the suite.
enum TestDatabases {
    static var all: [String] {
        var urls = ["sqlite"]
        if ProcessInfo.processInfo.environment["GAMECENTER_TEST_POSTGRES_URL"] != nil { urls.append("postgres") }
        return urls
    }

    /// Opens a fresh database of `engine`: a new SQLite file, or the shared test PostgreSQL.
    static func with<T: Sendable>(_ engine: String, _ body: @Sendable (Database) async throws -> T) async throws -> T {
        if engine == "postgres" {
            let url = try #require(ProcessInfo.processInfo.environment["GAMECENTER_TEST_POSTGRES_URL"])
            return try await Database.withDatabase(url: url, body)
        }
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("gc-storage-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        return try await Database.withDatabase(url: "sqlite:\(folder.path)/test.sqlite", body)
    }

    /// A name no other test uses.
    static func unique(_ prefix: String) -> String {
        "\(prefix)-\(UUID().uuidString.prefix(12).lowercased())"
    }
}

@Test func postgresIsAvailableWhenRequired() {
    if ProcessInfo.processInfo.environment["GAMECENTER_REQUIRE_POSTGRES"] == "1" {
        #expect(TestDatabases.all.contains("postgres"), "GAMECENTER_TEST_POSTGRES_URL must be set: the suite must also run on PostgreSQL")
    }
}
