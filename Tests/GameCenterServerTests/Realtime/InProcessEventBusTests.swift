import Synchronization
import Testing

@testable import GameCenterServer

@Suite struct InProcessEventBusTests {
    /// What one subscriber was told.
    final class Inbox: Sendable {
        private let notices = Mutex<[BusNotice]>([])
        func take(_ notice: BusNotice) { notices.withLock { $0.append(notice) } }
        var all: [BusNotice] { notices.withLock { $0 } }
    }

    @Test func noticesReachTheirPlayersAndSessionsOnly() {
        let bus = InProcessEventBus()
        let alice = Inbox(), aliceOtherDevice = Inbox(), bob = Inbox()
        let subscriptions = [
            bus.subscribe(playerID: "alice", sessionID: "s1", deliver: alice.take),
            bus.subscribe(playerID: "alice", sessionID: "s2", deliver: aliceOtherDevice.take),
            bus.subscribe(playerID: "bob", sessionID: "s3", deliver: bob.take),
        ]
        bus.publish(.playerEvents(playerID: "alice"))
        bus.publish(.sessionEnded(sessionID: "s2", reason: "signed out"))
        bus.publish(.playerEvents(playerID: "carol"))
        #expect(alice.all == [.playerEvents(playerID: "alice")])
        #expect(aliceOtherDevice.all == [.playerEvents(playerID: "alice"), .sessionEnded(sessionID: "s2", reason: "signed out")])
        #expect(bob.all.isEmpty)
        bus.wakeEveryone()
        #expect(bob.all == [.playerEvents(playerID: "bob")] && alice.all.count == 2)
        _ = subscriptions
    }

    @Test func aCancelledOrDroppedSubscriptionHearsNothingMore() {
        let bus = InProcessEventBus()
        let cancelled = Inbox(), dropped = Inbox(), kept = Inbox()
        let first = bus.subscribe(playerID: "p", sessionID: "s1", deliver: cancelled.take)
        var second: BusSubscription? = bus.subscribe(playerID: "p", sessionID: "s2", deliver: dropped.take)
        let third = bus.subscribe(playerID: "p", sessionID: "s3", deliver: kept.take)
        bus.publish(.playerEvents(playerID: "p"))
        first.cancel()
        first.cancel()
        second = nil
        bus.publish(.playerEvents(playerID: "p"))
        bus.publish(.sessionEnded(sessionID: "s2", reason: "revoked"))
        #expect(cancelled.all.count == 1 && dropped.all.count == 1 && kept.all.count == 2)
        _ = (second, third)
    }
}
