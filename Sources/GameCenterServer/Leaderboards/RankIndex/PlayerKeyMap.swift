#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Open-addressing hash table from player number to `RankKey`, sized for memory:
/// 20 bytes per slot, linear probing, backward-shift deletion (no tombstones).
///
/// A `Dictionary<UInt32, RankKey>` also spends 20 bytes per bucket but keeps power-of-two
/// capacities at most 75 % full, so it costs 27–53 bytes per entry depending on where
/// the size falls (RankIndexBench measured 42.5 B/entry of RSS growth at 1 M players,
/// against 29.5 here). This table allows any capacity, grows by 50 % at 85 % load
/// (23.5–35 B/entry), and, being a plain buffer, adds no copy-on-write checks.
/// Slots are addressed by index; an index stays valid until the next insertion or removal.
struct PlayerKeyMap: ~Copyable {
    /// One 20-byte slot. The key is split into 32-bit halves so the slot needs only 4-byte alignment.
    private struct Slot {
        /// The player, or `emptyMarker`.
        var player: UInt32
        /// Low half of the key's `order`.
        var orderLow: UInt32
        /// High half of the key's `order`.
        var orderHigh: UInt32
        /// Low half of the key's `tiebreak`.
        var tiebreakLow: UInt32
        /// High half of the key's `tiebreak`.
        var tiebreakHigh: UInt32
    }

    /// Marks an empty slot. The player with this number lives in the extra slot at index `capacity`.
    private static let emptyMarker = UInt32.max

    /// Largest fraction of slots in use before the table grows, in percent.
    static let maximumLoadPercent = 85

    /// Percentage by which the slot count grows when the table is full.
    static let growthPercent = 50

    /// Smallest number of ordinary slots.
    static let minimumCapacity = 8

    /// `capacity + 1` slots; the last one holds player `UInt32.max`, which cannot be stored in the probed area.
    private var slots: UnsafeMutablePointer<Slot>

    /// Number of ordinary (probed) slots.
    private(set) var capacity: Int

    /// Number of stored players, including player `UInt32.max`.
    private(set) var count: Int

    /// Whether player `UInt32.max` is stored (in the extra slot).
    private var hasMaxPlayer: Bool

    /// Number of stored players that may live in the probed area before it grows.
    private var growthThreshold: Int

    /// Creates an empty table able to hold `expectedCount` players without growing.
    init(expectedCount: Int = 0) {
        let wanted = (max(expectedCount, 1) * 100 + PlayerKeyMap.maximumLoadPercent - 1) / PlayerKeyMap.maximumLoadPercent
        (self.slots, self.capacity, self.allocatedBytes) = PlayerKeyMap.allocateSlots(
            max(PlayerKeyMap.minimumCapacity, wanted)
        )
        self.count = 0
        self.hasMaxPlayer = false
        self.growthThreshold = PlayerKeyMap.threshold(for: capacity)
    }

    deinit {
        NodeArena.freeMemory(slots, byteCount: allocatedBytes)
    }

    /// Bytes of slot storage owned by the table (whole huge pages once that large).
    private(set) var allocatedBytes: Int

    /// Index of the slot holding `player`, or nil when absent.
    func find(_ player: UInt32) -> Int? {
        if player == PlayerKeyMap.emptyMarker {
            return hasMaxPlayer ? capacity : nil
        }
        var index = homeIndex(of: player)
        while true {
            let stored = slots[index].player
            if stored == player { return index }
            if stored == PlayerKeyMap.emptyMarker { return nil }
            index += 1
            if index == capacity { index = 0 }
        }
    }

    /// The key stored in slot `index` (from `find`).
    func key(at index: Int) -> RankKey {
        let slot = slots[index]
        return RankKey(
            order: UInt64(slot.orderHigh) << 32 | UInt64(slot.orderLow),
            tiebreak: UInt64(slot.tiebreakHigh) << 32 | UInt64(slot.tiebreakLow)
        )
    }

    /// Replaces the key stored in slot `index` (from `find`).
    mutating func setKey(_ key: RankKey, at index: Int) {
        PlayerKeyMap.store(key, into: &slots[index])
    }

    /// The key of `player`, or nil when absent.
    func key(of player: UInt32) -> RankKey? {
        find(player).map { key(at: $0) }
    }

    /// Adds `player`, which must not be present yet.
    mutating func insertNew(_ player: UInt32, key: RankKey) {
        if player == PlayerKeyMap.emptyMarker {
            precondition(!hasMaxPlayer, "player \(player) is already present")
            hasMaxPlayer = true
            PlayerKeyMap.store(key, into: &slots[capacity])
            slots[capacity].player = player
            count += 1
            return
        }
        if count - (hasMaxPlayer ? 1 : 0) >= growthThreshold {
            grow()
        }
        var index = homeIndex(of: player)
        while true {
            let stored = slots[index].player
            if stored == PlayerKeyMap.emptyMarker { break }
            precondition(stored != player, "player \(player) is already present")
            index += 1
            if index == capacity { index = 0 }
        }
        slots[index].player = player
        PlayerKeyMap.store(key, into: &slots[index])
        count += 1
    }

    /// Removes the entry in slot `index` (from `find`). Other slot indices may change, and
    /// the table may shrink.
    mutating func remove(at index: Int) {
        count -= 1
        if index == capacity {
            hasMaxPlayer = false
            slots[capacity].player = PlayerKeyMap.emptyMarker
            return
        }
        // Backward-shift deletion: pull later members of the probe run into the hole
        // unless that would move them before their home slot.
        var hole = index
        var next = index
        while true {
            next += 1
            if next == capacity { next = 0 }
            let player = slots[next].player
            if player == PlayerKeyMap.emptyMarker { break }
            let home = homeIndex(of: player)
            let distanceFromHome = next >= home ? next - home : next + capacity - home
            let distanceFromHole = next >= hole ? next - hole : next + capacity - hole
            if distanceFromHome >= distanceFromHole {
                slots[hole] = slots[next]
                hole = next
            }
        }
        slots[hole].player = PlayerKeyMap.emptyMarker
        // Shrink once below a quarter full, to about 40 % load, but only when that at least
        // halves the bytes (huge-page rounding could otherwise make it a no-op repeated on
        // every removal): memory follows the size down and resizes stay amortized O(1).
        if count * 4 < capacity {
            let target = max(PlayerKeyMap.minimumCapacity, count * 5 / 2)
            if (target + 1) * MemoryLayout<Slot>.stride * 2 <= allocatedBytes {
                resize(minimumCapacity: target)
            }
        }
    }

    /// Calls `body` with every stored (player, key) pair, in no particular order.
    func forEach(_ body: (UInt32, RankKey) -> Void) {
        for index in 0..<capacity where slots[index].player != PlayerKeyMap.emptyMarker {
            body(slots[index].player, key(at: index))
        }
        if hasMaxPlayer {
            body(PlayerKeyMap.emptyMarker, key(at: capacity))
        }
    }

    /// Probe start for `player`: Fibonacci hashing, then a multiply-shift range reduction
    /// so the capacity need not be a power of two.
    private func homeIndex(of player: UInt32) -> Int {
        let hash = UInt64(player) &* 0x9E37_79B9_7F4A_7C15
        return Int(truncatingIfNeeded: hash.multipliedFullWidth(by: UInt64(capacity)).high)
    }

    private mutating func grow() {
        resize(minimumCapacity: capacity + (capacity * PlayerKeyMap.growthPercent + 99) / 100)
    }

    /// Rehashes into a table of at least `minimumCapacity` slots.
    private mutating func resize(minimumCapacity: Int) {
        let oldSlots = slots
        let oldCapacity = capacity
        let oldBytes = allocatedBytes
        (slots, capacity, allocatedBytes) = PlayerKeyMap.allocateSlots(minimumCapacity)
        growthThreshold = PlayerKeyMap.threshold(for: capacity)
        for oldIndex in 0..<oldCapacity {
            let player = oldSlots[oldIndex].player
            if player == PlayerKeyMap.emptyMarker { continue }
            var index = homeIndex(of: player)
            while slots[index].player != PlayerKeyMap.emptyMarker {
                index += 1
                if index == capacity { index = 0 }
            }
            slots[index] = oldSlots[oldIndex]
        }
        slots[capacity] = oldSlots[oldCapacity]
        NodeArena.freeMemory(oldSlots, byteCount: oldBytes)
    }

    /// Allocates empty slots for at least `minimumCapacity` players; returns the slots,
    /// the capacity actually provided and the bytes allocated.
    private static func allocateSlots(
        _ minimumCapacity: Int
    ) -> (slots: UnsafeMutablePointer<Slot>, capacity: Int, byteCount: Int) {
        // Huge pages (for large tables) make the one random access per lookup cheaper.
        let memory = NodeArena.allocateMemory(byteCount: (minimumCapacity + 1) * MemoryLayout<Slot>.stride)
        // Whole huge pages are allocated anyway; the slack becomes extra slots.
        let capacity = memory.byteCount / MemoryLayout<Slot>.stride - 1
        let slots = memory.base.bindMemory(to: Slot.self, capacity: capacity + 1)
        let empty = Slot(player: emptyMarker, orderLow: 0, orderHigh: 0, tiebreakLow: 0, tiebreakHigh: 0)
        slots.initialize(repeating: empty, count: capacity + 1)
        return (slots, capacity, memory.byteCount)
    }

    private static func threshold(for capacity: Int) -> Int {
        // Keep at least one empty slot so every probe loop terminates.
        min(capacity - 1, capacity * maximumLoadPercent / 100)
    }

    private static func store(_ key: RankKey, into slot: inout Slot) {
        slot.orderLow = UInt32(truncatingIfNeeded: key.order)
        slot.orderHigh = UInt32(truncatingIfNeeded: key.order >> 32)
        slot.tiebreakLow = UInt32(truncatingIfNeeded: key.tiebreak)
        slot.tiebreakHigh = UInt32(truncatingIfNeeded: key.tiebreak >> 32)
    }
}
