/// Sort position of a leaderboard entry: smaller keys sort first (rank 1).
///
/// Keys are compared by `order`, then by `tiebreak`. A `RankKey` is unique per
/// entry because `tiebreak` is the report sequence number, which is never reused.
package struct RankKey: Comparable, Hashable, Sendable {
    /// The score mapped so that better scores are smaller (see `order(value:higherIsBetter:)`).
    package var order: UInt64
    /// Report sequence number: the earlier report ranks first among equal scores.
    package var tiebreak: UInt64

    /// Creates a key from an already mapped `order` and a `tiebreak`.
    package init(order: UInt64, tiebreak: UInt64) {
        self.order = order
        self.tiebreak = tiebreak
    }

    /// Creates a key from a raw score, mapping it with `order(value:higherIsBetter:)`.
    init(value: Int64, higherIsBetter: Bool, tiebreak: UInt64) {
        self.order = RankKey.order(value: value, higherIsBetter: higherIsBetter)
        self.tiebreak = tiebreak
    }

    /// Maps a 64-bit score to `order` so that better scores get smaller orders.
    ///
    /// For descending leaderboards (`higherIsBetter`) `Int64.max` maps to 0 and
    /// `Int64.min` to `UInt64.max`; for ascending ones it is the other way round.
    /// The mapping is a bijection and strictly monotonic over the whole `Int64` range.
    static func order(value: Int64, higherIsBetter: Bool) -> UInt64 {
        // Flipping the sign bit turns two's complement order into unsigned order.
        let ascending = UInt64(bitPattern: value) ^ (1 << 63)
        return higherIsBetter ? ~ascending : ascending
    }

    /// The inverse of `order(value:higherIsBetter:)`.
    static func value(order: UInt64, higherIsBetter: Bool) -> Int64 {
        let ascending = higherIsBetter ? ~order : order
        return Int64(bitPattern: ascending ^ (1 << 63))
    }

    /// The score this key was made from, given the leaderboard's direction.
    func value(higherIsBetter: Bool) -> Int64 {
        RankKey.value(order: order, higherIsBetter: higherIsBetter)
    }

    /// Lexicographic order on (`order`, `tiebreak`).
    package static func < (lhs: RankKey, rhs: RankKey) -> Bool {
        lhs.order < rhs.order || (lhs.order == rhs.order && lhs.tiebreak < rhs.tiebreak)
    }
}
