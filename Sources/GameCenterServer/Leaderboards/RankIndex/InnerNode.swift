/// A B+tree internal node: a view of one manually managed allocation holding up to
/// `capacity` children with their separator keys and cumulative entry counts.
///
/// Layout: a 16-byte header (`count: Int32` children, `capacity: Int32`, 8 spare bytes),
/// then `separatorOrders[capacity]`, `separatorTiebreaks[capacity]` (`UInt64`),
/// `children[capacity]` (raw pointers) and `ends[capacity]` (`UInt32`).
///
/// `separator(i)` for `i >= 1` splits child `i - 1` from child `i`: every key in
/// child `i - 1` is smaller, every key in child `i` is greater or equal. Slot 0 has
/// no meaning inside the node but is kept when children move between nodes, where it
/// becomes the separator the parent needs. Unused `separatorOrders` slots hold
/// `UInt64.max` so searches can cover all slots without waiting for `count`, and the
/// view carries the capacity so addressing never waits for the header.
///
/// `ends[i]` is the number of entries in children `0...i` (a prefix sum), so the
/// entries before a child cost one load during a rank query; an insertion or removal
/// pays instead by adjusting the ends after its child, a short loop over contiguous
/// `UInt32`s. Being `UInt32`, a subtree holds at most `UInt32.max` entries.
struct InnerNode: Equatable {
    /// Start of the allocation.
    let base: UnsafeMutableRawPointer

    /// Maximum number of children (equal to the value stored in the header).
    let capacity: Int

    /// Wraps an existing internal node allocation made with `capacity`.
    init(_ base: UnsafeMutableRawPointer, capacity: Int) {
        self.base = base
        self.capacity = capacity
    }

    private static let headerSize = 16

    /// Bytes of one internal node allocation with room for `capacity` children.
    static func byteCount(capacity: Int) -> Int {
        headerSize + capacity
            * (2 * MemoryLayout<UInt64>.stride + MemoryLayout<UnsafeMutableRawPointer>.stride
                + MemoryLayout<UInt32>.stride)
    }

    /// Formats the block at `base` (at least `byteCount(capacity:)` bytes) as an empty node.
    static func initialize(at base: UnsafeMutableRawPointer, capacity: Int) -> InnerNode {
        base.storeBytes(of: 0, as: Int32.self)
        base.storeBytes(of: Int32(capacity), toByteOffset: 4, as: Int32.self)
        (base + headerSize).initializeMemory(as: UInt64.self, repeating: .max, count: capacity)
        (base + headerSize + 8 * capacity).initializeMemory(as: UInt64.self, repeating: 0, count: capacity)
        (base + headerSize + 16 * capacity).bindMemory(to: UnsafeMutableRawPointer.self, capacity: capacity)
        (base + headerSize + 24 * capacity).initializeMemory(as: UInt32.self, repeating: 0, count: capacity)
        return InnerNode(base, capacity: capacity)
    }

    /// Number of children. Shrinking it marks the vacated separator slots unused.
    var count: Int {
        get { Int(base.load(as: Int32.self)) }
        nonmutating set {
            let old = count
            if newValue < old {
                (separatorOrders + newValue).update(repeating: .max, count: old - newValue)
            }
            base.storeBytes(of: Int32(truncatingIfNeeded: newValue), as: Int32.self)
        }
    }

    /// The capacity recorded in the header when the node was allocated.
    var storedCapacity: Int {
        Int(base.load(fromByteOffset: 4, as: Int32.self))
    }

    /// The `order` half of each separator.
    var separatorOrders: UnsafeMutablePointer<UInt64> {
        (base + InnerNode.headerSize).assumingMemoryBound(to: UInt64.self)
    }

    /// The `tiebreak` half of each separator.
    var separatorTiebreaks: UnsafeMutablePointer<UInt64> {
        (base + InnerNode.headerSize + 8 * capacity).assumingMemoryBound(to: UInt64.self)
    }

    /// The child allocations (all leaves or all internal nodes, by level).
    var children: UnsafeMutablePointer<UnsafeMutableRawPointer> {
        (base + InnerNode.headerSize + 16 * capacity).assumingMemoryBound(to: UnsafeMutableRawPointer.self)
    }

    /// Cumulative entry counts: `ends[i]` entries lie in children `0...i`.
    var ends: UnsafeMutablePointer<UInt32> {
        (base + InnerNode.headerSize + 24 * capacity).assumingMemoryBound(to: UInt32.self)
    }

    /// The separator stored in slot `index`.
    func separator(_ index: Int) -> RankKey {
        RankKey(order: separatorOrders[index], tiebreak: separatorTiebreaks[index])
    }

    /// Stores `key` as the separator in slot `index`.
    func setSeparator(_ index: Int, _ key: RankKey) {
        separatorOrders[index] = key.order
        separatorTiebreaks[index] = key.tiebreak
    }

    /// Number of separators (slots 1..<count) whose order is below `order`.
    func separatorsBelow(_ order: UInt64) -> Int {
        capacity == 64 ? Self.separatorsBelowIn64(separatorOrders, order) : separatorsBelowByLoop(order)
    }

    /// `separatorsBelow` for any capacity.
    func separatorsBelowByLoop(_ order: UInt64) -> Int {
        let orders = separatorOrders
        // Binary search over slots 1..<capacity (unused slots hold UInt64.max), written branch-free: about
        // log2(capacity) steps. Upper levels are cache-resident, where this needs a fraction of the instructions of a
        // full scan. (In this loop the compiler may turn the step back into a branch; see `separatorsBelowIn64`.)
        var low = 1
        var length = capacity - 1
        while length > 1 {
            let half = length >> 1
            let isBelow = Int(truncatingIfNeeded: unsafeBitCast(orders[low &+ half &- 1] < order, to: UInt8.self))
            low &+= half & (0 &- isBelow)
            length &-= half
        }
        return low - 1 + Int(truncatingIfNeeded: unsafeBitCast(orders[low] < order, to: UInt8.self))
    }

    /// `separatorsBelow` for the default capacity of 64, unrolled: the same six steps (halves 31, 16, 8, 4, 2, 1) as
    /// straight-line code. In the loop, LLVM's x86 cmov converter turned the branch-free step back into a branch
    /// (it is on the loop's critical path), and the branch mispredicted on every other step of a search.
    static func separatorsBelowIn64(_ orders: UnsafeMutablePointer<UInt64>, _ order: UInt64) -> Int {
        var low = 1
        step(&low, 31, orders, order)
        step(&low, 16, orders, order)
        step(&low, 8, orders, order)
        step(&low, 4, orders, order)
        step(&low, 2, orders, order)
        step(&low, 1, orders, order)
        return low - 1 + Int(truncatingIfNeeded: unsafeBitCast(orders[low] < order, to: UInt8.self))
    }

    /// One step of the branch-free binary search: moves `low` up by `half` when the slot before that is below `order`.
    @inline(__always)
    private static func step(_ low: inout Int, _ half: Int, _ orders: UnsafeMutablePointer<UInt64>, _ order: UInt64) {
        let isBelow = Int(truncatingIfNeeded: unsafeBitCast(orders[low &+ half &- 1] < order, to: UInt8.self))
        low &+= half & (0 &- isBelow)
    }

    /// Index of the child whose key range contains `key`: the number of separators
    /// (slots 1..<count) that are less than or equal to `key`.
    func childIndex(for key: RankKey) -> Int {
        let orders = separatorOrders
        var index = separatorsBelow(key.order) + 1
        // Tiebreaks are read only for the run of separators whose order equals the key's.
        if index < capacity && orders[index] == key.order {
            let tiebreaks = separatorTiebreaks
            let count = self.count
            while index < count && orders[index] == key.order && tiebreaks[index] <= key.tiebreak {
                index += 1
            }
        }
        return index - 1
    }

    /// The child for `key` (as `childIndex(for:)`), its index and the number of entries
    /// in the children before it.
    func route(_ key: RankKey) -> (index: Int, child: UnsafeMutableRawPointer, before: Int) {
        let index = childIndex(for: key)
        return (index, children[index], entriesBefore(index))
    }

    /// Number of entries in children `0..<index`.
    func entriesBefore(_ index: Int) -> Int {
        index > 0 ? Int(ends[index - 1]) : 0
    }

    /// Number of entries in child `index`.
    func childCount(_ index: Int) -> Int {
        Int(ends[index]) - entriesBefore(index)
    }

    /// Number of entries in all children.
    var totalCount: Int {
        entriesBefore(count)
    }

    /// Index of the child holding the entry with 0-based position `position` (which must
    /// be below `totalCount`): the number of children ending at or before it.
    func childIndex(forPosition position: Int) -> Int {
        let ends = self.ends
        let count = self.count
        var index = 0
        var child = 0
        while child < count {
            index &+= Int(truncatingIfNeeded: unsafeBitCast(Int(ends[child]) <= position, to: UInt8.self))
            child &+= 1
        }
        return index
    }

    /// Adds `delta` entries to child `index`: shifts the ends of it and every later child.
    func addEntries(_ delta: Int, from index: Int) {
        let ends = self.ends
        let count = self.count
        let delta = UInt32(truncatingIfNeeded: delta)
        var child = index
        while child < count {
            ends[child] &+= delta
            child &+= 1
        }
    }

    /// Moves `delta` entries from child `index + 1` to child `index` (negative: the other way).
    func moveBoundary(after index: Int, by delta: Int) {
        ends[index] &+= UInt32(truncatingIfNeeded: delta)
    }

    /// Inserts a child with its separator and entry count at `index`, shifting later
    /// children up. The node must not be full.
    func insertChild(_ child: UnsafeMutableRawPointer, separator: RankKey, count childCount: Int, at index: Int) {
        let count = self.count
        shiftUp(from: index, by: 1)
        setSeparator(index, separator)
        children[index] = child
        ends[index] = UInt32(truncatingIfNeeded: entriesBefore(index))
        self.count = count + 1
        addEntries(childCount, from: index)
    }

    /// Removes the child (and its separator) at `index` and hands its entries to child
    /// `index - 1`, as when the two are merged.
    func absorbIntoPrevious(at index: Int) {
        let count = self.count
        let moved = count - index - 1
        ends[index - 1] = ends[index]
        (separatorOrders + index).update(from: separatorOrders + index + 1, count: moved)
        (separatorTiebreaks + index).update(from: separatorTiebreaks + index + 1, count: moved)
        (children + index).update(from: children + index + 1, count: moved)
        (ends + index).update(from: ends + index + 1, count: moved)
        self.count = count - 1
    }

    /// Shifts the slots `start..<count` up by `gap`, ends unchanged. Does not change `count`.
    func shiftUp(from start: Int, by gap: Int) {
        let moved = count - start
        (separatorOrders + start + gap).update(from: separatorOrders + start, count: moved)
        (separatorTiebreaks + start + gap).update(from: separatorTiebreaks + start, count: moved)
        (children + start + gap).update(from: children + start, count: moved)
        (ends + start + gap).update(from: ends + start, count: moved)
    }

    /// Drops the first `gap` children (and their entries), shifting the rest down.
    func dropFront(_ gap: Int) {
        let moved = count - gap
        let dropped = ends[gap - 1]
        separatorOrders.update(from: separatorOrders + gap, count: moved)
        separatorTiebreaks.update(from: separatorTiebreaks + gap, count: moved)
        children.update(from: children + gap, count: moved)
        for index in 0..<moved {
            ends[index] = ends[index + gap] &- dropped
        }
        count = moved
    }

    /// Copies `count` children (separators, pointers, entry counts) starting at
    /// `sourceIndex` of `source` to `targetIndex` of `self`, whose children before
    /// `targetIndex` must be in place. Does not change either node's `count`.
    func copySlots(from source: InnerNode, at sourceIndex: Int, count: Int, to targetIndex: Int) {
        (separatorOrders + targetIndex).update(from: source.separatorOrders + sourceIndex, count: count)
        (separatorTiebreaks + targetIndex).update(from: source.separatorTiebreaks + sourceIndex, count: count)
        (children + targetIndex).update(from: source.children + sourceIndex, count: count)
        let offset = UInt32(truncatingIfNeeded: entriesBefore(targetIndex) - source.entriesBefore(sourceIndex))
        for index in 0..<count {
            ends[targetIndex + index] = source.ends[sourceIndex + index] &+ offset
        }
    }
}
