import Testing
@testable import GameCenterServer
import NetworkFaultProxy

/// The open-addressing player → key table against `Dictionary`.
@Suite struct PlayerKeyMapTests {
    @Test("random inserts, updates and removals match a Dictionary", arguments: [1, 2, 3, 4] as [UInt64])
    func differential(seed: UInt64) {
        var generator = SplitMix64(seed: seed)
        var map = PlayerKeyMap()
        var model: [UInt32: RankKey] = [:]
        // A small player range forces long probe runs, wrap-around and backward shifts;
        // UInt32.max and its neighbours exercise the reserved marker.
        let range: UInt32 = seed.isMultiple(of: 2) ? 300 : 5_000
        let special: [UInt32] = [.max, .max - 1, 0]
        for step in 0..<20_000 {
            let player =
                generator.next() % 16 == 0
                ? special[Int(generator.next() % 3)]
                : UInt32(generator.next() % UInt64(range))
            let key = RankKey(order: generator.next(), tiebreak: UInt64(step))
            switch generator.next() % 3 {
            case 0, 1:
                if let slot = map.find(player) {
                    #expect(model[player] != nil)
                    map.setKey(key, at: slot)
                } else {
                    #expect(model[player] == nil)
                    map.insertNew(player, key: key)
                }
                model[player] = key
            default:
                let slot = map.find(player)
                #expect((slot != nil) == (model[player] != nil))
                if let slot {
                    #expect(map.key(at: slot) == model[player])
                    map.remove(at: slot)
                    model[player] = nil
                }
            }
            #expect(map.count == model.count)
            if step % 1_000 == 0 {
                for (player, key) in model {
                    #expect(map.key(of: player) == key)
                }
                var seen = 0
                map.forEach { player, key in
                    seen += 1
                    #expect(model[player] == key)
                }
                #expect(seen == model.count)
            }
        }
        for player in special + (0..<range).map({ $0 }) {
            #expect(map.key(of: player) == model[player])
        }
    }

    @Test("grows while keeping every entry, and stays within its load limit")
    func growth() {
        var map = PlayerKeyMap()
        for player in 0..<UInt32(100_000) {
            map.insertNew(player &* 2_654_435_761, key: RankKey(order: UInt64(player), tiebreak: 1))
            #expect(map.count * 100 <= map.capacity * PlayerKeyMap.maximumLoadPercent + 100)
        }
        for player in 0..<UInt32(100_000) {
            #expect(map.key(of: player &* 2_654_435_761)?.order == UInt64(player))
        }
        #expect(map.allocatedBytes >= (map.capacity + 1) * 20 && map.allocatedBytes < (map.capacity + 2) * 20)
        let grownCapacity = map.capacity
        for player in 0..<UInt32(99_000) {
            map.remove(at: map.find(player &* 2_654_435_761)!)
        }
        #expect(map.count == 1_000)
        #expect(map.capacity < grownCapacity / 10, "the table shrinks with its contents")
        for player in UInt32(99_000)..<100_000 {
            #expect(map.key(of: player &* 2_654_435_761)?.order == UInt64(player))
        }
    }
}
