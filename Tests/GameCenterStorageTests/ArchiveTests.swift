import Foundation
import SQLKit
import Testing

@testable import GameCenterStorage

/// The archive format's pieces: its JSON read back by Foundation's own parser, values surviving a write and a read,
/// and a catalog that keeps up with the schema (a new table or column must be archived or said not to be).
struct ArchiveTests {
    private static func folder() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("archive-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    @Test func everyStringIsWrittenAsJSONThatFoundationReadsBackTheSame() throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        var generator = SystemRandomNumberGenerator()
        let alphabet: [Character] = ["a", "\"", "\\", "/", "\n", "\r", "\t", "\u{0}", "\u{1}", "\u{1f}", "\u{7f}", "é", "ü", "\u{2028}", "🎮", "中", " "]
        var texts = ["", "plain", "{\"json\":[1,2]}", "\\u0041"]
        for _ in 0..<500 {
            texts.append(String((0..<Int.random(in: 1...40, using: &generator)).map { _ in alphabet.randomElement(using: &generator)! }))
        }
        let url = folder.appendingPathComponent("texts.jsonl")
        let writer = try ArchiveFileWriter(url: url, columns: [ArchiveColumn(name: "text", type: .text), ArchiveColumn(name: "n", type: .integer)])
        for (index, text) in texts.enumerated() { try writer.append([.text(text), .integer(Int64(index))]) }
        let entry = try writer.finish(name: "texts.jsonl")
        let data = try Data(contentsOf: url)
        #expect(entry.records == texts.count)
        let lines = data.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).dropLast()
        #expect(lines.count == texts.count, "one line per record: no raw newline inside a string")
        for (index, line) in lines.enumerated() {
            let object = try #require(try JSONSerialization.jsonObject(with: Data(line)) as? [String: Any])
            #expect(object["text"] as? String == texts[index], "line \(index + 1)")
            #expect((object["n"] as? NSNumber)?.intValue == index)
        }
    }

    @Test func valuesOfEveryTypeSurviveAWriteAndARead() throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let kind = ArchiveKind(
            "values.jsonl", [("i", .integer), ("r", .real), ("t", .text), ("b", .bytes)], order: ["i"], game: nil, player: nil)
        let rows: [[ArchiveValue]] = [
            [.integer(.max), .real(0.1), .text("x"), .bytes([0, 255, 1, 2, 3])],
            [.integer(.min), .real(1e-300), .null, .bytes([])],
            [.integer(0), .real(100), .text("ü\n"), .null],
            [.null, .real(-12.5), .text(""), .bytes(Array(repeating: 7, count: 70_000))],
        ]
        let writer = try ArchiveFileWriter(url: folder.appendingPathComponent(kind.file), columns: kind.columns)
        for row in rows { try writer.append(row) }
        let entry = try writer.finish(name: kind.file)
        var reader = try ArchiveLineReader(url: folder.appendingPathComponent(kind.file))
        var read: [[ArchiveValue]] = []
        while let line = try reader.nextLine() {
            read.append(try Database.decode(line, kind: kind, lineNumber: reader.lineNumber))
        }
        #expect(try reader.finish() == entry.sha256)
        #expect(read == rows)
    }

    @Test func aLineThatBreaksItsKindIsRefusedByFileLineAndField() throws {
        let kind = ArchiveKind("k.jsonl", [("i", .integer), ("t", .text)], order: ["i"], game: nil, player: nil)
        for (line, expected) in [
            (#"{"i":"1","t":"x"}"#, "k.jsonl line 3: i must be an integer or null"),
            (#"{"i":1}"#, "k.jsonl line 3: missing t"),
            (#"{"i":1,"t":"x","extra":2}"#, "k.jsonl line 3: unknown field extra"),
            (#"{"i":1,"t":true}"#, "k.jsonl line 3 is not a JSON object of strings, numbers and nulls"),
            ("[1,2]", "k.jsonl line 3 is not a JSON object of strings, numbers and nulls"),
        ] {
            #expect(throws: StorageError.invalidArchive(expected)) {
                try Database.decode(ArraySlice(Array(line.utf8)), kind: kind, lineNumber: 3)
            }
        }
    }

    /// The line parser against Foundation's: the same objects from lines JSONSerialization wrote, and a refusal of
    /// every line that is not a flat object of strings, numbers and nulls.
    @Test func theLineParserReadsWhatFoundationWritesAndRefusesWhatItMust() throws {
        var generator = SystemRandomNumberGenerator()
        let alphabet: [Character] = ["a", "\"", "\\", "/", "\n", "\u{0}", "\u{1f}", "é", "\u{2028}", "🎮", "中", " ", "\u{FFFF}"]
        for _ in 0..<300 {
            var object: [String: Any] = [:]
            for field in 0..<Int.random(in: 0...6, using: &generator) {
                let text = String((0..<Int.random(in: 0...12, using: &generator)).map { _ in alphabet.randomElement(using: &generator)! })
                let values: [Any] = [text, Int64.random(in: .min ... .max, using: &generator), Double.random(in: -1e6...1e6, using: &generator), NSNull()]
                object["k\(field)\(text)"] = values.randomElement(using: &generator)!
            }
            let line = try JSONSerialization.data(withJSONObject: object)
            let parsed = try #require(ArchiveLineParser.parse(ArraySlice(Array(line))), "\(String(decoding: line, as: UTF8.self))")
            #expect(parsed.count == object.count)
            for (key, value) in object {
                switch (value, parsed[key]) {
                case (let text as String, .text(let read)?): #expect(read == text)
                case (let number as Int64, .integer(let read)?): #expect(read == number)
                case (let number as Double, .real(let read)?): #expect(read == number)
                case (let number as Double, .integer(let read)?): #expect(Double(read) == number)
                case (is NSNull, .null?): break
                default: Issue.record("\(key): \(value) read as \(String(describing: parsed[key]))")
                }
            }
        }
        for line in [
            "", "{", "{}x", "[]", #"{"a":true}"#, #"{"a":{"b":1}}"#, #"{"a":[1]}"#, #"{"a":01}"#, #"{"a":1.}"#, #"{"a":"\x"}"#,
            #"{"a":"\ud800"}"#, "{\"a\":\"\u{1}\"}", #"{"a":1,"a":2}"#, #"{"a":1,}"#, #"{a:1}"#, #"{"a":nul}"#,
        ] {
            #expect(ArchiveLineParser.parse(ArraySlice(Array(line.utf8))) == nil, "\(line)")
        }
        #expect(
            ArchiveLineParser.parse(ArraySlice(Array(#"{"a":"\ud83c\udfae \u00e9\/","b":-0.5e-3,"c":null}"#.utf8)))
                == ["a": .text("🎮 é/"), "b": .real(-0.0005), "c": .null])
    }

    /// The fast path for lines as an export writes them (keys in the catalog's order, no spaces) reads the same values
    /// as the general parser, and leaves every other line to it.
    @Test func theOrderedParserReadsWhatTheGeneralOneReadsAndNothingElse() throws {
        var generator = SystemRandomNumberGenerator()
        let alphabet: [Character] = ["a", "\"", "\\", "/", "\n", "\u{1f}", "é", "🎮", " "]
        let keys = (0..<5).map { "k\($0)" }
        let lineKeys = keys.map { Array("\"\($0)\":".utf8) }
        for _ in 0..<300 {
            var object: [String: Any] = [:]
            for key in keys {
                let text = String((0..<Int.random(in: 0...12, using: &generator)).map { _ in alphabet.randomElement(using: &generator)! })
                let values: [Any] = [
                    text, Int64.random(in: .min ... .max, using: &generator), Int64.random(in: -999...999, using: &generator),
                    Double.random(in: -1e6...1e6, using: &generator), NSNull(),
                ]
                object[key] = values.randomElement(using: &generator)!
            }
            let line = ArraySlice(Array(try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])))
            let general = try #require(ArchiveLineParser.parse(line))
            #expect(ArchiveLineParser.parse(line, inOrder: lineKeys) == keys.map { general[$0]! }, "\(String(decoding: line, as: UTF8.self))")
        }
        let numbers = [
            ("-0", JSONCell.integer(0)), ("123456789012345678", .integer(123_456_789_012_345_678)), ("9223372036854775807", .integer(.max)),
            ("-9223372036854775808", .integer(.min)), ("9223372036854775808", .real(9_223_372_036_854_775_808)), ("-12", .integer(-12)),
        ]
        for (text, expected) in numbers {
            #expect(ArchiveLineParser.parse(ArraySlice(Array("{\"n\":\(text)}".utf8)), inOrder: [Array("\"n\":".utf8)]) == [expected], "\(text)")
        }
        for line in [#"{"k1":1,"k0":2}"#, #"{"k0":1, "k1":2}"#, #"{"k0":1}"#, #"{"k0":1,"k1":2,"k2":3}"#, #" {"k0":1,"k1":2}"#, #"{"k0":1,"k1":2}x"#] {
            #expect(ArchiveLineParser.parse(ArraySlice(Array(line.utf8)), inOrder: Array(lineKeys.prefix(2))) == nil, "\(line)")
        }
        let kind = ArchiveKind("k.jsonl", [("i", .integer), ("t", .text)], order: ["i"], game: nil, player: nil)
        #expect(try Database.decode(ArraySlice(Array(#"{ "t": "x", "i": 7 }"#.utf8)), kind: kind, lineNumber: 1) == [.integer(7), .text("x")])
    }

    @Test func notesThatNameADeletedPlayerAreFound() {
        let deleted: Set = ["G:AAAAAAAAAAAAAAAAAAAA"]
        #expect(Database.mentions(#"{"from":"G:AAAAAAAAAAAAAAAAAAAA","alias":"Dan"}"#, anyOf: deleted))
        #expect(!Database.mentions(#"{"from":"G:AAAAAAAAAAAAAAAAAAAB"}"#, anyOf: deleted))
        #expect(!Database.mentions("G:AAAA", anyOf: deleted))
        #expect(!Database.mentions(#"{"from":"G:AAAAAAAAAAAAAAAAAAAA"}"#, anyOf: []))
    }

    /// Tables that are deliberately not archived (docs/EXPORT.md says why).
    static let notArchived: Set = [
        "schema_migrations", "sessions", "sign_in_failures", "sign_in_address_failures", "device_sign_ins", "app_tickets", "report_keys",
        "nodes", "node_notices", "queue_owners", "cluster_settings", "webhook_endpoints", "webhook_deliveries", "webhook_cursors",
        "webhook_lease", "game_events", "identity_keys", "server_idempotency", "saved_game_uploads", "play_with_friends",
        "score_removals", "console_users", "console_sessions", "matchmaking_queue_metrics",
    ]

    /// Columns of archived tables that are the engine's own bookkeeping, numbered again on import: PostgreSQL's order
    /// of players' events for webhooks (SQLite's is the rowid; webhooks' cursors are not archived either).
    static let notArchivedColumns: [String: Set<String>] = ["events": ["event_id"]]

    /// An export from PostgreSQL writes each line from the cells' binary bytes: they must be the writer's bytes for the
    /// same values, or an archive would differ between the engines (texts with every escape, numbers at the edges).
    @Test(.enabled(if: TestDatabases.all.contains("postgres"), "needs GAMECENTER_TEST_POSTGRES_URL"))
    func postgresWritesEachLineByteForByteAsTheWriterDoes() async throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let table = "archive_line_test_\(UUID().uuidString.prefix(8).lowercased())"
        let kind = ArchiveKind(
            "values.jsonl", table: table, [("n", .integer), ("i", .integer), ("r", .real), ("t", .text), ("b", .bytes)], order: ["n"], game: nil,
            player: nil)
        var generator = SystemRandomNumberGenerator()
        let alphabet: [Character] = ["a", "\"", "\\", "/", "\n", "\r", "\t", "\u{8}", "\u{c}", "\u{1}", "\u{1f}", "\u{7f}", "é", "\u{2028}", "🎮", "中", " "]
        let texts =
            ["", "plain", "{\"json\":[1,2]}", "\\u0041"]
            + (0..<200).map { _ in
                String((0..<Int.random(in: 1...30, using: &generator)).map { _ in alphabet.randomElement(using: &generator)! })
            }
        let reals: [Double] = [
            0.1, 1e-300, 100, -12.5, 0, -0.0, 1e15, 9e15, -9e15, 123_456_789_012_345, 1e16, 0.0001, 1e-5, 25.5, 1.7976931348623157e308,
            .leastNonzeroMagnitude, .nan, .infinity, 2.0 / 3.0,
        ]
        let rows: [[ArchiveValue]] = texts.enumerated().map { index, text in
            let real = index < reals.count ? ArchiveValue.real(reals[index]) : index % 7 == 0 ? .null : .real(Double(index) / 8)
            let integer: ArchiveValue = [.integer(.max), .integer(.min), .integer(0), .null][index % 4]
            let bytes: ArchiveValue = index % 5 == 0 ? .null : .bytes((0..<(index * 97 % 300)).map { UInt8(($0 * 31 + index) % 256) })
            return [.integer(Int64(index)), integer, real, .text(text), bytes]
        }
        let expected = try ArchiveFileWriter(url: folder.appendingPathComponent("expected.jsonl"), columns: kind.columns)
        for row in rows { try expected.append(row.map { if case .real(let value) = $0, !value.isFinite { .null } else { $0 } }) }
        _ = try expected.finish(name: "expected.jsonl")

        try await TestDatabases.with("postgres") { database in
            try await database.write { storage in
                try await storage.sql.raw("CREATE TEMPORARY TABLE \(unsafeRaw: table) (n BIGINT, i BIGINT, r DOUBLE PRECISION, t TEXT, b BYTEA)").run()
                for row in rows {
                    guard case .integer(let n) = row[0], case .text(let text) = row[3] else { continue }
                    let integer: Int64? = if case .integer(let value) = row[1] { value } else { nil }
                    let real: Double? = if case .real(let value) = row[2] { value } else { nil }
                    let bytes: [UInt8]? = if case .bytes(let value) = row[4] { value } else { nil }
                    try await storage.sql.raw(
                        "INSERT INTO \(unsafeRaw: table) VALUES (\(bind: n), \(bind: integer), \(bind: real), \(bind: text), \(bind: bytes.map { Data($0) }))"
                    ).run()
                }
                let writer = try ArchiveFileWriter(url: folder.appendingPathComponent("postgres.jsonl"), columns: kind.columns)
                try await storage.writeArchiveRows(of: kind, filter: "", scope: nil, into: writer)
                _ = try writer.finish(name: "postgres.jsonl")
                try await storage.sql.raw("DROP TABLE \(unsafeRaw: table)").run()
            }
        }
        let ours = try String(contentsOf: folder.appendingPathComponent("expected.jsonl"), encoding: .utf8).split(separator: "\n")
        let theirs = try String(contentsOf: folder.appendingPathComponent("postgres.jsonl"), encoding: .utf8).split(separator: "\n")
        #expect(theirs.count == rows.count)
        for (index, (line, expectedLine)) in zip(theirs, ours).enumerated() where line != expectedLine {
            Issue.record("line \(index + 1): PostgreSQL wrote \(line), the writer \(expectedLine)")
        }
    }

    /// On PostgreSQL a large kind is read by two connections sharing one snapshot; joined, their parts are the file
    /// one connection writes, byte for byte.
    @Test(.enabled(if: TestDatabases.all.contains("postgres"), "needs GAMECENTER_TEST_POSTGRES_URL"))
    func anExportReadByTwoConnectionsIsTheSameAsByOne() async throws {
        let (one, two) = (try Self.folder(), try Self.folder())
        defer { for folder in [one, two] { try? FileManager.default.removeItem(at: folder) } }
        let bundle = TestDatabases.unique("com.example.split")
        let prefix = "G:" + bundle.suffix(12) + "-"
        try await TestDatabases.with("postgres") { database in
            try await database.write { storage in
                try await storage.sql.raw(
                    """
                    INSERT INTO players (player_id, environment, account_name, password_hash, alias, alias_skeleton, underage, event_seq, created_at, updated_at)
                    SELECT \(bind: prefix) || i, 'sandbox', \(bind: prefix) || i, '-', 'Split ' || i, 'split ' || i, 0, 0, 1, 1
                    FROM generate_series(1, 20) i
                    """
                ).run()
                try await storage.sql.raw(
                    """
                    INSERT INTO scores (bundle_id, environment, category, player_id, value, context, reported_at)
                    SELECT \(bind: bundle), 'sandbox', 'split.board', \(bind: prefix) || (1 + i % 20), i * 7, 0, 1790000000000 + i
                    FROM generate_series(1, 500) i
                    """
                ).run()
            }
            let lane = try await database.read { session in
                try await session.inSnapshot { try await session.secondLane(for: .game(bundleID: bundle), splittingAbove: 100) }
            }
            #expect(lane?.kind.file == "scores.jsonl", "the game's largest kind is split")
            _ = try await database.exportArchive(scope: .game(bundleID: bundle), to: one, now: Date(), splittingAbove: .max)
            _ = try await database.exportArchive(scope: .game(bundleID: bundle), to: two, now: Date(), splittingAbove: 100)
        }
        let scores = try String(contentsOf: one.appendingPathComponent("scores.jsonl"), encoding: .utf8)
        #expect(scores.split(separator: "\n").count == 500)
        for file in try FileManager.default.contentsOfDirectory(atPath: one.path) where file != ArchiveManifest.fileName {
            #expect(try Data(contentsOf: one.appendingPathComponent(file)) == Data(contentsOf: two.appendingPathComponent(file)), "\(file)")
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: two.path).sorted() == FileManager.default.contentsOfDirectory(atPath: one.path).sorted())
        let manifests = try [one, two].map {
            try JSONDecoder().decode(ArchiveManifest.self, from: Data(contentsOf: $0.appendingPathComponent(ArchiveManifest.fileName)))
        }
        #expect(manifests[0].files.map(\.records) == manifests[1].files.map(\.records))
        #expect(manifests[0].files.map(\.sha256) == manifests[1].files.map(\.sha256))
    }

    @Test(arguments: TestDatabases.all)
    func theCatalogArchivesEveryColumnOfEveryTableButThoseSaidNotTo(engine: String) async throws {
        try await TestDatabases.with(engine) { database in
            try await database.read { storage in
                let listTables =
                    engine == "sqlite"
                    ? "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
                    : "SELECT table_name AS name FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'"
                let tables = Set(try await storage.sql.raw("\(unsafeRaw: listTables)").all().map { try $0.decode(column: "name", as: String.self) })
                let archived = Dictionary(uniqueKeysWithValues: ArchiveCatalog.kinds.map { ($0.table, $0) })
                #expect(tables.subtracting(Self.notArchived) == Set(archived.keys), "a table is neither archived nor listed as not archived")
                for (table, kind) in archived {
                    let columns = Set(
                        try await storage.sql.raw(
                            engine == "sqlite"
                                ? "SELECT name FROM pragma_table_info(\(bind: table))"
                                : "SELECT column_name AS name FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = \(bind: table)"
                        ).all().map { try $0.decode(column: "name", as: String.self) })
                    #expect(
                        columns.subtracting(Self.notArchivedColumns[table] ?? []) == Set(kind.columns.map(\.name)),
                        "\(kind.file) does not carry every column of \(table)")
                }
            }
        }
    }
}
