import Synchronization

/// The games this server knows, replaced as a whole when manifests are reloaded.
///
/// Stored data is keyed by bundle id, category and identifier, never by anything the registry holds, so a
/// reload changes configuration and never loses scores, progress or accounts.
public final class GameRegistry: Sendable {
    private let games: Mutex<[String: Game]>
    /// Where the manifests are read from; nil when the server runs with no games.
    public let path: String?

    /// Loads every manifest at `path` (a file or folder); throws ``ManifestError`` on the first broken rule.
    public init(path: String?) throws {
        self.path = path
        let loaded = try path.map { try ManifestLoader.loadGames(at: $0) } ?? []
        self.games = Mutex(Dictionary(uniqueKeysWithValues: loaded.map { ($0.bundleID, $0) }))
    }

    /// The game with this bundle id.
    public func game(bundleID: String) -> Game? {
        games.withLock { $0[bundleID] }
    }

    /// All games, sorted by name.
    public var all: [Game] {
        games.withLock { Array($0.values) }.sorted { ($0.name, $0.bundleID) < ($1.name, $1.bundleID) }
    }

    /// Re-reads the manifests; on any error the games stay exactly as they were. Returns the games loaded.
    @discardableResult
    public func reload() throws -> [Game] {
        guard let path else { return [] }
        let loaded = try ManifestLoader.loadGames(at: path)
        games.withLock { $0 = Dictionary(uniqueKeysWithValues: loaded.map { ($0.bundleID, $0) }) }
        return loaded
    }
}
