import Foundation
import NIOCore
import PostgresNIO
import SQLKit
import SQLiteNIO

/// What an import did, per file.
public struct ArchiveImportSummary: Sendable, Equatable {
    /// Per file, in import order: the records read and those skipped because their player's account was deleted.
    public var files: [(name: String, records: Int, skippedDeleted: Int)]

    public static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.files.elementsEqual(rhs.files) { $0.name == $1.name && $0.records == $1.records && $0.skippedDeleted == $1.skippedDeleted }
    }
}

extension Database {
    /// Imports the archive in `directory` (a server's or a game's; a player's archive is for reading): checks the
    /// manifest and every file's record count and SHA-256 first, then writes the records kind by kind, a batch per
    /// transaction (on PostgreSQL into a new server, one with no account yet, each table in one, as a restore loads it:
    /// ``StorageSession/importIntoEmptyTable(of:read:)``). A record whose key already exists is left as it is, so an
    /// interrupted import can be run again.
    /// No record of a deleted account is written — deleted in the archive or on this server (tombstones outlive
    /// backups) — and an account the archive says was deleted is deleted here too. Ids are kept as in the archive.
    public func importArchive(from directory: URL) async throws -> ArchiveImportSummary {
        let manifest = try Self.readManifest(in: directory)
        let kinds = Dictionary(uniqueKeysWithValues: ArchiveCatalog.kinds.map { ($0.file, $0) })
        for file in manifest.files {
            guard kinds[file.name] != nil else {
                throw StorageError.invalidArchive("\(file.name) is not a kind of record this server knows (format version \(manifest.formatVersion))")
            }
            try Self.verify(file, in: directory)
        }
        var deleted = try await read { try await $0.deletedPlayerIDs() }
        var deletedInArchive: [String] = []
        if manifest.files.contains(where: { $0.name == "deleted_accounts.jsonl" }) {
            try Self.forEachRecord(in: directory, kind: kinds["deleted_accounts.jsonl"]!) { values, _ in
                if case .text(let id) = values[0] { deletedInArchive.append(id) }
            }
        }
        deleted.formUnion(deletedInArchive)
        var summary = ArchiveImportSummary(files: [])
        let listed = Set(manifest.files.map(\.name))
        let skipping = deleted
        // A new server (no account yet): nothing else runs on it, so each table can be locked and loaded as a restore
        // loads it. On a server in use, locking its tables (and, adding foreign keys back, `players`) would stall it.
        let fresh = engine == .postgres ? try await read { try await $0.isEmpty("players") } : false
        for kind in ArchiveCatalog.kinds where listed.contains(kind.file) {
            let counts: (records: Int, skipped: Int)
            if fresh, try await read({ try await $0.isEmpty(kind.table) }) {
                // No limit on the connection's hold: the whole kind is one transaction (the watchdog still gives up on a
                // silent database).
                counts = try await write(holdingAtMost: nil) { session in
                    try await session.importIntoEmptyTable(of: kind) { write in
                        try await Self.forEachBatch(in: directory, kind: kind, skipping: skipping, write)
                    }
                }
            } else {
                counts = try await Self.forEachBatch(in: directory, kind: kind, skipping: skipping) { batch in
                    try await self.insert(batch, into: kind)
                }
            }
            summary.files.append((kind.file, counts.records, counts.skipped))
        }
        // An account the archive says was deleted goes from this server too (it was restored from an older backup).
        for playerID in deletedInArchive {
            let now = Int64((Date().timeIntervalSince1970 * 1000).rounded())
            _ = try await write { try await $0.deleteAccount(playerID: playerID, now: now) }
        }
        if engine == .postgres {
            try await write { session in
                for kind in ArchiveCatalog.kinds where listed.contains(kind.file) {
                    guard let column = kind.sequenceColumn else { continue }
                    try await session.sql.raw(
                        """
                        SELECT setval(pg_get_serial_sequence('\(unsafeRaw: kind.table)', '\(unsafeRaw: column)'), MAX(\(unsafeRaw: column)))
                        FROM \(unsafeRaw: kind.table) HAVING MAX(\(unsafeRaw: column)) IS NOT NULL
                        """
                    ).run()
                }
            }
        }
        return summary
    }

    /// Whether `text` names one of `players`: player ids are `G:` and twenty URL-safe base64 characters.
    static func mentions(_ text: String, anyOf players: Set<String>) -> Bool {
        guard !players.isEmpty else { return false }
        let utf8 = Array(text.utf8)
        var index = 0
        while index + 22 <= utf8.count {
            if utf8[index] == UInt8(ascii: "G") && utf8[index + 1] == UInt8(ascii: ":"),
                players.contains(String(decoding: utf8[index..<index + 22], as: UTF8.self))
            {
                return true
            }
            index += 1
        }
        return false
    }

    /// Reads and checks `manifest.json`.
    public static func readManifest(in directory: URL) throws -> ArchiveManifest {
        let url = directory.appendingPathComponent(ArchiveManifest.fileName)
        guard let data = FileManager.default.contents(atPath: url.path) else {
            throw StorageError.invalidArchive("\(directory.path) has no \(ArchiveManifest.fileName): it is not an archive")
        }
        let manifest: ArchiveManifest
        do {
            manifest = try JSONDecoder().decode(ArchiveManifest.self, from: data)
        } catch {
            throw StorageError.invalidArchive("\(ArchiveManifest.fileName) is not a manifest: \(error)")
        }
        guard manifest.format == ArchiveManifest.formatName else {
            throw StorageError.invalidArchive("format '\(manifest.format.prefix(60))' is not \(ArchiveManifest.formatName)")
        }
        guard (1...ArchiveManifest.currentVersion).contains(manifest.formatVersion) else {
            throw StorageError.invalidArchive(
                "format version \(manifest.formatVersion) is newer than this server reads (up to \(ArchiveManifest.currentVersion)): upgrade the server")
        }
        guard manifest.scope == "server" || manifest.scope == "game" else {
            throw StorageError.invalidArchive("a \(manifest.scope.prefix(20)) archive is a copy to read; only server and game archives are imported")
        }
        return manifest
    }

    /// Reads `file` whole and compares its record count and SHA-256 with the manifest's.
    private static func verify(_ file: ArchiveFileEntry, in directory: URL) throws {
        let url = directory.appendingPathComponent(file.name)
        guard FileManager.default.fileExists(atPath: url.path) else { throw StorageError.invalidArchive("\(file.name) is missing") }
        var reader = try ArchiveLineReader(url: url)
        while try reader.nextLine() != nil {}
        let (lines, digest) = (reader.lineNumber, try reader.finish())
        guard digest == file.sha256 else { throw StorageError.invalidArchive("\(file.name) is damaged: its SHA-256 is not the manifest's") }
        guard lines == file.records else {
            throw StorageError.invalidArchive("\(file.name) has \(lines) records; the manifest says \(file.records)")
        }
    }

    private static func forEachRecord(in directory: URL, kind: ArchiveKind, _ body: ([ArchiveValue], Int) throws -> Void) throws {
        var reader = try ArchiveLineReader(url: directory.appendingPathComponent(kind.file))
        while let line = try reader.nextLine() {
            try body(try Self.decode(line, kind: kind, lineNumber: reader.lineNumber), line.count)
        }
        _ = try reader.finish()
    }

    /// Reads `kind`'s file in batches of records and hands each to `write`, reading the next batch while one is written
    /// (the database and the parser each get a core). Records of a player in `deleted` are skipped. Answers the
    /// records read and those skipped.
    static func forEachBatch(
        in directory: URL, kind: ArchiveKind, skipping deleted: Set<String>, _ write: @escaping @Sendable ([[ArchiveValue]]) async throws -> Void
    ) async throws -> (records: Int, skipped: Int) {
        let playerIndexes = kind.playerColumns.compactMap { name in kind.columns.firstIndex { $0.name == name } }
        let mentionIndex = kind.mentionColumn.flatMap { name in kind.columns.firstIndex { $0.name == name } }
        var reader = try ArchiveLineReader(url: directory.appendingPathComponent(kind.file))
        var batch: [[ArchiveValue]] = []
        var batchBytes = 0
        var (records, skipped) = (0, 0)
        var writing: Task<Void, any Error>?
        do {
            while let line = try reader.nextLine() {
                let values = try Self.decode(line, kind: kind, lineNumber: reader.lineNumber)
                records += 1
                if playerIndexes.contains(where: { if case .text(let id) = values[$0] { deleted.contains(id) } else { false } })
                    || mentionIndex.map({ if case .text(let text) = values[$0] { Self.mentions(text, anyOf: deleted) } else { false } }) == true
                {
                    skipped += 1
                    continue
                }
                batch.append(values)
                batchBytes += line.count
                if batch.count >= Self.rowsPerTransaction || batchBytes >= 16 << 20 {
                    try await writing?.value
                    writing = Task { [batch] in try await write(batch) }
                    batch = []
                    batchBytes = 0
                }
            }
            try await writing?.value
        } catch {
            _ = try? await writing?.value
            throw error
        }
        _ = try reader.finish()
        if !batch.isEmpty { try await write(batch) }
        return (records, skipped)
    }

    /// One line as a value per column of `kind`, each checked against the column's type.
    static func decode(_ line: ArraySlice<UInt8>, kind: ArchiveKind, lineNumber: Int) throws -> [ArchiveValue] {
        let place = "\(kind.file) line \(lineNumber)"
        let cells: [JSONCell]
        if let ordered = ArchiveLineParser.parse(line, inOrder: kind.lineKeys) {
            cells = ordered
        } else {
            guard let object = ArchiveLineParser.parse(line) else {
                throw StorageError.invalidArchive("\(place) is not a JSON object of strings, numbers and nulls")
            }
            guard object.count == kind.columns.count else {
                let unknown = Set(object.keys).subtracting(kind.columns.map(\.name)).sorted()
                let missing = Set(kind.columns.map(\.name)).subtracting(object.keys).sorted()
                throw StorageError.invalidArchive(
                    "\(place): " + (unknown.isEmpty ? "missing \(missing.joined(separator: ", "))" : "unknown field \(unknown[0].prefix(60))"))
            }
            cells = try kind.columns.map { column in
                guard let cell = object[column.name] else { throw StorageError.invalidArchive("\(place): missing \(column.name)") }
                return cell
            }
        }
        return try zip(kind.columns, cells).map { column, cell in
            switch (column.type, cell) {
            case (_, .null): return .null
            case (.text, .text(let text)): return .text(text)
            case (.integer, .integer(let value)): return .integer(value)
            case (.real, .integer(let value)): return .real(Double(value))
            case (.real, .real(let value)): return .real(value)
            case (.bytes, .text(let text)):
                guard let data = Data(base64Encoded: text) else { throw StorageError.invalidArchive("\(place): \(column.name) is not base64") }
                return .bytes(Array(data))
            default:
                let expected = ["text": "a string", "integer": "an integer", "real": "a number", "bytes": "a base64 string"][column.type.rawValue]!
                throw StorageError.invalidArchive("\(place): \(column.name) must be \(expected) or null")
            }
        }
    }

    /// Records written in one transaction (fewer when they are large): a commit per few records would cost more than
    /// the records (SQLite syncs each one).
    static let rowsPerTransaction = 20_000

    /// Writes `rows` in one transaction; a row whose key exists is skipped.
    private func insert(_ rows: [[ArchiveValue]], into kind: ArchiveKind) async throws {
        do {
            try await write { try await $0.insertArchiveRows(rows, into: kind) }
        } catch let error as SQLiteError where error.reason == .constraintForeignKeyFailed {
            throw Self.missingReference(in: kind, detail: nil)
        } catch let error as PSQLError where error.serverInfo?[.sqlState] == "23503" {
            throw Self.missingReference(in: kind, detail: error.serverInfo?[.detail])
        }
    }

    /// A record that refers to another (its player, its match …) that neither the archive nor this server holds.
    static func missingReference(in kind: ArchiveKind, detail: String?) -> StorageError {
        .invalidArchive(
            "\(kind.file) has a record referring to one that neither the archive nor this server holds" + (detail.map { ": \($0)" } ?? ""))
    }
}

extension StorageSession {
    /// Inserts `rows` of `kind` (a row whose key exists is skipped), bound straight to the engine's values: on SQLite
    /// many rows to a statement; on PostgreSQL streamed with `COPY` into a temporary table, then moved in one statement.
    func insertArchiveRows(_ rows: [[ArchiveValue]], into kind: ArchiveKind) async throws {
        if let connection = postgresConnection { return try await copyArchiveRows(rows, into: kind, on: connection) }
        guard let connection = sqliteConnection else { throw StorageError.unavailable("no connection to import with") }
        let columns = kind.columns.map(\.name).joined(separator: ", ")
        // SQLite takes 32,766 parameters per statement; stay well under.
        let perStatement = max(1, min(500, 30_000 / kind.columns.count))
        let placeholders = "(" + Array(repeating: "?", count: kind.columns.count).joined(separator: ", ") + ")"
        var start = 0
        while start < rows.count {
            let chunk = rows[start..<min(start + perStatement, rows.count)]
            start += perStatement
            countDirectStatement()
            let query =
                "INSERT INTO \(kind.table) (\(columns)) VALUES " + Array(repeating: placeholders, count: chunk.count).joined(separator: ", ")
                + " ON CONFLICT DO NOTHING"
            var binds: [SQLiteData] = []
            binds.reserveCapacity(chunk.count * kind.columns.count)
            for row in chunk {
                for value in row {
                    switch value {
                    case .null: binds.append(.null)
                    case .integer(let number): binds.append(.integer(SQLiteInt64(number)))
                    case .real(let number): binds.append(.float(number))
                    case .text(let text): binds.append(.text(text))
                    case .bytes(let bytes): binds.append(.blob(ByteBuffer(bytes: bytes)))
                    }
                }
            }
            try await connection.query(query, binds) { _ in }
        }
    }

    /// Whether `table` has no row.
    func isEmpty(_ table: String) async throws -> Bool {
        try await sql.raw("SELECT NOT EXISTS (SELECT 1 FROM \(unsafeRaw: table)) AS empty").first().map { try $0.decode(column: "empty", as: Bool.self) }
            ?? true
    }

    /// PostgreSQL, in one transaction: imports the batches `read` hands over into `kind`'s table, as a restore does
    /// when the table is empty — its indexes other than unique ones and its foreign keys dropped, the rows copied
    /// straight in, then the indexes built again (a sort each) and the foreign keys added again (one check of every
    /// row each): many times faster than keeping them up to date and checking them row by row.
    /// The table is locked meanwhile; a failure rolls it all back, indexes included. A batch holding a key twice, and
    /// a table that filled up since the caller looked, get the usual path (a key's first record kept).
    func importIntoEmptyTable(
        of kind: ArchiveKind, read: (@escaping @Sendable ([[ArchiveValue]]) async throws -> Void) async throws -> (records: Int, skipped: Int)
    ) async throws -> (records: Int, skipped: Int) {
        guard let connection = postgresConnection else { throw StorageError.unavailable("no PostgreSQL connection to import with") }
        try await sql.raw("LOCK TABLE \(unsafeRaw: kind.table) IN ACCESS EXCLUSIVE MODE").run()
        guard try await isEmpty(kind.table) else {
            return try await read { batch in
                do {
                    try await self.copyArchiveRows(batch, into: kind, on: connection)
                } catch let error as PSQLError where error.serverInfo?[.sqlState] == "23503" {
                    throw Database.missingReference(in: kind, detail: error.serverInfo?[.detail])
                }
            }
        }
        let indexes = try await sql.raw(
            """
            SELECT c.relname AS name, pg_get_indexdef(i.indexrelid) AS definition FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
            WHERE i.indrelid = \(bind: kind.table)::regclass AND NOT i.indisunique ORDER BY c.relname
            """
        ).all().map { (name: try $0.decode(column: "name", as: String.self), definition: try $0.decode(column: "definition", as: String.self)) }
        let references = try await sql.raw(
            """
            SELECT conname AS name, pg_get_constraintdef(oid) AS definition FROM pg_constraint
            WHERE conrelid = \(bind: kind.table)::regclass AND contype = 'f' ORDER BY conname
            """
        ).all().map { (name: try $0.decode(column: "name", as: String.self), definition: try $0.decode(column: "definition", as: String.self)) }
        for index in indexes { try await sql.raw("DROP INDEX \(ident: index.name)").run() }
        for reference in references { try await sql.raw("ALTER TABLE \(unsafeRaw: kind.table) DROP CONSTRAINT \(ident: reference.name)").run() }
        let counts = try await read { batch in
            try await self.sql.raw("SAVEPOINT archive_batch").run()
            do {
                try await self.copy(batch, into: kind.table, columns: kind.columns.map(\.name), on: connection)
                try await self.sql.raw("RELEASE SAVEPOINT archive_batch").run()
            } catch let error as PSQLError where error.serverInfo?[.sqlState] == "23505" {
                // A key twice (an archive edited by hand): this batch again the usual way, the first record kept.
                try await self.sql.raw("ROLLBACK TO SAVEPOINT archive_batch").run()
                try await self.copyArchiveRows(batch, into: kind, on: connection)
            }
        }
        for index in indexes { try await sql.raw("\(unsafeRaw: index.definition)").run() }
        for reference in references {
            do {
                try await sql.raw("ALTER TABLE \(unsafeRaw: kind.table) ADD CONSTRAINT \(ident: reference.name) \(unsafeRaw: reference.definition)").run()
            } catch let error as PSQLError where error.serverInfo?[.sqlState] == "23503" {
                throw Database.missingReference(in: kind, detail: error.serverInfo?[.detail])
            }
        }
        return counts
    }

    /// PostgreSQL's bulk path: `COPY` (text format) into a temporary table of the kind's columns, dropped at commit,
    /// then `INSERT … SELECT … ON CONFLICT DO NOTHING` — COPY alone cannot skip existing keys.
    private func copyArchiveRows(_ rows: [[ArchiveValue]], into kind: ArchiveKind, on connection: PostgresConnection) async throws {
        let columns = kind.columns.map(\.name)
        let list = columns.joined(separator: ", ")
        countDirectStatement()
        _ = try await connection.query(
            PostgresQuery(unsafeSQL: "CREATE TEMPORARY TABLE archive_rows ON COMMIT DROP AS SELECT \(list) FROM \(kind.table) WITH NO DATA"),
            logger: connection.logger
        ).collect()
        try await copy(rows, into: "archive_rows", columns: columns, on: connection)
        countDirectStatement()
        _ = try await connection.query(
            PostgresQuery(unsafeSQL: "INSERT INTO \(kind.table) (\(list)) SELECT \(list) FROM archive_rows ON CONFLICT DO NOTHING"),
            logger: connection.logger
        ).collect()
        countDirectStatement()
        _ = try await connection.query(PostgresQuery(unsafeSQL: "DROP TABLE archive_rows"), logger: connection.logger).collect()
    }

    /// Streams `rows` into `table` with `COPY … FROM STDIN` (text format).
    private func copy(_ rows: [[ArchiveValue]], into table: String, columns: [String], on connection: PostgresConnection) async throws {
        countDirectStatement()
        try await connection.copyFrom(table: table, columns: columns, logger: connection.logger) { writer in
            var buffer = ByteBuffer()
            for row in rows {
                for (index, value) in row.enumerated() {
                    if index > 0 { buffer.writeInteger(UInt8(ascii: "\t")) }
                    Self.writeCopyText(value, to: &buffer)
                }
                buffer.writeInteger(UInt8(ascii: "\n"))
                if buffer.readableBytes >= 1 << 20 {
                    try await writer.write(buffer)
                    buffer.clear()
                }
            }
            if buffer.readableBytes > 0 { try await writer.write(buffer) }
        }
    }

    /// One value in COPY's text format: `\N` for null, backslash escapes in text, `\\x` and hex for bytes.
    private static func writeCopyText(_ value: ArchiveValue, to buffer: inout ByteBuffer) {
        switch value {
        case .null: buffer.writeString("\\N")
        case .integer(let number): buffer.writeString(String(number))
        case .real(let number): buffer.writeString("\(number)")
        case .text(let text):
            for byte in text.utf8 {
                switch byte {
                case UInt8(ascii: "\\"): buffer.writeString("\\\\")
                case UInt8(ascii: "\t"): buffer.writeString("\\t")
                case UInt8(ascii: "\n"): buffer.writeString("\\n")
                case UInt8(ascii: "\r"): buffer.writeString("\\r")
                default: buffer.writeInteger(byte)
                }
            }
        case .bytes(let bytes):
            buffer.writeString("\\\\x")
            let digits = Array("0123456789abcdef".utf8)
            for byte in bytes {
                buffer.writeInteger(digits[Int(byte >> 4)])
                buffer.writeInteger(digits[Int(byte & 0x0F)])
            }
        }
    }
}

/// A JSON value of an archive's line.
enum JSONCell: Equatable {
    case null
    case integer(Int64)
    case real(Double)
    case text(String)
}
