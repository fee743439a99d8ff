import Testing
@testable import GameCenterServer

/// The ids a node following rows other nodes append has seen: gaps become holes looked for again, filled holes go,
/// old holes expire, and the holes stay bounded.
@Suite struct FollowedIDsTests {
    @Test func gapsBecomeHolesUntilFilledOrExpired() {
        let start = ContinuousClock.now
        var seen = FollowedIDs(after: 10)
        seen.read([11, 12, 15, 16, 19], at: start)
        #expect(seen.cursor == 19)
        #expect(Set(seen.holes.keys) == [13, 14, 17, 18])
        // Ids at or below the cursor read again (a batch that overlapped) change nothing.
        seen.read([12, 19], at: start)
        #expect(seen.cursor == 19 && seen.holes.count == 4)

        seen.filled([14, 17])
        #expect(Set(seen.holes.keys) == [13, 18])
        seen.read([21], at: start + .seconds(5))
        seen.expire(at: start + FollowedIDs.holeLifetime)
        #expect(Set(seen.holes.keys) == [20], "the holes first missed 10 s ago expired; the newer one stays")
        seen.expire(at: start + .seconds(5) + FollowedIDs.holeLifetime)
        #expect(seen.holes.isEmpty)
    }

    @Test func holesAreBoundedKeepingTheNewest() {
        let now = ContinuousClock.now
        var seen = FollowedIDs(after: 0)
        // A huge jump (a sequence that skipped ahead): only the ids just below the new cursor can still fill.
        seen.read([5_000_000], at: now)
        #expect(seen.cursor == 5_000_000)
        #expect(seen.holes.count == FollowedIDs.maximumHoles)
        #expect(seen.holes.keys.min() == 5_000_000 - Int64(FollowedIDs.maximumHoles))
        // Many small gaps: the oldest holes go first.
        seen.read(Array(stride(from: 5_000_002, through: 5_030_000, by: 2)), at: now)
        #expect(seen.holes.count == FollowedIDs.maximumHoles)
        #expect(seen.holes.keys.min()! > 5_000_000)
        #expect(seen.holes[5_029_999] != nil)
    }
}
