import Testing

@testable import GameCenterServer

/// The write watch the heartbeat beat reads to close a channel whose write cannot finish.
@Suite struct WriteWatchTests {
    @Test func onlyAWriteWaitingLongerThanTheTimeoutIsOverdue() async throws {
        let watch = WriteWatch()
        #expect(!watch.isOverdue(.zero), "no write in progress")
        watch.begin()
        #expect(!watch.isOverdue(.seconds(60)), "a write just begun")
        try await Task.sleep(for: .milliseconds(20))
        #expect(watch.isOverdue(.milliseconds(10)), "a write waiting 20 ms against a 10 ms timeout")
        watch.end()
        #expect(!watch.isOverdue(.zero), "the write ended")
    }

}
