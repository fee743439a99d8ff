import GameCenterProtocol
import PostgresNIO
import SQLKit
import Synchronization

extension Database {
    /// How long work waits for a PostgreSQL connection, while no other work gets one either, before the database
    /// counts as unavailable.
    ///
    /// Without it, work waited as long as the pool kept trying to connect to a stopped server: 30 to 67 s. Work that
    /// waits because the pool is busy (others got connections meanwhile) waits on.
    public static let connectionWait = Duration.seconds(5)

    /// Whether the database answers a trivial query within `limit`; throws `StorageError.unavailable` if not.
    public func checkReady(within limit: Duration = .seconds(2)) async throws {
        try await withThrowingTaskGroup(of: Bool.self) { group in
            group.addTask {
                try await self.read { try await $0.sql.raw("SELECT 1").run() }
                return true
            }
            group.addTask {
                try await Task.sleep(for: limit)
                return false
            }
            defer { group.cancelAll() }
            guard try await group.next() == true else { throw StorageError.unavailable("no answer within \(limit)") }
        }
    }

    /// Runs `body` on a pooled connection, or throws `StorageError.unavailable` when none comes within
    /// ``connectionWait`` (while no other work gets one: see ``ConnectionWatchdog``) or the connection fails the way a
    /// stopped or unreachable server makes it fail. Cancelling the caller cancels the work.
    static func whileAvailable<T: Sendable>(
        _ client: PostgresClient, watchdog: ConnectionWatchdog, _ body: @escaping @Sendable (PostgresConnection) async throws -> T
    ) async throws -> T {
        let work = WaitingWork()
        // A task of its own, so that the watchdog can cancel the wait without cancelling the caller.
        let task = Task {
            try await client.withConnection { connection in
                guard work.acquire() else { throw StorageError.unavailable("no connection to PostgreSQL within \(connectionWait)") }
                watchdog.lastConnection.record()
                return try await body(connection)
            }
        }
        let key = watchdog.register(cancel: { task.cancel() }, work: work)
        defer { watchdog.unregister(key) }
        do {
            return try await withTaskCancellationHandler {
                try await task.value
            } onCancel: {
                task.cancel()
            }
        } catch let error as PSQLError where Self.meansUnavailable(error) {
            throw StorageError.unavailable(String(describing: error.code))
        } catch _ where work.isExpired {
            throw StorageError.unavailable("no connection to PostgreSQL within \(connectionWait)")
        }
    }

    /// Errors a stopped, restarting or unreachable server causes (rather than the work itself).
    private static func meansUnavailable(_ error: PSQLError) -> Bool {
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

/// When a PostgreSQL connection was last handed to work, to tell a busy pool from an unreachable server.
final class LastConnection: Sendable {
    private static let origin = ContinuousClock.now
    private let nanoseconds = Atomic<Int64>(Int64.min)

    /// Work got a connection now.
    func record() {
        nanoseconds.store(Self.elapsed(), ordering: .relaxed)
    }

    /// Whether work got a connection within the last `interval`.
    func within(_ interval: Duration) -> Bool {
        let last = nanoseconds.load(ordering: .relaxed)
        return last != Int64.min && Self.elapsed() - last < interval.inNanoseconds
    }

    private static func elapsed() -> Int64 {
        (ContinuousClock.now - origin).inNanoseconds
    }
}
