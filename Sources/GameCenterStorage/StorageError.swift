/// Failures of the storage layer that callers act on.
public struct StorageError: Error, CustomStringConvertible, Equatable {
    private enum Kind: Equatable {
        case invalidURL(String)
        case duplicate(String)
        case closed
    }

    private let kind: Kind

    /// The `--database` value could not be understood.
    public static func invalidURL(_ hint: String) -> StorageError { StorageError(kind: .invalidURL(hint)) }
    /// A unique key (named) already exists.
    public static func duplicate(_ key: String) -> StorageError { StorageError(kind: .duplicate(key)) }

    /// The database was closed while work was still arriving.
    public static let closed = StorageError(kind: .closed)

    /// True when this error reports a unique-key violation.
    public var isDuplicate: Bool {
        if case .duplicate = kind { return true }
        return false
    }

    public var description: String {
        switch kind {
        case .invalidURL(let hint): return "invalid database URL: \(hint)"
        case .duplicate(let key): return "duplicate \(key)"
        case .closed: return "the database is closed"
        }
    }
}
