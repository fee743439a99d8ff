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
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        guard !FileManager.default.fileExists(atPath: directory.appendingPathComponent(ArchiveManifest.fileName).path) else {
            throw StorageError.invalidArchive("\(directory.path) already holds an archive; export into an empty folder")
        }
        let schemaVersion = try await schemaVersion()
        let files = try await read { session in
            try await session.inSnapshot {
                var files: [ArchiveFileEntry] = []
                for kind in ArchiveCatalog.kinds {
                    guard let filter = scope.filter(of: kind) else { continue }
                    let writer = try ArchiveFileWriter(url: directory.appendingPathComponent(kind.file), columns: kind.columns)
                    try await session.forEachArchiveRow(of: kind, filter: filter, scope: scope.value) { try writer.append($0) }
                    files.append(try writer.finish(name: kind.file))
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

extension StorageSession {
    /// Runs `body` in a read-only transaction: every statement in it sees the database as it was at its first read.
    func inSnapshot<T: Sendable>(_ body: () async throws -> T) async throws -> T {
        try await sql.raw(engine == .postgres ? "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY" : "BEGIN").run()
        do {
            let result = try await body()
            try await sql.raw("COMMIT").run()
            return result
        } catch {
            try? await sql.raw("ROLLBACK").run()
            throw error
        }
    }

    /// Calls `body` with each row of `kind` that `filter` chooses (`:scope` bound to `scope`), in the kind's order.
    /// Text is ordered by its bytes on both engines, so that both write the same file.
    func forEachArchiveRow(
        of kind: ArchiveKind, filter: String, scope: String?, _ body: @escaping @Sendable ([ArchiveValue]) throws -> Void
    ) async throws {
        let textColumns = Set(kind.columns.filter { $0.type == .text }.map(\.name))
        let columns = kind.columns.map(\.name).joined(separator: ", ")
        let condition = filter.isEmpty ? "" : " WHERE \(filter)"
        if let connection = sqliteConnection {
            let uses = condition.components(separatedBy: ":scope").count - 1
            let query =
                "SELECT \(columns) FROM \(kind.table)\(condition.replacingOccurrences(of: ":scope", with: "?")) ORDER BY \(kind.order.joined(separator: ", "))"
            let binds = Array(repeating: SQLiteData.text(scope ?? ""), count: uses)
            countDirectStatement()
            let types = kind.columns.map(\.type)
            let failure = Mutex<(any Error)?>(nil)
            try await connection.query(query, binds) { row in
                guard failure.withLock({ $0 == nil }) else { return }
                do {
                    try body(
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
        let order = kind.order.map { textColumns.contains($0) ? "\($0) COLLATE \"C\"" : $0 }.joined(separator: ", ")
        var bindings = PostgresBindings()
        if condition.contains(":scope") { bindings.append(scope ?? "") }
        let query = PostgresQuery(
            unsafeSQL: "SELECT \(columns) FROM \(kind.table)\(condition.replacingOccurrences(of: ":scope", with: "$1")) ORDER BY \(order)",
            binds: bindings)
        countDirectStatement()
        let rows = try await connection.query(query, logger: connection.logger)
        for try await row in rows {
            let cells = row.makeRandomAccess()
            var values: [ArchiveValue] = []
            values.reserveCapacity(kind.columns.count)
            for (index, column) in kind.columns.enumerated() {
                let cell = cells[index]
                switch column.type {
                case .text: values.append(try cell.decode(String?.self).map(ArchiveValue.text) ?? .null)
                case .integer: values.append(try cell.decode(Int64?.self).map(ArchiveValue.integer) ?? .null)
                case .real: values.append(try cell.decode(Double?.self).map(ArchiveValue.real) ?? .null)
                case .bytes: values.append(try cell.decode(ByteBuffer?.self).map { .bytes(Array($0.readableBytesView)) } ?? .null)
                }
            }
            try body(values)
        }
    }
}
