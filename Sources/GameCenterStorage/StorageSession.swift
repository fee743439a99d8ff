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
    private let statements: StatementCounter

    init(sql: any SQLDatabase, engine: StorageEngine, statements: StatementCounter, sqliteConnection: SQLiteConnection? = nil) {
        self.sql = CountingSQLDatabase(base: sql, counter: statements)
        self.engine = engine
        self.statements = statements
        self.sqliteConnection = sqliteConnection
    }

    /// Counts a statement sent on ``sqliteConnection`` directly.
    func countDirectStatement() {
        statements.add()
    }
}

extension SQLRow {
    func int(_ column: String) throws -> Int64 { try decode(column: column, as: Int64.self) }
    func string(_ column: String) throws -> String { try decode(column: column, as: String.self) }
    func optionalString(_ column: String) throws -> String? { try decode(column: column, as: String?.self) }
    func optionalInt(_ column: String) throws -> Int64? { try decode(column: column, as: Int64?.self) }
}
