import Foundation
import PostgresNIO
import SQLiteNIO
import Synchronization

extension Database {
    /// Writes an archive of `scope` into `directory` (created if missing; it must hold no archive already): one JSON
    /// Lines file per kind of record and `manifest.json`. Everything is read in one snapshot (a read transaction), so
    /// the archive is consistent while the server keeps running; rows stream from the database to the files, so
    /// memory stays flat in the data's size.
    public func exportArchive(scope: ArchiveScope, to directory: URL, now: Date = Date()) async throws -> ArchiveManifest {
        try await exportArchive(scope: scope, to: directory, now: now, splittingAbove: Self.secondLaneRows)
    }

    /// On PostgreSQL, a kind with more records than this (ordered by one integer key) is read by two connections
    /// sharing the snapshot, as `pg_dump --jobs` reads tables: the second reads the upper part of the keys into a file
    /// of its own while the first reads everything else, then the parts are joined.
    static let secondLaneRows = 100_000

    /// ``exportArchive(scope:to:now:)`` with the size from which a kind is read by two connections (tests make it small).
    func exportArchive(scope: ArchiveScope, to directory: URL, now: Date, splittingAbove splitRows: Int) async throws -> ArchiveManifest {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        guard !FileManager.default.fileExists(atPath: directory.appendingPathComponent(ArchiveManifest.fileName).path) else {
            throw StorageError.invalidArchive("\(directory.path) already holds an archive; export into an empty folder")
        }
        let schemaVersion = try await schemaVersion()
        let files = try await read { session in
            try await session.inSnapshot {
                let split = try await session.secondLane(for: scope, splittingAbove: splitRows)
                // The second connection starts at once, on the same snapshot, with the upper part of the largest kind.
                let part = directory.appendingPathComponent(".second-part.jsonl")
                let second = split.map { split in
                    Task {
                        try await self.read { other in
                            try await other.inSnapshot(importing: split.snapshot) {
                                let writer = try ArchiveFileWriter(url: part, columns: split.kind.columns)
                                try await other.writeArchiveRows(
                                    of: split.kind, filter: split.condition(scope, upper: true), scope: scope.value, into: writer)
                                return try writer.finish(name: part.lastPathComponent).records
                            }
                        }
                    }
                }
                var files: [ArchiveFileEntry] = []
                do {
                    for kind in ArchiveCatalog.kinds {
                        guard let filter = scope.filter(of: kind) else { continue }
                        let writer = try ArchiveFileWriter(url: directory.appendingPathComponent(kind.file), columns: kind.columns)
                        if let split, let second, split.kind.file == kind.file {
                            try await session.writeArchiveRows(of: kind, filter: split.condition(scope, upper: false), scope: scope.value, into: writer)
                            try writer.append(contentsOf: part, records: try await second.value)
                            try FileManager.default.removeItem(at: part)
                        } else {
                            try await session.writeArchiveRows(of: kind, filter: filter, scope: scope.value, into: writer)
                        }
                        files.append(try writer.finish(name: kind.file))
                    }
                } catch {
                    second?.cancel()
                    _ = try? await second?.value
                    try? FileManager.default.removeItem(at: part)
                    throw error
                }
                return files
            }
        }
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        let manifest = ArchiveManifest(
            format: ArchiveManifest.formatName, formatVersion: ArchiveManifest.currentVersion, scope: scope.name,
            bundleID: { if case .game(let id) = scope { id } else { nil } }(),
            playerID: { if case .player(let id) = scope { id } else { nil } }(),
            schemaVersion: schemaVersion, exportedAt: formatter.string(from: now), files: files)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        try encoder.encode(manifest).write(to: directory.appendingPathComponent(ArchiveManifest.fileName))
        return manifest
    }
}

/// The part of an export a second PostgreSQL connection reads: the records of `kind` from the key `from` up, in the
/// snapshot `snapshot` (exported by the first connection's transaction).
struct ExportSecondLane: Sendable {
    let kind: ArchiveKind
    let key: String
    let from: Int64
    let snapshot: String

    /// The kind's filter in `scope`, narrowed to the keys below `from` or from it up.
    func condition(_ scope: ArchiveScope, upper: Bool) -> String {
        let part = "\(key) \(upper ? ">=" : "<") \(from)"
        guard let filter = scope.filter(of: kind), !filter.isEmpty else { return part }
        return "(\(filter)) AND \(part)"
    }
}

extension StorageSession {
    /// PostgreSQL: how to share this snapshot's export with a second connection — the kind with one integer key that
    /// has the most records in `scope`, when it has more than `splitRows`, split so that each connection reads about
    /// half of every record (the other kinds' sizes are the planner's estimates). Nil: one connection reads everything.
    func secondLane(for scope: ArchiveScope, splittingAbove splitRows: Int) async throws -> ExportSecondLane? {
        guard engine == .postgres, let connection = postgresConnection else { return nil }
        func first(_ sql: String, in kind: ArchiveKind, _ filter: String) async throws -> Int64? {
            var bindings = PostgresBindings()
            if filter.contains(":scope") { bindings.append(scope.value ?? "") }
            let condition = filter.isEmpty ? "" : " WHERE \(filter.replacingOccurrences(of: ":scope", with: "$1"))"
            countDirectStatement()
            let query = PostgresQuery(unsafeSQL: sql.replacingOccurrences(of: "{from}", with: "\(kind.table)\(condition)"), binds: bindings)
            for try await row in try await connection.query(query, logger: connection.logger) { return try row.decode(Int64.self) }
            return nil
        }
        var largest: (kind: ArchiveKind, filter: String, rows: Int64)?
        for kind in ArchiveCatalog.kinds where kind.order.count == 1 && kind.columns.first(where: { $0.name == kind.order[0] })?.type == .integer {
            guard let filter = scope.filter(of: kind), let rows = try await first("SELECT count(*) FROM {from}", in: kind, filter) else { continue }
            if rows > largest?.rows ?? Int64(splitRows) { largest = (kind, filter, rows) }
        }
        guard let (kind, filter, rows) = largest else { return nil }
        let estimates = Dictionary(
            try await sql.raw("SELECT relname AS name, GREATEST(reltuples, 0)::BIGINT AS rows FROM pg_class WHERE relkind = 'r'").all().map {
                (try $0.decode(column: "name", as: String.self), try $0.decode(column: "rows", as: Int64.self))
            }, uniquingKeysWith: max)
        let others = ArchiveCatalog.kinds.filter { $0.file != kind.file && scope.filter(of: $0) != nil }.reduce(Int64(0)) {
            $0 + estimates[$1.table, default: 0]
        }
        let upper = min(rows - 1, max(1, (rows + others) / 2))
        let key = kind.order[0]
        guard let from = try await first("SELECT \(key) FROM {from} ORDER BY \(key) OFFSET \(rows - upper) LIMIT 1", in: kind, filter),
            let snapshot = try await sql.raw("SELECT pg_export_snapshot() AS id").first()?.decode(column: "id", as: String.self)
        else { return nil }
        return ExportSecondLane(kind: kind, key: key, from: from, snapshot: snapshot)
    }

    /// Runs `body` in a read-only transaction: every statement in it sees the database as it was at its first read —
    /// or, on PostgreSQL, as `snapshot` shows it, exported by another transaction still open (`pg_export_snapshot`).
    func inSnapshot<T: Sendable>(importing snapshot: String? = nil, _ body: () async throws -> T) async throws -> T {
        if let snapshot, !snapshot.allSatisfy({ $0.isHexDigit || $0 == "-" }) {
            throw StorageError.unavailable("a snapshot id must be hex digits and dashes")
        }
        try await sql.raw(engine == .postgres ? "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY" : "BEGIN").run()
        do {
            if let snapshot { try await sql.raw("SET TRANSACTION SNAPSHOT '\(unsafeRaw: snapshot)'").run() }
            let result = try await body()
            try await sql.raw("COMMIT").run()
            return result
        } catch {
            try? await sql.raw("ROLLBACK").run()
            throw error
        }
    }

    /// Writes each row of `kind` that `filter` chooses (`:scope` bound to `scope`) into `writer`, in the kind's order.
    /// Text is ordered by its bytes on both engines, so that both write the same file. SQLite's rows become values;
    /// PostgreSQL's cells are written as JSON straight from their binary bytes (``writeJSON(of:as:into:)``).
    func writeArchiveRows(of kind: ArchiveKind, filter: String, scope: String?, into writer: ArchiveFileWriter) async throws {
        let condition = filter.isEmpty ? "" : " WHERE \(filter)"
        if let connection = sqliteConnection {
            let uses = condition.components(separatedBy: ":scope").count - 1
            let query =
                "SELECT \(kind.columns.map(\.name).joined(separator: ", ")) FROM \(kind.table)\(condition.replacingOccurrences(of: ":scope", with: "?")) ORDER BY \(kind.order.joined(separator: ", "))"
            let binds = Array(repeating: SQLiteData.text(scope ?? ""), count: uses)
            countDirectStatement()
            let types = kind.columns.map(\.type)
            let failure = Mutex<(any Error)?>(nil)
            try await connection.query(query, binds) { row in
                guard failure.withLock({ $0 == nil }) else { return }
                do {
                    try writer.append(
                        zip(row.columns, types).map { column, type in
                            switch column.data {
                            // A REAL column keeps a value without a fraction as given: the catalog's type decides.
                            case .integer(let value): type == .real ? .real(Double(value)) : .integer(Int64(value))
                            case .float(let value): .real(value)
                            case .text(let value): .text(value)
                            case .blob(let buffer): .bytes(Array(buffer.readableBytesView))
                            case .null: .null
                            }
                        })
                } catch {
                    failure.withLock { $0 = error }
                }
            }
            if let error = failure.withLock({ $0 }) { throw error }
            return
        }
        guard let connection = postgresConnection else { throw StorageError.unavailable("no connection to export from") }
        let textColumns = Set(kind.columns.filter { $0.type == .text }.map(\.name))
        let order = kind.order.map { textColumns.contains($0) ? "\($0) COLLATE \"C\"" : $0 }.joined(separator: ", ")
        var bindings = PostgresBindings()
        if condition.contains(":scope") { bindings.append(scope ?? "") }
        let query = PostgresQuery(
            unsafeSQL:
                "SELECT \(kind.columns.map(\.name).joined(separator: ", ")) FROM \(kind.table)\(condition.replacingOccurrences(of: ":scope", with: "$1")) ORDER BY \(order)",
            binds: bindings)
        countDirectStatement()
        let rows = try await connection.query(query, logger: connection.logger)
        let types = kind.columns.map(\.type)
        for try await row in rows {
            var cells = row.makeIterator()
            try writer.appendRow { column, line in
                guard let cell = cells.next() else { throw StorageError.unavailable("PostgreSQL answered a row of \(kind.file) without every column") }
                try Self.writeJSON(of: cell, as: types[column], into: &line)
            }
        }
    }

    /// One PostgreSQL cell (binary format) as the writer writes its value, straight from its bytes: text is already
    /// UTF-8, numbers are big-endian. Decoding each cell into a Swift value first took three times as long.
    private static func writeJSON(of cell: PostgresCell, as type: ArchiveColumnType, into line: inout [UInt8]) throws {
        guard var bytes = cell.bytes else { return ArchiveFileWriter.encode(.null, into: &line) }
        switch (type, cell.dataType) {
        case (.text, .text), (.text, .varchar), (.text, .name):
            bytes.withUnsafeReadableBytes { ArchiveFileWriter.encode(utf8: $0, into: &line) }
        case (.integer, .int8): ArchiveFileWriter.encode(.integer(bytes.readInteger(as: Int64.self)!), into: &line)
        case (.integer, .int4): ArchiveFileWriter.encode(.integer(Int64(bytes.readInteger(as: Int32.self)!)), into: &line)
        case (.integer, .int2): ArchiveFileWriter.encode(.integer(Int64(bytes.readInteger(as: Int16.self)!)), into: &line)
        case (.real, .float8): ArchiveFileWriter.encode(.real(Double(bitPattern: bytes.readInteger(as: UInt64.self)!)), into: &line)
        case (.bytes, .bytea): ArchiveFileWriter.encode(.bytes(Array(bytes.readableBytesView)), into: &line)
        // Any other column type (none today) through PostgresNIO's decoding.
        case (.text, _): ArchiveFileWriter.encode(.text(try cell.decode(String.self)), into: &line)
        case (.integer, _): ArchiveFileWriter.encode(.integer(try cell.decode(Int64.self)), into: &line)
        case (.real, _): ArchiveFileWriter.encode(.real(try cell.decode(Double.self)), into: &line)
        case (.bytes, _): ArchiveFileWriter.encode(.bytes(Array(try cell.decode(ByteBuffer.self).readableBytesView)), into: &line)
        }
    }
}
