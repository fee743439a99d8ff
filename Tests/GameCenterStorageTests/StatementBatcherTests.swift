import Synchronization
import Testing

@testable import GameCenterStorage

/// Group commit across requests, without a database: who travels in which batch, and who gets which answer.
@Suite struct StatementBatcherTests {
    /// A request of one player (`key`), numbered.
    struct Request: Sendable, Equatable {
        var key: String
        var n: Int
    }

    /// Holds the first batch until opened, so that the next requests queue behind it.
    final class Gate: Sendable {
        private let state = Mutex<(open: Bool, waiters: [CheckedContinuation<Void, Never>])>((false, []))

        func wait() async {
            await withCheckedContinuation { continuation in
                let resume = state.withLock { state in
                    if state.open { return true }
                    state.waiters.append(continuation)
                    return false
                }
                if resume { continuation.resume() }
            }
        }

        func open() {
            for waiter in state.withLock({ state in
                state.open = true
                defer { state.waiters = [] }
                return state.waiters
            }) {
                waiter.resume()
            }
        }
    }

    /// A batcher of one slot whose first batch waits for `gate`; it answers each request with its number times ten and
    /// notes every batch.
    func batcher(gate: Gate, batches: Shared<[[Request]]>) -> StatementBatcher<Request, Int> {
        StatementBatcher(configuration: .init(maximumInFlight: 1, maximumBatch: 64), key: \.key) { requests in
            let first = batches.withLock { batches in
                batches.append(requests)
                return batches.count == 1
            }
            if first { await gate.wait() }
            return requests.map { .success($0.n * 10) }
        }
    }

    func waitUntil(_ condition: () -> Bool) async {
        while !condition() { await Task.yield() }
    }

    @Test func requestsThatArriveWhileABatchRunsLeaveTogetherAndEachGetsItsOwnAnswer() async throws {
        let gate = Gate()
        let batches = Shared<[[Request]]>([])
        let batcher = batcher(gate: gate, batches: batches)
        try await withThrowingTaskGroup(of: (Int, Int).self) { group in
            group.addTask { (0, try await batcher.submit(Request(key: "p0", n: 0))) }
            await waitUntil { batches.withLock { $0.count } == 1 }
            for n in 1...8 {
                group.addTask { (n, try await batcher.submit(Request(key: "p\(n)", n: n))) }
            }
            await waitUntil { batcher.waiting == 8 }
            gate.open()
            for try await (n, answer) in group {
                #expect(answer == n * 10)
            }
        }
        let sent = batches.withLock { $0 }
        #expect(sent.count == 2)
        #expect(sent.first == [Request(key: "p0", n: 0)])
        #expect(Set(sent.last?.map(\.n) ?? []) == Set(1...8))
    }

    @Test func aBatchHoldsOneRequestPerKey() async throws {
        let gate = Gate()
        let batches = Shared<[[Request]]>([])
        let batcher = batcher(gate: gate, batches: batches)
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { _ = try await batcher.submit(Request(key: "a", n: 0)) }
            await waitUntil { batches.withLock { $0.count } == 1 }
            // In this order: a second request of "a" waits for the batch after the one that takes the first.
            for (count, request) in [Request(key: "a", n: 1), Request(key: "a", n: 2), Request(key: "b", n: 3)].enumerated() {
                group.addTask { _ = try await batcher.submit(request) }
                await waitUntil { batcher.waiting == count + 1 }
            }
            gate.open()
            try await group.waitForAll()
        }
        #expect(batches.withLock { $0 }.map { $0.map(\.n) } == [[0], [1, 3], [2]])
    }

    struct Refused: Error {}

    @Test func whenABatchFailsForItsContentEachRequestIsSentAgainAloneAndOnlyTheOneAtFaultFails() async {
        let attempts = Shared<[[Int]]>([])
        let run: StatementBatcher<Int, Int>.Run = ReportBatchers.retryingAlone { requests in
            attempts.withLock { $0.append(requests) }
            if requests.contains(3) { throw Refused() }
            return requests.map { $0 * 10 }
        }
        let results = await run([1, 2, 3, 4])
        #expect(results.map { try? $0.get() } == [10, 20, nil, 40])
        #expect(attempts.withLock { $0 } == [[1, 2, 3, 4], [1], [2], [3], [4]])
    }

    @Test func whenTheDatabaseIsUnavailableEveryRequestFailsAndNoneIsSentAgain() async {
        let attempts = Shared(0)
        let run: StatementBatcher<Int, Int>.Run = ReportBatchers.retryingAlone { _ in
            attempts.withLock { $0 += 1 }
            throw StorageError.unavailable("stopped")
        }
        let results = await run([1, 2, 3])
        #expect(results.allSatisfy { if case .failure(let error as StorageError) = $0 { error.isUnavailable } else { false } })
        #expect(attempts.withLock { $0 } == 1)
    }

    @Test func whenTheDatabaseIsUnreachableTheRequestsWaitingFailAtOnceWithTheBatch() async throws {
        let gate = Gate()
        let batches = Shared<[[Request]]>([])
        let batcher = StatementBatcher<Request, Int>(
            configuration: .init(maximumInFlight: 1, maximumBatch: 64), key: \.key, failsTheWaiting: ReportBatchers.meansUnavailable
        ) { requests in
            batches.withLock { $0.append(requests) }
            await gate.wait()
            return requests.map { _ in .failure(StorageError.unavailable("stopped")) }
        }
        let outcomes = await withTaskGroup(of: Bool.self) { group in
            group.addTask { (try? await batcher.submit(Request(key: "p0", n: 0))) == nil }
            await waitUntil { batches.withLock { $0.count } == 1 }
            for n in 1...4 {
                group.addTask { (try? await batcher.submit(Request(key: "p\(n)", n: n))) == nil }
            }
            await waitUntil { batcher.waiting == 4 }
            gate.open()
            return await group.reduce(into: []) { $0.append($1) }
        }
        #expect(outcomes == Array(repeating: true, count: 5))
        // The waiting requests were not sent: they failed with the batch that found the database unreachable.
        #expect(batches.withLock { $0.count } == 1)
        #expect(batcher.waiting == 0)
    }
}
