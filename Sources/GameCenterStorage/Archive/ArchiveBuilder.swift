import Foundation

/// Writes a server archive from records made elsewhere (an importer converting another platform's data), so that
/// ``Database/importArchive(from:)`` loads them with every check an exported archive gets.
///
/// Records are appended by the kind's file name (`accounts.jsonl`, `scores.jsonl`, …; see ``ArchiveCatalog``) as
/// values by column name; a column left out is `null`. Each file is streamed to disk as it is appended to, so memory
/// stays flat. ``finish(now:)`` closes the files and writes `manifest.json` (scope `server`), listing the files that
/// received records in the catalog's import order. Not for use from several tasks at once.
public final class ArchiveBuilder {
    private let directory: URL
    private var writers: [String: ArchiveFileWriter] = [:]
    private let kinds: [String: ArchiveKind]

    /// Prepares to write into `directory` (created if missing); it must not hold an archive already.
    public init(directory: URL) throws {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        guard !FileManager.default.fileExists(atPath: directory.appendingPathComponent(ArchiveManifest.fileName).path) else {
            throw StorageError.invalidArchive("\(directory.path) already holds an archive; write into an empty folder")
        }
        self.directory = directory
        kinds = Dictionary(uniqueKeysWithValues: ArchiveCatalog.kinds.map { ($0.file, $0) })
    }

    /// Appends one record to `file`; `values` are by column name, each of the column's type (an integer is accepted
    /// for a `real` column). Throws for a file that is not a kind of the catalog, an unknown column or a wrong type.
    public func append(_ values: [String: ArchiveValue], to file: String) throws {
        guard let kind = kinds[file] else { throw StorageError.invalidArchive("\(file) is not a kind of record of the archive format") }
        if let unknown = values.keys.first(where: { name in !kind.columns.contains { $0.name == name } }) {
            throw StorageError.invalidArchive("\(file) has no column \(unknown)")
        }
        let row = try kind.columns.map { column -> ArchiveValue in
            let value = values[column.name] ?? .null
            switch (column.type, value) {
            case (_, .null), (.text, .text), (.integer, .integer), (.real, .real), (.bytes, .bytes): return value
            case (.real, .integer(let number)): return .real(Double(number))
            default: throw StorageError.invalidArchive("\(file): \(column.name) is a \(column.type.rawValue) column")
            }
        }
        try writer(for: kind).append(row)
    }

    /// Closes every file and writes the manifest; returns it. The builder takes no more records after.
    @discardableResult
    public func finish(now: Date = Date()) throws -> ArchiveManifest {
        var files: [ArchiveFileEntry] = []
        for kind in ArchiveCatalog.kinds {
            guard let writer = writers.removeValue(forKey: kind.file) else { continue }
            files.append(try writer.finish(name: kind.file))
        }
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        let manifest = ArchiveManifest(
            format: ArchiveManifest.formatName, formatVersion: ArchiveManifest.currentVersion, scope: ArchiveScope.server.name, bundleID: nil,
            playerID: nil, schemaVersion: Migrations.all.map(\.version).max() ?? 0, exportedAt: formatter.string(from: now), files: files)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        try encoder.encode(manifest).write(to: directory.appendingPathComponent(ArchiveManifest.fileName))
        return manifest
    }

    private func writer(for kind: ArchiveKind) throws -> ArchiveFileWriter {
        if let writer = writers[kind.file] { return writer }
        let writer = try ArchiveFileWriter(url: directory.appendingPathComponent(kind.file), columns: kind.columns)
        writers[kind.file] = writer
        return writer
    }
}
