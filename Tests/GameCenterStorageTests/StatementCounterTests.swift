import Synchronization
import Testing
@testable import GameCenterStorage

@Suite struct StatementCounterTests {
    /// The duration observer is called once per statement, however many statements ran before. It was kept directly
    /// in a `Mutex`, and each read wrapped it in two more thunks that stayed: the 100,000th call went through 200,000
    /// of them (a third of the server's CPU under load); the old code did not finish these calls in two minutes.
    @Test(.timeLimit(.minutes(1))) func theObserverIsCalledOncePerStatementAfterAHundredThousand() async throws {
        let counter = StatementCounter()
        let calls = Atomic<Int>(0)
        counter.observeDurations { _ in calls.add(1, ordering: .relaxed) }
        // On a task's thread (a small stack), where a chain of thunks overflows first.
        await Task.detached {
            for _ in 0..<100_000 { counter.finished(since: .now) }
        }.value
        #expect(calls.load(ordering: .relaxed) == 100_000)
    }
}
