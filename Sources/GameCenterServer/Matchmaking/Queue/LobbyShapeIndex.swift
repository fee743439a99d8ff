import HeapModule

/// Waiting lobbies of every queue key, grouped by shape; each shape keeps a min-heap of its lobbies
/// by (`Rank`, id) with lazy deletion, so finding the first lobby of an acceptable shape costs
/// O(#shapes + log n). The queue ranks joinable lobbies by age and lone tickets by `ArrivalRank`.
struct LobbyShapeIndex<Rank: Comparable & Sendable>: Sendable {
    /// A heap entry; it is stale once its lobby was re-placed or removed (stamp no longer current).
    private struct Entry: Comparable, Sendable {
        let rank: Rank
        let lobby: LobbyID
        let stamp: UInt64

        static func < (lhs: Entry, rhs: Entry) -> Bool {
            lhs.rank != rhs.rank ? lhs.rank < rhs.rank : lhs.lobby < rhs.lobby
        }
    }

    /// The lobbies of one shape; `live` counts the current entries in `heap`.
    private struct Bucket: Sendable {
        var heap = Heap<Entry>()
        var live = 0
    }

    /// Where a lobby is indexed now.
    private struct Position: Sendable {
        let key: QueueKey
        let shape: LobbyShape
        let rank: Rank
        let stamp: UInt64
    }

    private var buckets: [QueueKey: [LobbyShape: Bucket]] = [:]
    private var positions: [LobbyID: Position] = [:]
    private var nextStamp: UInt64 = 0

    /// Number of heap entries held, stale ones included (for tests of cleanup).
    var entryCount: Int { buckets.values.reduce(0) { $0 + $1.values.reduce(0) { $0 + $1.heap.count } } }

    /// Indexes `lobby` under `shape` (nil = not indexed, so removed); a no-op when nothing changed.
    mutating func place(_ lobby: LobbyID, key: QueueKey, shape: LobbyShape?, rank: Rank) {
        let old = positions[lobby]
        if let old {
            if old.shape == shape && old.rank == rank && old.key == key { return }
            release(old)
        }
        guard let shape else {
            if old != nil { positions[lobby] = nil }
            return
        }
        nextStamp += 1
        positions[lobby] = Position(key: key, shape: shape, rank: rank, stamp: nextStamp)
        let current = positions
        Self.insert(
            Entry(rank: rank, lobby: lobby, stamp: nextStamp),
            into: &buckets[key, default: [:]][shape, default: Bucket()], positions: current)
    }

    /// Drops `lobby` from the index; its heap entry goes stale and is skipped later.
    mutating func remove(_ lobby: LobbyID) {
        guard let old = positions.removeValue(forKey: lobby) else { return }
        release(old)
    }

    /// The first lobby (smallest rank, then id) of `key` whose shape satisfies `accepts`.
    mutating func firstLobby(for key: QueueKey, where accepts: (LobbyShape) -> Bool) -> LobbyID? {
        guard let slot = buckets.index(forKey: key) else { return nil }
        return Self.first(in: &buckets.values[slot], positions: positions, where: accepts)?.lobby
    }

    /// Uncounts a lobby's old position, dropping its bucket (and key) once no live lobby is left.
    private mutating func release(_ old: Position) {
        let slot = buckets.index(forKey: old.key)!
        if Self.release(old.shape, in: &buckets.values[slot]) { buckets.remove(at: slot) }
    }

    /// Uncounts one live lobby of `shape`; returns true when `shapes` became empty.
    private static func release(_ shape: LobbyShape, in shapes: inout [LobbyShape: Bucket]) -> Bool {
        let slot = shapes.index(forKey: shape)!
        shapes.values[slot].live -= 1
        if shapes.values[slot].live == 0 { shapes.remove(at: slot) }
        return shapes.isEmpty
    }

    /// The first current head among the buckets whose shape satisfies `accepts`.
    private static func first(
        in shapes: inout [LobbyShape: Bucket], positions: [LobbyID: Position], where accepts: (LobbyShape) -> Bool
    ) -> Entry? {
        var best: Entry?
        var slot = shapes.startIndex
        while slot != shapes.endIndex {
            if accepts(shapes.keys[slot]) {
                let head = currentHead(of: &shapes.values[slot], positions: positions)
                if best.map({ head < $0 }) ?? true { best = head }
            }
            shapes.formIndex(after: &slot)
        }
        return best
    }

    /// Pops stale entries off the top of `bucket` and returns its (current) head.
    private static func currentHead(of bucket: inout Bucket, positions: [LobbyID: Position]) -> Entry {
        while let top = bucket.heap.min {
            if positions[top.lobby]?.stamp == top.stamp { return top }
            bucket.heap.removeMin()
        }
        preconditionFailure("a bucket with live lobbies has no current entry")
    }

    /// Adds a current entry; rebuilds the heap from current entries once stale ones outnumber them.
    private static func insert(_ entry: Entry, into bucket: inout Bucket, positions: [LobbyID: Position]) {
        bucket.heap.insert(entry)
        bucket.live += 1
        guard bucket.heap.count > 2 * bucket.live + 16 else { return }
        bucket.heap = Heap(bucket.heap.unordered.filter { positions[$0.lobby]?.stamp == $0.stamp })
    }
}
