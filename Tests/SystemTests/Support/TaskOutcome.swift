import Foundation
import NetworkFaultProxy

/// The result of a task once it has one, kept by a task that awaits it: lets a test wait for an unstructured task
/// with a deadline (a test's time limit cannot interrupt `await task.value`).
final class TaskOutcome<Success: Sendable, Failure: Error>: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: Result<Success, Failure>?

    /// Starts awaiting `task`.
    init(of task: Task<Success, Failure>) {
        Task { [self] in
            let result = await task.result
            lock.withLock { stored = result }
        }
    }

    /// The task's result, or nil while it runs.
    var result: Result<Success, Failure>? { lock.withLock { stored } }
}

/// The value of `task` (or the error it threw). When it is still running after `timeout`, cancels it and throws
/// `WaitTimeout` naming `what`: the live tests' match requests run in unstructured tasks, which a test's time limit
/// cannot interrupt, so a request that never ends would hold the whole test run.
func value<Success: Sendable, Failure: Error>(
    of task: Task<Success, Failure>, _ what: String, within timeout: Duration = .seconds(30)
) async throws -> Success {
    let outcome = TaskOutcome(of: task)
    do {
        try await waitUntil(what, within: timeout) { outcome.result != nil }
    } catch {
        task.cancel()
        throw error
    }
    return try outcome.result!.get()
}

/// Whether `task` is still running after `period`: for a request that must NOT end, where nothing tells when it no
/// longer could (`reason` says why; see `quietPeriod`).
func isStillRunning<Success: Sendable, Failure: Error>(
    _ task: Task<Success, Failure>, after period: Duration, because reason: String
) async throws -> Bool {
    let outcome = TaskOutcome(of: task)
    try await quietPeriod(period, because: reason)
    return outcome.result == nil
}
