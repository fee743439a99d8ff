/// Failures of the storage layer that callers act on.
public struct StorageError: Error, CustomStringConvertible, Equatable {
    private enum Kind: Equatable {
        case invalidURL(String)
        case notFound(String)
        case closed
        case unavailable(String)
        case inUse(String)
        case invalidArchive(String)
    }

    private let kind: Kind

    /// The `--database` value could not be understood.
    public static func invalidURL(_ hint: String) -> StorageError { StorageError(kind: .invalidURL(hint)) }
    /// A row the work needs (named) does not exist.
    public static func notFound(_ what: String) -> StorageError { StorageError(kind: .notFound(what)) }

    /// The database was closed while work was still arriving.
    public static let closed = StorageError(kind: .closed)

    /// The database cannot be reached now (PostgreSQL down, restarting or unreachable); the work did not run, or
    /// its outcome is unknown. Worth retrying later.
    public static func unavailable(_ why: String) -> StorageError { StorageError(kind: .unavailable(why)) }

    /// Another process serves this (single-node) database.
    public static func inUse(_ why: String) -> StorageError { StorageError(kind: .inUse(why)) }

    /// An archive to import is damaged, of an unknown format, or does not fit this server (the reason says which).
    public static func invalidArchive(_ why: String) -> StorageError { StorageError(kind: .invalidArchive(why)) }

    /// True when another process serves this database.
    public var isInUse: Bool {
        if case .inUse = kind { return true }
        return false
    }

    /// True when the database could not be reached.
    public var isUnavailable: Bool {
        if case .unavailable = kind { return true }
        return false
    }

    public var description: String {
        switch kind {
        case .invalidURL(let hint): return "invalid database URL: \(hint)"
        case .notFound(let what): return "not found: \(what)"
        case .closed: return "the database is closed"
        case .inUse(let why): return why
        case .invalidArchive(let why): return "cannot import the archive: \(why)"
        case .unavailable(let why): return "the database is unavailable: \(why)"
        }
    }
}
