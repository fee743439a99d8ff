import PostgresNIO
import SQLKit
import SQLiteNIO

/// Access to the stored data through one connection, inside ``Database/read(_:)`` or ``Database/write(_:)``.
///
/// The queries are written once in SQL that both engines understand; SQLKit adapts placeholders.
/// Areas live in `StorageSession+Area.swift` files.
public struct StorageSession: Sendable {
    /// The SQL connection (benchmarks reach it for their anchors and bulk seeding); it counts every statement.
    package let sql: any SQLDatabase
    /// The engine behind this session.
    public let engine: StorageEngine
    /// The SQLite connection underneath, for the few bulk reads that skip SQLKit's row decoding.
    let sqliteConnection: SQLiteConnection?
    /// The PostgreSQL connection underneath, for the hot statements it keeps prepared (``execute(_:)``).
    let postgresConnection: PostgresConnection?
    private let statements: StatementCounter
    /// Where each answered statement is noted (the PostgreSQL watchdog's ``ConnectionWatchdog/lastAnswer``).
    private let answers: LastOccurrence?

    init(
        sql: any SQLDatabase, engine: StorageEngine, statements: StatementCounter, sqliteConnection: SQLiteConnection? = nil,
        postgresConnection: PostgresConnection? = nil, answers: LastOccurrence? = nil
    ) {
        self.sql = CountingSQLDatabase(base: sql, counter: statements, answers: answers)
        self.answers = answers
        self.engine = engine
        self.statements = statements
        self.sqliteConnection = sqliteConnection
        self.postgresConnection = postgresConnection
    }

    /// Counts a statement sent on ``sqliteConnection`` directly.
    func countDirectStatement() {
        statements.add()
    }

    /// Runs a statement on ``postgresConnection`` as a prepared statement (parsed and planned once per connection,
    /// then only bound and run: for the reports' `WITH … INSERT` statements, planning cost more than running) and
    /// returns its rows.
    func execute<Statement: PostgresPreparedStatement>(_ statement: Statement) async throws -> [Statement.Row] {
        guard let connection = postgresConnection else { throw StorageError.unavailable("prepared statements run on PostgreSQL connections only") }
        statements.add()
        let started = ContinuousClock.now
        defer { statements.finished(since: started) }
        var rows: [Statement.Row] = []
        for try await row in try await connection.execute(statement, logger: connection.logger) { rows.append(row) }
        answers?.record()
        return rows
    }
}

extension SQLRow {
    func int(_ column: String) throws -> Int64 { try decode(column: column, as: Int64.self) }
    func string(_ column: String) throws -> String { try decode(column: column, as: String.self) }
    func optionalString(_ column: String) throws -> String? { try decode(column: column, as: String?.self) }
    func optionalInt(_ column: String) throws -> Int64? { try decode(column: column, as: Int64?.self) }
}
