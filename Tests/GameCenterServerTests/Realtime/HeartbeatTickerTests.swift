import Synchronization
import Testing

@testable import GameCenterServer

@Suite struct HeartbeatTickerTests {
    /// Counts each member's beats.
    final class Beats: Sendable {
        private let counts = Mutex<[Int: Int]>([:])
        func beat(_ member: Int) { counts.withLock { $0[member, default: 0] += 1 } }
        subscript(member: Int) -> Int { counts.withLock { $0[member] ?? 0 } }
        var total: Int { counts.withLock { $0.values.reduce(0, +) } }
    }

    @Test func everyMemberBeatsOncePerIntervalSpreadOverTheSlots() {
        let ticker = HeartbeatTicker(interval: .seconds(5), slots: 4)
        let beats = Beats()
        let members = (0..<10).map { member in ticker.join { beats.beat(member) } }
        // One slot: only the members that joined it beat, about a quarter of them, not everyone at once.
        ticker.beatNextSlot()
        #expect(beats.total >= 2 && beats.total <= 3, "one slot of four beat \(beats.total) of 10 members")
        // A whole interval (four slots): everyone exactly once.
        for _ in 1..<4 { ticker.beatNextSlot() }
        #expect((0..<10).allSatisfy { beats[$0] == 1 }, "\((0..<10).map { beats[$0] })")
        // Two more intervals: twice more each.
        for _ in 0..<8 { ticker.beatNextSlot() }
        #expect((0..<10).allSatisfy { beats[$0] == 3 })
        _ = members
    }

    @Test func aMemberThatLeftBeatsNoMore() {
        let ticker = HeartbeatTicker(interval: .seconds(1), slots: 3)
        let beats = Beats()
        let stays = ticker.join { beats.beat(0) }
        let leaves = ticker.join { beats.beat(1) }
        for _ in 0..<3 { ticker.beatNextSlot() }
        ticker.leave(leaves)
        for _ in 0..<6 { ticker.beatNextSlot() }
        #expect(beats[0] == 3 && beats[1] == 1, "stayed: \(beats[0]), left after one interval: \(beats[1])")
        _ = stays
    }
}
