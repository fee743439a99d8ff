/// In-memory leaderboard rank index: an order-statistic B+tree of (`RankKey`, player)
/// entries plus a player → key hash table, giving any player's rank, the rank a key
/// would get, and any range of ranks in O(log n).
///
/// Internal nodes store, next to their separators, cumulative entry counts of their
/// children, so a rank is the sum, over the search path, of the entries left of it. Nodes are raw
/// allocations (`LeafNode`, `InnerNode`) owned and freed by this object, which keeps
/// the hot loops free of reference counting and copy-on-write checks; they come from
/// two `NodeArena`s (huge-page backed once large).
///
/// Not thread-safe: the owner wraps it in a `Mutex`.
package final class RankIndex {
    /// Entries per leaf used by `init()` and `init(entries:)`.
    static let defaultLeafCapacity = 64

    /// Children per internal node used by `init()` and `init(entries:)`.
    static let defaultInnerCapacity = 64

    /// Upper bound on the number of internal levels (an internal node other than
    /// the root has at least two children, so 2^48 entries would be needed to exceed it).
    static let maximumHeight = 48

    /// Maximum number of entries per leaf.
    let leafCapacity: Int

    /// Maximum number of children per internal node.
    let innerCapacity: Int

    /// A leaf other than the root that drops below this many entries is merged or refilled.
    let minimumLeafCount: Int

    /// An internal node other than the root that drops below this many children is merged or refilled.
    let minimumInnerCount: Int

    /// Entries per leaf produced by the bulk build: full-ish, leaving room for a few inserts.
    let bulkLeafCount: Int

    /// Children per internal node produced by the bulk build.
    let bulkInnerCount: Int

    // The mutable state below is read on every query. Dynamic exclusivity checks on class
    // properties cost two runtime calls per access, and this class never lends its
    // properties out `inout` across calls, so the hot ones are exempt.

    /// Player → current key.
    @exclusivity(unchecked) var map: PlayerKeyMap

    /// The root node: a leaf when `height == 0`, else an internal node; nil when empty.
    @exclusivity(unchecked) var root: UnsafeMutableRawPointer?

    /// Number of internal levels above the leaves.
    @exclusivity(unchecked) var height = 0

    /// Memory for leaves.
    @exclusivity(unchecked) var leafArena: NodeArena

    /// Memory for internal nodes.
    @exclusivity(unchecked) var innerArena: NodeArena

    /// Number of leaves in the tree.
    var leafNodeCount: Int {
        leafArena.liveBlocks
    }

    /// Number of internal nodes in the tree.
    var innerNodeCount: Int {
        innerArena.liveBlocks
    }

    /// Scratch stack of the internal nodes on the last update's search path, root first.
    let pathNodes: UnsafeMutablePointer<UnsafeMutableRawPointer>

    /// Scratch stack of the child index taken at each node of `pathNodes`.
    let pathSlots: UnsafeMutablePointer<Int>

    /// Second scratch path (nodes), for the destination of a move.
    let targetPathNodes: UnsafeMutablePointer<UnsafeMutableRawPointer>

    /// Second scratch path (child indices), for the destination of a move.
    let targetPathSlots: UnsafeMutablePointer<Int>

    /// Creates an empty index with the default node sizes.
    package convenience init() {
        self.init(leafCapacity: RankIndex.defaultLeafCapacity, innerCapacity: RankIndex.defaultInnerCapacity)
    }

    /// Creates an empty index with the given node sizes (small sizes let tests build deep trees).
    init(leafCapacity: Int, innerCapacity: Int) {
        precondition(leafCapacity >= 4 && leafCapacity <= Int(Int32.max) / 32, "leafCapacity out of range")
        precondition(innerCapacity >= 4 && innerCapacity <= Int(Int32.max) / 32, "innerCapacity out of range")
        self.leafCapacity = leafCapacity
        self.innerCapacity = innerCapacity
        self.minimumLeafCount = max(1, leafCapacity / 3)
        self.minimumInnerCount = max(2, innerCapacity / 3)
        self.bulkLeafCount = leafCapacity - leafCapacity / 8
        self.bulkInnerCount = innerCapacity - innerCapacity / 8
        self.map = PlayerKeyMap()
        self.leafArena = NodeArena(blockSize: LeafNode.byteCount(capacity: leafCapacity))
        self.innerArena = NodeArena(blockSize: InnerNode.byteCount(capacity: innerCapacity))
        self.pathNodes = .allocate(capacity: RankIndex.maximumHeight)
        self.pathSlots = .allocate(capacity: RankIndex.maximumHeight)
        self.targetPathNodes = .allocate(capacity: RankIndex.maximumHeight)
        self.targetPathSlots = .allocate(capacity: RankIndex.maximumHeight)
    }

    /// Bulk build from entries in any order, with the default node sizes.
    /// Players and keys must be unique (precondition).
    package convenience init(entries: [(player: UInt32, key: RankKey)]) {
        self.init(
            entries: entries,
            leafCapacity: RankIndex.defaultLeafCapacity,
            innerCapacity: RankIndex.defaultInnerCapacity
        )
    }

    /// Bulk build from entries in any order: sorts them, then builds the tree bottom-up
    /// with nodes filled to `bulkLeafCount` / `bulkInnerCount`. Players and keys must be unique (precondition).
    convenience init(entries: [(player: UInt32, key: RankKey)], leafCapacity: Int, innerCapacity: Int) {
        self.init(leafCapacity: leafCapacity, innerCapacity: innerCapacity)
        build(from: entries)
    }

    deinit {
        // The arenas free all nodes with their chunks.
        pathNodes.deallocate()
        pathSlots.deallocate()
        targetPathNodes.deallocate()
        targetPathSlots.deallocate()
    }

    /// Number of entries (players) in the index.
    package var count: Int {
        map.count
    }

    /// The current key of `player`, nil when absent.
    package func key(of player: UInt32) -> RankKey? {
        map.key(of: player)
    }

    /// Inserts or moves the player's entry; returns the previous key (nil for a new player).
    /// The key must not belong to another player (precondition).
    @discardableResult
    package func set(player: UInt32, key: RankKey) -> RankKey? {
        if let slot = map.find(player) {
            let old = map.key(at: slot)
            if old == key { return old }
            moveEntry(player: player, from: old, to: key)
            map.setKey(key, at: slot)
            return old
        }
        // Subtree counts are UInt32; no real index comes near this.
        precondition(map.count < Int(UInt32.max), "RankIndex is full")
        insertEntry(key, player: player)
        map.insertNew(player, key: key)
        return nil
    }

    /// Removes the player's entry; returns its key, nil when absent.
    @discardableResult
    package func remove(player: UInt32) -> RankKey? {
        guard let slot = map.find(player) else { return nil }
        let old = map.key(at: slot)
        removeEntry(old)
        map.remove(at: slot)
        return old
    }

    /// The player's 1-based rank, nil when absent.
    package func rank(of player: UInt32) -> Int? {
        guard let key = map.key(of: player) else { return nil }
        return rank(of: key)
    }

    /// 1 + the number of entries whose key is smaller than `key`: the player's rank when
    /// `key` is present, else the rank a new entry with this key would get.
    package func rank(of key: RankKey) -> Int {
        guard var node = root else { return 1 }
        var smaller = 0
        for _ in 0..<height {
            let step = innerNode(node).route(key)
            smaller &+= step.before
            node = step.child
        }
        return smaller &+ leafNode(node).lowerBound(key) &+ 1
    }

    /// Entries whose rank lies in `ranks` (1-based), clipped to the ranks that exist, in rank order.
    package func entries(in ranks: ClosedRange<Int>) -> [(rank: Int, player: UInt32, key: RankKey)] {
        let lower = max(ranks.lowerBound, 1)
        let upper = min(ranks.upperBound, count)
        guard lower <= upper, var node = root else { return [] }
        var skipped = lower - 1
        for _ in 0..<height {
            let inner = innerNode(node)
            let index = inner.childIndex(forPosition: skipped)
            skipped -= inner.entriesBefore(index)
            node = inner.children[index]
        }
        var result: [(rank: Int, player: UInt32, key: RankKey)] = []
        result.reserveCapacity(upper - lower + 1)
        var leaf = leafNode(node)
        var index = skipped
        for rank in lower...upper {
            if index == leaf.count {
                // The counts guarantee that enough entries follow, so `next` exists.
                leaf = leaf.next!
                index = 0
            }
            result.append((rank: rank, player: leaf.players[index], key: leaf.key(at: index)))
            index += 1
        }
        return result
    }

    /// Bytes allocated by the structure, from capacities: node arena chunks (including
    /// free blocks and the unused tail of the newest chunk), hash table slots and path scratch.
    package var allocatedBytes: Int {
        leafArena.allocatedBytes
            + innerArena.allocatedBytes
            + map.allocatedBytes
            + 2 * RankIndex.maximumHeight * (MemoryLayout<UnsafeMutableRawPointer>.stride + MemoryLayout<Int>.stride)
    }

    /// Moves `player`'s entry from key `old` (present) to key `new` (absent).
    ///
    /// Both search paths are walked in lockstep, so the cache misses of the two descents
    /// overlap. When the entry stays in its leaf it just slides there; when the source
    /// leaf stays above its minimum and the target leaf has room, both leaves and both
    /// paths' counts are updated in place; otherwise it falls back to remove + insert.
    func moveEntry(player: UInt32, from old: RankKey, to new: RankKey) {
        guard var source = root else { preconditionFailure("moving an entry of an empty tree") }
        var target = source
        for level in 0..<height {
            let sourceStep = innerNode(source).route(old)
            let targetStep = innerNode(target).route(new)
            pathNodes[level] = source
            pathSlots[level] = sourceStep.index
            targetPathNodes[level] = target
            targetPathSlots[level] = targetStep.index
            source = sourceStep.child
            target = targetStep.child
        }
        let sourceLeaf = leafNode(source)
        let targetLeaf = leafNode(target)
        var (from, to) = LeafNode.lowerBoundPair(sourceLeaf, old, targetLeaf, new)
        precondition(from < sourceLeaf.count && sourceLeaf.key(at: from) == old, "index out of sync with its player map")
        precondition(to == targetLeaf.count || targetLeaf.key(at: to) != new, "RankKey already belongs to another player")
        if source == target {
            if to > from { to -= 1 }
            sourceLeaf.move(from: from, to: to, newKey: new)
            return
        }
        guard sourceLeaf.count > minimumLeafCount && targetLeaf.count < leafCapacity else {
            removeEntry(old)
            insertEntry(new, player: player)
            return
        }
        sourceLeaf.remove(at: from)
        targetLeaf.insert(new, player: player, at: to)
        for level in 0..<height {
            let sourceSlot = pathSlots[level]
            let targetSlot = targetPathSlots[level]
            if pathNodes[level] == targetPathNodes[level] && sourceSlot == targetSlot { continue }
            innerNode(pathNodes[level]).addEntries(-1, from: sourceSlot)
            innerNode(targetPathNodes[level]).addEntries(1, from: targetSlot)
        }
    }

    /// A view of the leaf allocation at `base`.
    func leafNode(_ base: UnsafeMutableRawPointer) -> LeafNode {
        LeafNode(base, capacity: leafCapacity)
    }

    /// A view of the internal node allocation at `base`.
    func innerNode(_ base: UnsafeMutableRawPointer) -> InnerNode {
        InnerNode(base, capacity: innerCapacity)
    }

    /// A new empty leaf.
    func makeLeaf() -> LeafNode {
        LeafNode.initialize(at: leafArena.allocate(), capacity: leafCapacity)
    }

    /// A new empty internal node.
    func makeInner() -> InnerNode {
        InnerNode.initialize(at: innerArena.allocate(), capacity: innerCapacity)
    }

    /// Returns a leaf's memory to its arena.
    func freeLeaf(_ leaf: LeafNode) {
        leafArena.deallocate(leaf.base)
    }

    /// Returns an internal node's memory to its arena.
    func freeInner(_ inner: InnerNode) {
        innerArena.deallocate(inner.base)
    }
}
