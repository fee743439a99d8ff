@testable import GameCenterServer

/// Reference model for the differential tests: entries in a sorted array plus a
/// dictionary, with every query answered the obvious (slow) way.
struct NaiveRankModel {
    /// All entries sorted by key.
    private(set) var sorted: [(player: UInt32, key: RankKey)] = []

    /// Player → key.
    private(set) var keys: [UInt32: RankKey] = [:]

    /// Number of entries.
    var count: Int { sorted.count }

    /// Number of entries whose key is smaller than `key`.
    func lowerBound(_ key: RankKey) -> Int {
        var low = 0
        var high = sorted.count
        while low < high {
            let middle = (low + high) / 2
            if sorted[middle].key < key { low = middle + 1 } else { high = middle }
        }
        return low
    }

    /// Inserts or moves `player`; returns the previous key.
    @discardableResult
    mutating func set(player: UInt32, key: RankKey) -> RankKey? {
        let old = remove(player: player)
        sorted.insert((player, key), at: lowerBound(key))
        keys[player] = key
        return old
    }

    /// Removes `player`; returns its key.
    @discardableResult
    mutating func remove(player: UInt32) -> RankKey? {
        guard let old = keys.removeValue(forKey: player) else { return nil }
        sorted.remove(at: lowerBound(old))
        return old
    }

    /// 1-based rank of `player`.
    func rank(of player: UInt32) -> Int? {
        keys[player].map { lowerBound($0) + 1 }
    }

    /// 1 + number of smaller keys.
    func rank(of key: RankKey) -> Int {
        lowerBound(key) + 1
    }

    /// Entries with rank in `ranks`, clipped.
    func entries(in ranks: ClosedRange<Int>) -> [(rank: Int, player: UInt32, key: RankKey)] {
        let lower = max(ranks.lowerBound, 1)
        let upper = min(ranks.upperBound, sorted.count)
        guard lower <= upper else { return [] }
        return (lower...upper).map { (rank: $0, player: sorted[$0 - 1].player, key: sorted[$0 - 1].key) }
    }
}
