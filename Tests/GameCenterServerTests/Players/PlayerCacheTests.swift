import GameCenterStorage
import Testing
@testable import GameCenterServer

/// The player cache's rules: entries age out, changes drop what they touch, and a read that overlapped a change is
/// not kept (it may hold what was there before the change).
@Suite struct PlayerCacheTests {
    static func player(_ id: String, alias: String) -> PlayerRecord {
        PlayerRecord(playerID: id, environment: "sandbox", accountName: id, passwordHash: "", alias: alias, underage: false, createdAt: 0)
    }

    @Test func readsAreKeptUntilTheyAgeOut() {
        let cache = PlayerCache()
        let lookup = cache.lookup(["a", "b"], viewer: "v", now: 1_000)
        #expect(lookup.missingPlayers == ["a", "b"] && lookup.friends == nil)
        var read = PlayerCache.Read()
        read.players = [Self.player("a", alias: "A")]
        read.friends = ("v", ["a"])
        read.playedGames = ["a": [PlayedGameRecord(bundleID: "g", lastPlayedAt: 5)]]
        cache.store(read, readSince: lookup.generation, now: 1_000)

        let again = cache.lookup(["a", "b"], viewer: "v", now: 1_000 + PlayerCache.timeToLive - 1)
        #expect(again.players["a"]?.alias == "A")
        #expect(again.missingPlayers == ["b"], "a player storage did not return is read again")
        #expect(again.friends == ["a"])
        #expect(cache.playedGames(["a"], now: 1_100).found["a"]?.first?.bundleID == "g")

        let later = cache.lookup(["a"], viewer: "v", now: 1_000 + PlayerCache.timeToLive)
        #expect(later.missingPlayers == ["a"] && later.friends == nil)
        #expect(cache.playedGames(["a"], now: 1_000 + PlayerCache.timeToLive).missing == ["a"])
    }

    @Test func changesDropWhatTheyTouch() {
        let cache = PlayerCache()
        var read = PlayerCache.Read()
        read.players = [Self.player("a", alias: "A"), Self.player("b", alias: "B")]
        read.friends = ("a", ["b"])
        read.playedGames = ["a": [], "b": []]
        cache.store(read, readSince: cache.lookup([], viewer: "x", now: 0).generation, now: 0)

        cache.playerChanged("a")
        let afterRename = cache.lookup(["a", "b"], viewer: "a", now: 1)
        #expect(afterRename.missingPlayers == ["a"])
        #expect(afterRename.friends == ["b"])
        #expect(cache.playedGames(["a", "b"], now: 1).missing == ["a"])

        cache.friendshipChanged("b", "a")
        #expect(cache.lookup([], viewer: "a", now: 1).friends == nil)
    }

    @Test func aReadThatOverlappedAChangeIsNotKept() {
        let cache = PlayerCache()
        let lookup = cache.lookup(["a"], viewer: "v", now: 0)
        // The read runs; meanwhile the player renames themselves (through this node).
        cache.playerChanged("a")
        var stale = PlayerCache.Read()
        stale.players = [Self.player("a", alias: "Old name")]
        cache.store(stale, readSince: lookup.generation, now: 0)
        #expect(cache.lookup(["a"], viewer: "v", now: 1).missingPlayers == ["a"])
    }
}
