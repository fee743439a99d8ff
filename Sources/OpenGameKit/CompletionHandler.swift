import Foundation

/// The completion-handler forms of the SDK's async calls, as the seed's listings use them: each starts its work in a
/// task and calls back exactly once, from that task.
enum CompletionHandler {
    /// Calls `handler` with what `work` returns and no error; when it throws, with the partial result a ``GKError``
    /// carries (``GKError/partialResult(as:)``, often nil) and the error.
    static func run<Result: Sendable>(
        _ handler: @escaping @Sendable (Result?, (any Error)?) -> Void, _ work: @escaping @Sendable () async throws -> Result
    ) {
        Task {
            let outcome: (Result?, (any Error)?)
            do {
                outcome = (try await work(), nil)
            } catch let error as GKError {
                outcome = (error.partialResult(as: Result.self), error)
            } catch {
                outcome = (nil, error)
            }
            handler(outcome.0, outcome.1)
        }
    }

    /// Calls `handler` with nil when `work` succeeds, else with its error.
    static func run(_ handler: @escaping @Sendable ((any Error)?) -> Void, _ work: @escaping @Sendable () async throws -> Void) {
        Task {
            let failure: (any Error)?
            do {
                try await work()
                failure = nil
            } catch {
                failure = error
            }
            handler(failure)
        }
    }

    /// Calls `handler` once `work` has finished.
    static func run(_ handler: @escaping @Sendable () -> Void, _ work: @escaping @Sendable () async -> Void) {
        Task {
            await work()
            handler()
        }
    }
}
