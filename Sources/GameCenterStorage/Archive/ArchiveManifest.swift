/// What an archive holds: `manifest.json` at its top, beside one JSON Lines file per kind of record.
public struct ArchiveManifest: Codable, Sendable, Equatable {
    /// Always ``ArchiveManifest/formatName``.
    public var format: String
    /// The format's version; an import refuses a version it does not know.
    public var formatVersion: Int
    /// What was exported: `server`, `game` or `player`.
    public var scope: String
    /// The game of a `game` archive.
    public var bundleID: String?
    /// The player of a `player` archive.
    public var playerID: String?
    /// The schema migration the exporting server had applied.
    public var schemaVersion: Int
    /// When the export's snapshot was taken (ISO 8601, UTC).
    public var exportedAt: String
    /// Every file, in import order, with its record count and SHA-256.
    public var files: [ArchiveFileEntry]

    /// The `format` of every archive.
    public static let formatName = "opengamekit-archive"
    /// The newest format version this build writes and reads.
    public static let currentVersion = 1
    /// The manifest's file name in an archive.
    public static let fileName = "manifest.json"
}

/// One JSON Lines file of an archive.
public struct ArchiveFileEntry: Codable, Sendable, Equatable {
    /// The file's name (`scores.jsonl`).
    public var name: String
    /// Its lines, one record each.
    public var records: Int
    /// The SHA-256 of its bytes, lowercase hex.
    public var sha256: String
}

/// Which records an export takes.
public enum ArchiveScope: Sendable, Equatable {
    /// Everything the server holds (see ``ArchiveCatalog`` for what is never archived).
    case server
    /// One game's records and its players' accounts.
    case game(bundleID: String)
    /// One player's records: their right to their data.
    case player(playerID: String)

    var name: String {
        switch self {
        case .server: "server"
        case .game: "game"
        case .player: "player"
        }
    }

    /// The bundle or player id the kinds' filters are bound to.
    var value: String? {
        switch self {
        case .server: nil
        case .game(let bundleID): bundleID
        case .player(let playerID): playerID
        }
    }

    /// `kind`'s condition in this scope; nil when the kind is not part of it, "" when every row is.
    func filter(of kind: ArchiveKind) -> String? {
        switch self {
        case .server: kind.serverFilter ?? ""
        case .game: kind.gameFilter
        case .player: kind.playerFilter
        }
    }
}
