import HeapModule

/// Fill deadlines of waiting lobbies in a min-heap with lazy deletion; the heap's top is kept
/// current so `next` is exact in O(1).
struct DeadlineSchedule: Sendable {
    /// A heap entry; stale once its lobby's deadline was cleared or replaced.
    private struct Entry: Comparable, Sendable {
        let deadline: Int64
        let lobby: LobbyID
        let stamp: UInt64

        static func < (lhs: Entry, rhs: Entry) -> Bool {
            (lhs.deadline, lhs.lobby) < (rhs.deadline, rhs.lobby)
        }
    }

    private var heap = Heap<Entry>()
    private var current: [LobbyID: Entry] = [:]
    private var nextStamp: UInt64 = 0

    /// The earliest deadline, if any.
    var next: Int64? { heap.min?.deadline }

    /// Heap entries held, stale ones included (for tests of cleanup).
    var entryCount: Int { heap.count }

    /// Sets (or, with nil, clears) the deadline of `lobby`; a no-op when unchanged.
    mutating func set(_ lobby: LobbyID, deadline: Int64?) {
        guard current[lobby]?.deadline != deadline else { return }
        if let deadline {
            nextStamp += 1
            let entry = Entry(deadline: deadline, lobby: lobby, stamp: nextStamp)
            current[lobby] = entry
            heap.insert(entry)
        } else {
            current[lobby] = nil
        }
        if heap.count > 2 * current.count + 16 {
            heap = Heap(heap.unordered.filter(isCurrent))
        }
        dropStaleTop()
    }

    /// Removes and returns the earliest lobby whose deadline is at or before `now`.
    mutating func popDue(now: Int64) -> LobbyID? {
        guard let top = heap.min, top.deadline <= now else { return nil }
        heap.removeMin()
        current[top.lobby] = nil
        dropStaleTop()
        return top.lobby
    }

    private func isCurrent(_ entry: Entry) -> Bool { current[entry.lobby]?.stamp == entry.stamp }

    private mutating func dropStaleTop() {
        while let top = heap.min, !isCurrent(top) { heap.removeMin() }
    }
}
