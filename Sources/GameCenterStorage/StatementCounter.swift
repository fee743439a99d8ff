import Logging
import NIOCore
import SQLKit
import Synchronization

/// How many SQL statements a ``Database`` has sent to its engine since it opened (transaction control included:
/// `BEGIN`, `COMMIT`, `SAVEPOINT`). Exported as the `storage.statements` metric; a test pins the statements one
/// report costs, so that a round trip added to the hot path shows.
public final class StatementCounter: Sendable {
    private let count = Atomic<Int>(0)

    /// Statements sent so far.
    public var value: Int { count.load(ordering: .relaxed) }

    func add() {
        count.add(1, ordering: .relaxed)
    }
}

/// An `SQLDatabase` that counts each statement it forwards.
struct CountingSQLDatabase: SQLDatabase {
    let base: any SQLDatabase
    let counter: StatementCounter

    var logger: Logger { base.logger }
    var eventLoop: any EventLoop { base.eventLoop }
    var version: (any SQLDatabaseReportedVersion)? { base.version }
    var dialect: any SQLDialect { base.dialect }
    var queryLogLevel: Logger.Level? { base.queryLogLevel }

    func execute(sql query: any SQLExpression, _ onRow: @escaping @Sendable (any SQLRow) -> Void) -> EventLoopFuture<Void> {
        counter.add()
        return base.execute(sql: query, onRow)
    }

    func execute(sql query: any SQLExpression, _ onRow: @escaping @Sendable (any SQLRow) -> Void) async throws {
        counter.add()
        try await base.execute(sql: query, onRow)
    }
}
