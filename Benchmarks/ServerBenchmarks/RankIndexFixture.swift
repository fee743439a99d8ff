import GameCenterServer
import NetworkFaultProxy

/// A rank index of a million players with random scores, built once per benchmark process, and the updates
/// and queries the benchmarks apply to it (random players, seeded so every run does the same work).
final class RankIndexFixture: @unchecked Sendable {
    // `@unchecked`: ordo-one runs one benchmark at a time on one thread; nothing else touches the fixture.
    /// The one fixture of the process.
    static let shared = RankIndexFixture(entries: 1_000_000)

    private let index: RankIndex
    private let entries: Int
    private var generator = SplitMix64(seed: 1)
    private var tiebreak: UInt64

    private init(entries: Int) {
        self.entries = entries
        var generator = SplitMix64(seed: UInt64(entries))
        index = RankIndex(entries: (0..<entries).map { (UInt32($0), RankKey(order: generator.next() >> 20, tiebreak: UInt64($0))) })
        tiebreak = UInt64(entries)
    }

    /// Gives a random player a new random score.
    func update() -> RankKey? {
        tiebreak += 1
        return index.set(player: randomPlayer(), key: RankKey(order: generator.next() >> 20, tiebreak: tiebreak))
    }

    /// The rank of a random player.
    func rankOfRandomPlayer() -> Int? {
        index.rank(of: randomPlayer())
    }

    /// The 100 entries from a random rank on: one page of a leaderboard.
    func pageAtRandomRank() -> Int {
        let start = Int(generator.next() % UInt64(entries - 100)) + 1
        return index.entries(in: start...(start + 99)).count
    }

    private func randomPlayer() -> UInt32 {
        UInt32(generator.next() % UInt64(entries))
    }
}
