import Synchronization

/// Small numbers for player ids, so that rank indexes store 4 bytes per player instead of a string.
///
/// Numbers are handed out on first sight and never reused while the server runs; they are not stored. A server
/// start numbers every player of every board (a million at once), so the table is built for that: hashes are
/// computed before the lock is taken, and an open-addressing table keeps a hash tag next to each number so that a
/// probe compares strings only when the tags match.
final class PlayerNumbers: Sendable {
    private let table = Mutex(Table())

    /// A player id with its hash, worked out where the id was read (a storage scan's thread) rather than under the
    /// table's lock.
    struct Key: Sendable {
        let playerID: String
        fileprivate let hash: UInt32

        init(_ playerID: String) {
            self.playerID = playerID
            self.hash = PlayerNumbers.hash(playerID)
        }
    }

    /// The number of `playerID`, assigned now if it has none.
    func number(for playerID: String) -> UInt32 {
        let hash = Self.hash(playerID)
        return table.withLock { $0.number(for: playerID, hash: hash) }
    }

    /// The numbers of `playerIDs`, in order, assigned now where missing: one lock for a whole board's players.
    func numbers(for keys: [Key]) -> [UInt32] {
        table.withLock { table in
            table.reserve(table.ids.count + keys.count)
            return keys.map { table.number(for: $0.playerID, hash: $0.hash) }
        }
    }

    /// The number of `playerID` when it has one.
    func existingNumber(for playerID: String) -> UInt32? {
        let hash = Self.hash(playerID)
        return table.withLock { $0.existingNumber(for: playerID, hash: hash) }
    }

    /// The player id behind a number handed out by ``number(for:)``.
    func playerID(for number: UInt32) -> String {
        table.withLock { $0.ids[Int(number)] }
    }

    /// Swift's seeded string hash (random per process), cut to the 32 bits a slot keeps.
    private static func hash(_ playerID: String) -> UInt32 {
        UInt32(truncatingIfNeeded: playerID.hashValue)
    }

    /// Linear probing over a power-of-two number of slots, at most half full.
    private struct Table {
        /// A slot: the player's hash and number; `number == .max` marks an empty slot.
        struct Slot {
            var hash: UInt32
            var number: UInt32
            static let empty = Slot(hash: 0, number: .max)
        }

        private(set) var ids: [String] = []
        private var slots = [Slot](repeating: .empty, count: 1024)

        mutating func number(for playerID: String, hash: UInt32) -> UInt32 {
            let mask = slots.count - 1
            var index = Int(hash) & mask
            while true {
                let slot = slots[index]
                if slot.number == .max { break }
                if slot.hash == hash, ids[Int(slot.number)] == playerID { return slot.number }
                index = (index + 1) & mask
            }
            let number = UInt32(ids.count)
            precondition(number < .max, "too many players")
            ids.append(playerID)
            slots[index] = Slot(hash: hash, number: number)
            if ids.count * 2 > slots.count { reserve(ids.count) }
            return number
        }

        func existingNumber(for playerID: String, hash: UInt32) -> UInt32? {
            let mask = slots.count - 1
            var index = Int(hash) & mask
            while true {
                let slot = slots[index]
                if slot.number == .max { return nil }
                if slot.hash == hash, ids[Int(slot.number)] == playerID { return slot.number }
                index = (index + 1) & mask
            }
        }

        /// Makes room for `count` players without growing again.
        mutating func reserve(_ count: Int) {
            var capacity = slots.count
            while count * 2 > capacity { capacity *= 2 }
            ids.reserveCapacity(count)
            guard capacity > slots.count else { return }
            var grown = [Slot](repeating: .empty, count: capacity)
            let mask = capacity - 1
            for slot in slots where slot.number != .max {
                var index = Int(slot.hash) & mask
                while grown[index].number != .max { index = (index + 1) & mask }
                grown[index] = slot
            }
            slots = grown
        }
    }
}
