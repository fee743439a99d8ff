/// A B+tree leaf: a view of one manually managed allocation holding up to `capacity`
/// entries sorted by key, stored as separate contiguous arrays.
///
/// Layout: a 16-byte header (`count: Int32`, `capacity: Int32`, `next` leaf pointer),
/// then `orders[capacity]`, `tiebreaks[capacity]` (`UInt64`) and `players[capacity]` (`UInt32`).
/// Splitting the key into two arrays lets searches scan only `orders` (8 bytes per
/// entry) and touch `tiebreaks` only among equal orders. Unused `orders` slots hold
/// `UInt64.max`, so a search can scan all `capacity` slots without first waiting for
/// `count` (see `lowerBound`). The view carries the capacity itself (the owner knows it),
/// so addressing never waits for the header either. The owner (`RankIndex`) allocates
/// and frees leaves explicitly (from a `NodeArena`), so leaves carry no reference counting.
struct LeafNode: Equatable {
    /// Start of the allocation.
    let base: UnsafeMutableRawPointer

    /// Maximum number of entries (equal to the value stored in the header).
    let capacity: Int

    /// Wraps an existing leaf allocation made with `capacity`.
    init(_ base: UnsafeMutableRawPointer, capacity: Int) {
        self.base = base
        self.capacity = capacity
    }

    private static let headerSize = 16

    /// Bytes of one leaf allocation with room for `capacity` entries.
    static func byteCount(capacity: Int) -> Int {
        headerSize + capacity * (2 * MemoryLayout<UInt64>.stride + MemoryLayout<UInt32>.stride)
    }

    /// Formats the block at `base` (at least `byteCount(capacity:)` bytes) as an empty leaf.
    static func initialize(at base: UnsafeMutableRawPointer, capacity: Int) -> LeafNode {
        base.storeBytes(of: 0, as: Int32.self)
        base.storeBytes(of: Int32(capacity), toByteOffset: 4, as: Int32.self)
        base.storeBytes(of: nil, toByteOffset: 8, as: UnsafeMutableRawPointer?.self)
        (base + headerSize).initializeMemory(as: UInt64.self, repeating: .max, count: capacity)
        (base + headerSize + 8 * capacity).initializeMemory(as: UInt64.self, repeating: 0, count: capacity)
        (base + headerSize + 16 * capacity).initializeMemory(as: UInt32.self, repeating: 0, count: capacity)
        return LeafNode(base, capacity: capacity)
    }

    /// Number of entries. Shrinking it marks the vacated `orders` slots unused.
    var count: Int {
        get { Int(base.load(as: Int32.self)) }
        nonmutating set {
            let old = count
            if newValue < old {
                (orders + newValue).update(repeating: .max, count: old - newValue)
            }
            base.storeBytes(of: Int32(truncatingIfNeeded: newValue), as: Int32.self)
        }
    }

    /// The capacity recorded in the header when the leaf was allocated.
    var storedCapacity: Int {
        Int(base.load(fromByteOffset: 4, as: Int32.self))
    }

    /// The next leaf in key order, nil for the last leaf.
    var next: LeafNode? {
        get {
            base.load(fromByteOffset: 8, as: UnsafeMutableRawPointer?.self).map { LeafNode($0, capacity: capacity) }
        }
        nonmutating set { base.storeBytes(of: newValue?.base, toByteOffset: 8, as: UnsafeMutableRawPointer?.self) }
    }

    /// The `order` half of each key; `UInt64.max` in unused slots.
    var orders: UnsafeMutablePointer<UInt64> {
        (base + LeafNode.headerSize).assumingMemoryBound(to: UInt64.self)
    }

    /// The `tiebreak` half of each key.
    var tiebreaks: UnsafeMutablePointer<UInt64> {
        (base + LeafNode.headerSize + 8 * capacity).assumingMemoryBound(to: UInt64.self)
    }

    /// The player of each entry.
    var players: UnsafeMutablePointer<UInt32> {
        (base + LeafNode.headerSize + 16 * capacity).assumingMemoryBound(to: UInt32.self)
    }

    /// The key at `index`.
    func key(at index: Int) -> RankKey {
        RankKey(order: orders[index], tiebreak: tiebreaks[index])
    }

    /// Number of entries whose key is smaller than `key`.
    func lowerBound(_ key: RankKey) -> Int {
        let orders = self.orders
        // A branch-free count over all `capacity` orders: unused slots hold UInt64.max and
        // never count, so the loads need neither `count` nor the outcome of earlier
        // compares, and the CPU fetches all of the leaf's order lines at once.
        var smaller = 0
        var index = 0
        while index < capacity {
            smaller &+= Int(truncatingIfNeeded: unsafeBitCast(orders[index] < key.order, to: UInt8.self))
            index &+= 1
        }
        if orders[min(smaller, capacity - 1)] == key.order {
            let tiebreaks = self.tiebreaks
            let count = self.count
            while smaller < count && orders[smaller] == key.order && tiebreaks[smaller] < key.tiebreak {
                smaller += 1
            }
        }
        return smaller
    }

    /// `lowerBound` in two leaves at once (`first.lowerBound(firstKey)`,
    /// `second.lowerBound(secondKey)`), interleaved so both leaves' cache misses overlap.
    static func lowerBoundPair(
        _ first: LeafNode, _ firstKey: RankKey, _ second: LeafNode, _ secondKey: RankKey
    ) -> (first: Int, second: Int) {
        let capacity = first.capacity
        let firstOrders = first.orders, secondOrders = second.orders
        var firstSmaller = 0, secondSmaller = 0
        var index = 0
        while index < capacity {
            firstSmaller &+= Int(truncatingIfNeeded: unsafeBitCast(firstOrders[index] < firstKey.order, to: UInt8.self))
            secondSmaller &+= Int(truncatingIfNeeded: unsafeBitCast(secondOrders[index] < secondKey.order, to: UInt8.self))
            index &+= 1
        }
        if firstOrders[min(firstSmaller, capacity - 1)] == firstKey.order {
            firstSmaller = first.lowerBound(firstKey)
        }
        if secondOrders[min(secondSmaller, capacity - 1)] == secondKey.order {
            secondSmaller = second.lowerBound(secondKey)
        }
        return (firstSmaller, secondSmaller)
    }

    /// Inserts an entry at `index`, shifting later entries up. The leaf must not be full.
    func insert(_ key: RankKey, player: UInt32, at index: Int) {
        let count = self.count
        let moved = count - index
        let orders = self.orders, tiebreaks = self.tiebreaks, players = self.players
        (orders + index + 1).update(from: orders + index, count: moved)
        (tiebreaks + index + 1).update(from: tiebreaks + index, count: moved)
        (players + index + 1).update(from: players + index, count: moved)
        orders[index] = key.order
        tiebreaks[index] = key.tiebreak
        players[index] = player
        self.count = count + 1
    }

    /// Removes the entry at `index`, shifting later entries down.
    func remove(at index: Int) {
        let count = self.count
        let moved = count - index - 1
        let orders = self.orders, tiebreaks = self.tiebreaks, players = self.players
        (orders + index).update(from: orders + index + 1, count: moved)
        (tiebreaks + index).update(from: tiebreaks + index + 1, count: moved)
        (players + index).update(from: players + index + 1, count: moved)
        self.count = count - 1
    }

    /// Moves the entry at `from` so that it lands at `to` (an index in the leaf after
    /// the move) with a new key, shifting only the entries in between.
    func move(from: Int, to: Int, newKey: RankKey) {
        let orders = self.orders, tiebreaks = self.tiebreaks, players = self.players
        let player = players[from]
        if to < from {
            (orders + to + 1).update(from: orders + to, count: from - to)
            (tiebreaks + to + 1).update(from: tiebreaks + to, count: from - to)
            (players + to + 1).update(from: players + to, count: from - to)
        } else if to > from {
            (orders + from).update(from: orders + from + 1, count: to - from)
            (tiebreaks + from).update(from: tiebreaks + from + 1, count: to - from)
            (players + from).update(from: players + from + 1, count: to - from)
        }
        orders[to] = newKey.order
        tiebreaks[to] = newKey.tiebreak
        players[to] = player
    }

    /// Opens a gap of `gap` entries at the front, shifting all entries up. Does not change `count`.
    func shiftUp(by gap: Int) {
        let count = self.count
        let orders = self.orders, tiebreaks = self.tiebreaks, players = self.players
        (orders + gap).update(from: orders, count: count)
        (tiebreaks + gap).update(from: tiebreaks, count: count)
        (players + gap).update(from: players, count: count)
    }

    /// Drops the first `gap` entries, shifting the rest down. Does not change `count`.
    func shiftDown(by gap: Int) {
        let count = self.count
        let orders = self.orders, tiebreaks = self.tiebreaks, players = self.players
        orders.update(from: orders + gap, count: count - gap)
        tiebreaks.update(from: tiebreaks + gap, count: count - gap)
        players.update(from: players + gap, count: count - gap)
    }

    /// Copies `count` entries starting at `sourceIndex` of `source` to `targetIndex` of `self`.
    /// Does not change either leaf's `count`.
    func copyEntries(from source: LeafNode, at sourceIndex: Int, count: Int, to targetIndex: Int) {
        (orders + targetIndex).update(from: source.orders + sourceIndex, count: count)
        (tiebreaks + targetIndex).update(from: source.tiebreaks + sourceIndex, count: count)
        (players + targetIndex).update(from: source.players + sourceIndex, count: count)
    }

    /// Appends the first `moved` entries of `right` (the next leaf) to `self` and removes them from `right`.
    func takeFront(_ moved: Int, of right: LeafNode) {
        copyEntries(from: right, at: 0, count: moved, to: count)
        count += moved
        right.shiftDown(by: moved)
        right.count -= moved
    }

    /// Prepends the last `moved` entries of `left` (the previous leaf) to `self` and removes them from `left`.
    func takeBack(_ moved: Int, of left: LeafNode) {
        shiftUp(by: moved)
        copyEntries(from: left, at: left.count - moved, count: moved, to: 0)
        count += moved
        left.count -= moved
    }
}
