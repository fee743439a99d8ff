import GameCenterStorage
import Synchronization

/// Stored reports by score id, so that a leaderboard page does not read the rows behind its ranks on every request.
///
/// A stored report never changes; only a studio's removal of a player's scores takes reports away (``remove(playerID:)``
/// on this node; on another node a removed report is no longer on any board, so it is never asked for). Entries are
/// therefore never stale. Holds at most ``capacity`` reports and starts over when full.
final class ScoreRecordCache: Sendable {
    /// Reports kept at most (about 150 bytes each).
    static let capacity = 100_000

    private let records = Mutex<[Int64: ScoreRecord]>([:])

    /// The cached reports among `ids`, and the ids that must be read from storage.
    func lookup(_ ids: [Int64]) -> (found: [ScoreRecord], missing: [Int64]) {
        records.withLock { records in
            var found: [ScoreRecord] = []
            var missing: [Int64] = []
            for id in ids {
                if let record = records[id] { found.append(record) } else { missing.append(id) }
            }
            return (found, missing)
        }
    }

    /// Keeps `stored` (reports just read or just accepted).
    func store(_ stored: [ScoreRecord]) {
        guard !stored.isEmpty else { return }
        records.withLock { records in
            if records.count + stored.count > Self.capacity { records.removeAll(keepingCapacity: true) }
            for record in stored { records[record.scoreID] = record }
        }
    }

    /// Forgets a player's reports (a studio removed them).
    func remove(playerID: String) {
        records.withLock { records in records = records.filter { $0.value.playerID != playerID } }
    }
}
