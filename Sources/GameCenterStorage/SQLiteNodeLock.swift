import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Keeps a second server off a SQLite database: SQLite serves one node (each process commits its own groups of
/// writes and keeps its own in-memory state, so two would disagree). An exclusive `flock` on `PATH.lock` next to
/// the database, held for as long as this object lives; the operating system lets go of it when the process ends,
/// however it ends.
public final class SQLiteNodeLock: Sendable {
    private let descriptor: Int32

    private init(descriptor: Int32) {
        self.descriptor = descriptor
    }

    /// Takes the lock of the database `url` names; nil for PostgreSQL and in-memory SQLite, which need none. Throws
    /// ``StorageError`` when another process holds it.
    public static func acquire(for url: String) throws -> SQLiteNodeLock? {
        guard case .sqlite(let path) = try DatabaseLocation(url), path != ":memory:" else { return nil }
        let directory = URL(fileURLWithPath: path).deletingLastPathComponent()
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let lockPath = path + ".lock"
        let descriptor = open(lockPath, O_CREAT | O_RDWR | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw StorageError.inUse("cannot open \(lockPath) to keep other servers off: \(String(cString: strerror(errno)))") }
        guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
            close(descriptor)
            throw StorageError.inUse(
                "another gamecenter process serves the SQLite database \(path); SQLite serves one node — stop the other, or use PostgreSQL for several")
        }
        return SQLiteNodeLock(descriptor: descriptor)
    }

    deinit {
        close(descriptor)
    }
}
