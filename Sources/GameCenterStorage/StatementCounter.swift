import GameCenterProtocol
import Logging
import NIOCore
import SQLKit
import Synchronization

/// How many SQL statements a ``Database`` has sent to its engine since it opened (transaction control included:
/// `BEGIN`, `COMMIT`, `SAVEPOINT`). Exported as the `storage.statements` metric; a test pins the statements one
/// report costs, so that a round trip added to the hot path shows.
///
/// It also times them: ``observeDurations(_:)`` hears how long each statement took, from sending it to its last row.
public final class StatementCounter: Sendable {
    private let count = Atomic<Int>(0)
    private let durationObserver = Mutex<Callback<Int64>?>(nil)

    /// Statements sent so far.
    public var value: Int { count.load(ordering: .relaxed) }

    /// Calls `observe` with each statement's duration in nanoseconds, from now on.
    public func observeDurations(_ observe: @escaping @Sendable (_ nanoseconds: Int64) -> Void) {
        durationObserver.withLock { $0 = Callback(observe) }
    }

    func add() {
        count.add(1, ordering: .relaxed)
    }

    /// A statement sent at `started` has finished.
    func finished(since started: ContinuousClock.Instant) {
        guard let observer = durationObserver.withLock({ $0 }) else { return }
        observer.call((ContinuousClock.now - started).inNanoseconds)
    }
}

/// An `SQLDatabase` that counts each statement it forwards, and notes each one answered in `answers` (the PostgreSQL
/// watchdog's sign that the database answers: a long transaction of answered statements is not a silent database).
struct CountingSQLDatabase: SQLDatabase {
    let base: any SQLDatabase
    let counter: StatementCounter
    let answers: LastOccurrence?

    var logger: Logger { base.logger }
    var eventLoop: any EventLoop { base.eventLoop }
    var version: (any SQLDatabaseReportedVersion)? { base.version }
    var dialect: any SQLDialect { base.dialect }
    var queryLogLevel: Logger.Level? { base.queryLogLevel }

    func execute(sql query: any SQLExpression, _ onRow: @escaping @Sendable (any SQLRow) -> Void) -> EventLoopFuture<Void> {
        counter.add()
        let (started, counter, answers) = (ContinuousClock.now, counter, answers)
        return base.execute(sql: query, onRow).always { result in
            counter.finished(since: started)
            if case .success = result { answers?.record() }
        }
    }

    func execute(sql query: any SQLExpression, _ onRow: @escaping @Sendable (any SQLRow) -> Void) async throws {
        counter.add()
        let started = ContinuousClock.now
        defer { counter.finished(since: started) }
        try await base.execute(sql: query, onRow)
        answers?.record()
    }
}
