import GameCenterProtocol
import NIOCore
import PostgresNIO
import SQLKit
import Synchronization

extension Database {
    /// How long work waits for a PostgreSQL connection, while no other work gets one either, before the database
    /// counts as unavailable; and how long work holds a connection, while the database answers nothing, before the
    /// same.
    ///
    /// Without it, work waited as long as the pool kept trying to connect to a stopped server: 30 to 67 s. Work that
    /// waits because the pool is busy (others got connections meanwhile) waits on, and work on a long statement runs on
    /// while the database answers others (or the watchdog's own question: see ``ConnectionWatchdog``).
    public static let connectionWait = Duration.seconds(5)

    /// The longest work holds a PostgreSQL connection, whatever the database answers meanwhile: a connection that
    /// went silent alone (its peer gone without a word, the others answering) is given up then. Migrations are not
    /// bound (an index built on a large table may take longer).
    public static let holdLimit = Duration.seconds(30)

    /// Whether the database answers a trivial query within `limit`; throws `StorageError.unavailable` if not. Returns
    /// at `limit` even when the query never ends: the query is left to the watchdog (see ``ConnectionWatchdog``).
    public func checkReady(within limit: Duration = .seconds(2)) async throws {
        let answer = Outcome<Void>()
        let query = Task {
            do {
                try await self.read { try await $0.sql.raw("SELECT 1").run() }
                answer.settle(.success(()))
            } catch {
                answer.settle(.failure(error))
            }
        }
        let timer = Task {
            guard (try? await Task.sleep(for: limit)) != nil else { return }
            answer.settle(.failure(StorageError.unavailable("no answer within \(limit)")))
        }
        defer {
            timer.cancel()
            query.cancel()
        }
        try await answer.value
    }

    /// Runs `body` on a pooled connection, or throws `StorageError.unavailable` when none comes within
    /// ``connectionWait`` (while no other work gets one), when the database answers nothing for ``connectionWait``
    /// while `body` holds the connection, when `body` holds it longer than `limit` (nil: no limit), or when the
    /// connection fails the way a stopped or unreachable server makes it fail. The watchdog (``ConnectionWatchdog``)
    /// gives up on the work: the caller is answered at once and the connection closed (a query it waits for fails),
    /// so that the pool never hands it out again. Cancelling the caller cancels the work.
    static func whileAvailable<T: Sendable>(
        _ client: PostgresClient, watchdog: ConnectionWatchdog, holdingAtMost limit: Duration? = holdLimit,
        _ body: @escaping @Sendable (PostgresConnection) async throws -> T
    ) async throws -> T {
        let work = PooledWork(limit: limit)
        let outcome = Outcome<T>()
        // A task of its own, so that the watchdog can give up on the work without waiting for it.
        let task = Task {
            do {
                let value = try await client.withConnection { connection in
                    guard work.acquire(connection) else {
                        throw StorageError.unavailable("no connection to PostgreSQL within \(connectionWait)")
                    }
                    watchdog.lastConnection.record()
                    let value = try await body(connection)
                    watchdog.lastAnswer.record()
                    return value
                }
                outcome.settle(.success(value))
            } catch let error as PSQLError where Self.meansUnavailable(error) {
                outcome.settle(.failure(StorageError.unavailable(String(describing: error.code))))
            } catch {
                outcome.settle(.failure(error))
            }
        }
        let key = watchdog.register(work) { reason in
            outcome.settle(.failure(StorageError.unavailable(reason)))
            task.cancel()
        }
        defer { watchdog.unregister(key) }
        return try await withTaskCancellationHandler {
            try await outcome.value
        } onCancel: {
            task.cancel()
        }
    }

    /// Errors a stopped, restarting or unreachable server causes (rather than the work itself).
    static func meansUnavailable(_ error: PSQLError) -> Bool {
        switch error.code {
        case .connectionError, .serverClosedConnection, .clientClosedConnection, .uncleanShutdown, .poolClosed:
            return true
        case .server:
            // Class 08: connection exceptions; 57P01–57P03: the server is shutting down or starting.
            let state = error.serverInfo?[.sqlState] ?? ""
            return state.hasPrefix("08") || state.hasPrefix("57P")
        default:
            return false
        }
    }
}

extension PostgresConnection: HeldConnection {
    /// Closes the connection without waiting for the server: the query it runs fails at once, and the pool drops it.
    func closeAtOnce() {
        let closed: EventLoopFuture<Void> = close()
        closed.whenComplete { _ in }
    }
}

/// The result of work that one of several parties settles: the work itself, or whoever gives up on it first (the
/// watchdog, a timer). The first settlement counts; the later ones are ignored. Awaited once.
final class Outcome<Value: Sendable>: Sendable {
    private enum State {
        case pending
        case awaited(CheckedContinuation<Value, any Error>)
        case settled(Result<Value, any Error>)
        case delivered
    }

    private let state = Mutex<State>(.pending)

    /// Settles the outcome with `result`, unless it was settled before.
    func settle(_ result: Result<Value, any Error>) {
        let waiting: CheckedContinuation<Value, any Error>? = state.withLock { state in
            switch state {
            case .pending:
                state = .settled(result)
                return nil
            case .awaited(let continuation):
                state = .delivered
                return continuation
            case .settled, .delivered:
                return nil
            }
        }
        waiting?.resume(with: result)
    }

    /// The first settlement's value, or its error; waits for it.
    var value: Value {
        get async throws {
            try await withCheckedThrowingContinuation { continuation in
                let settled: Result<Value, any Error>? = state.withLock { state in
                    switch state {
                    case .pending:
                        state = .awaited(continuation)
                        return nil
                    case .settled(let result):
                        state = .delivered
                        return result
                    case .awaited, .delivered:
                        preconditionFailure("an outcome is awaited once")
                    }
                }
                if let settled { continuation.resume(with: settled) }
            }
        }
    }
}

/// When something last happened (a connection was handed to work, the database answered), to tell a busy pool or a
/// long statement from an unreachable server.
final class LastOccurrence: Sendable {
    private static let origin = ContinuousClock.now
    private let nanoseconds = Atomic<Int64>(Int64.min)

    /// It happened at `instant` (now by default).
    func record(at instant: ContinuousClock.Instant = .now) {
        nanoseconds.store((instant - Self.origin).inNanoseconds, ordering: .relaxed)
    }

    /// Whether it happened within `interval` before `now`.
    func within(_ interval: Duration, of now: ContinuousClock.Instant) -> Bool {
        let last = nanoseconds.load(ordering: .relaxed)
        return last != Int64.min && (now - Self.origin).inNanoseconds - last < interval.inNanoseconds
    }
}
