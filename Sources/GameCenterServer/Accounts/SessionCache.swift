import GameCenterStorage
import Synchronization

/// Recently read sessions by token hash, so that a busy device does not cost a query per request.
///
/// Entries live a few seconds. This node's revocations remove entries before they answer, so a revoked token is
/// refused at once here; with several nodes on one PostgreSQL the other nodes remove theirs when the revocation's
/// notice reaches them (``PostgresEventBus``), and at the latest after ``timeToLive``.
final class SessionCache: Sendable {
    /// How long an entry is trusted, in milliseconds.
    static let timeToLive: Int64 = 5_000
    /// Entries kept at most; past this the cache starts over.
    static let capacity = 100_000

    private struct Entry {
        let session: SessionRecord
        let readAt: Int64
    }

    private let entries = Mutex<[String: Entry]>([:])

    func session(tokenHash: String, now: Int64) -> SessionRecord? {
        entries.withLock { entries in
            guard let entry = entries[tokenHash] else { return nil }
            guard now - entry.readAt < Self.timeToLive else {
                entries[tokenHash] = nil
                return nil
            }
            return entry.session
        }
    }

    func store(_ session: SessionRecord, now: Int64) {
        entries.withLock { entries in
            if entries.count >= Self.capacity { entries.removeAll(keepingCapacity: true) }
            entries[session.tokenHash] = Entry(session: session, readAt: now)
        }
    }

    /// Forgets the sessions with these ids.
    func remove(sessionIDs: some Collection<String>) {
        guard !sessionIDs.isEmpty else { return }
        let ids = Set(sessionIDs)
        entries.withLock { entries in entries = entries.filter { !ids.contains($0.value.session.sessionID) } }
    }
}
