import Foundation
import GameCenterProtocol
import Logging
import NIOCore
import NIOPosix
import PostgresKit
import PostgresNIO
import SQLKit
import SQLiteKit
import SQLiteNIO

/// The storage engine behind a ``Database``.
public enum StorageEngine: String, Sendable {
    case sqlite
    case postgres
}

/// One database, SQLite (embedded default, WAL) or PostgreSQL, with scoped read and write access.
///
/// Open it with ``withDatabase(url:logger:_:)``, which also runs the engine's background work
/// (the PostgreSQL pool) and closes everything when the closure returns. Reads may run in parallel;
/// ``write(_:)`` runs its closure in one transaction, committed when the closure returns and rolled
/// back when it throws. SQLite allows one writer: the in-process writer lock queues write
/// transactions so none of them waits inside the engine.
public final class Database: Sendable {
    /// The engine this database runs on.
    public let engine: StorageEngine
    private let backend: Backend
    let logger: Logger
    /// Fails PostgreSQL work that waits for a connection while none are handed out.
    let watchdog: ConnectionWatchdog
    /// The single reports of distinct players that wait at the same moment go out together (group commit).
    let reportBatchers: ReportBatchers?
    /// Statements sent to the engine since the database opened.
    public let statements: StatementCounter

    private enum Backend: Sendable {
        case sqlite(writer: GroupCommitter, readers: ConnectionPool<SQLiteConnection>)
        case postgres(PostgresClient)
    }

    /// Parses `url` (`sqlite:PATH`, `sqlite::memory:` or `postgres://USER:PASS@HOST:PORT/DB`), opens the database,
    /// applies pending migrations, runs `body`, and closes the database.
    public static func withDatabase<T: Sendable>(
        url: String,
        logger: Logger = Logger(label: "gamecenter.storage"),
        _ body: @Sendable (Database) async throws -> T
    ) async throws -> T {
        try await withDatabase(url: url, logger: logger, migrations: Migrations.all, body)
    }

    /// ``withDatabase(url:logger:_:)`` applying only `migrations` (tests of an upgrade start from an older schema).
    static func withDatabase<T: Sendable>(
        url: String,
        logger: Logger = Logger(label: "gamecenter.storage"),
        migrations: [Migration],
        _ body: @Sendable (Database) async throws -> T
    ) async throws -> T {
        let location = try DatabaseLocation(url)
        switch location {
        case .sqlite(let path):
            let database = try await openSQLite(path: path, logger: logger, migrations: migrations)
            do {
                let result = try await body(database)
                await database.closeSQLite()
                return result
            } catch {
                await database.closeSQLite()
                throw error
            }
        case .postgres(let configuration):
            let client = PostgresClient(configuration: configuration, backgroundLogger: logger)
            let (watchdog, statements) = (ConnectionWatchdog(), StatementCounter())
            let database = Database(
                engine: .postgres, backend: .postgres(client), logger: logger, statements: statements, watchdog: watchdog,
                reportBatchers: ReportBatchers(.postgres(client, watchdog: watchdog, statements: statements)))
            return try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { await client.run() }
                group.addTask {
                    await watchdog.run {
                        _ = try? await Database.whileAvailable(client, watchdog: watchdog) { connection in
                            try await connection.query("SELECT 1", logger: connection.logger).collect()
                        }
                    }
                }
                defer { group.cancelAll() }
                try await database.migrate(migrations)
                return try await body(database)
            }
        }
    }

    private init(
        engine: StorageEngine, backend: Backend, logger: Logger, statements: StatementCounter, watchdog: ConnectionWatchdog = ConnectionWatchdog(),
        reportBatchers: ReportBatchers? = nil
    ) {
        self.engine = engine
        self.watchdog = watchdog
        self.reportBatchers = reportBatchers
        self.statements = statements
        self.backend = backend
        self.logger = logger
    }

    /// Opens the writer, applies `migrations` with it, then opens the readers. A connection that read the schema
    /// before a migration prepares its first statement after it with the old schema, and SQLiteNIO takes a
    /// statement's column names before running it: `SELECT *` on a table that gained a column would miss it.
    private static func openSQLite(path: String, logger: Logger, migrations: [Migration]) async throws -> Database {
        let storage: SQLiteConnection.Storage
        if path == ":memory:" {
            // A named shared-cache memory database, so that all connections see the same data.
            storage = .file(path: "file:gamecenter-\(UUID().uuidString)?mode=memory&cache=shared")
        } else {
            let directory = URL(fileURLWithPath: path).deletingLastPathComponent()
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            storage = .file(path: path)
        }
        // mmap: reads of random rows (a leaderboard page's 26 reports) come from the page cache without a pread each
        // (measured: page p99 1.0 → 0.77 ms on a 1 M-player board). Only reads use it; writes still go through the WAL.
        func open() async throws -> SQLiteConnection {
            let connection = try await SQLiteConnection.open(storage: storage, logger: logger)
            for pragma in [
                "PRAGMA journal_mode=WAL", "PRAGMA synchronous=FULL", "PRAGMA busy_timeout=10000", "PRAGMA foreign_keys=ON", "PRAGMA mmap_size=1073741824",
            ] {
                _ = try await connection.query(pragma)
            }
            return connection
        }
        let statements = StatementCounter()
        let writer = GroupCommitter(connection: try await open(), statements: statements)
        var readers: [SQLiteConnection] = []
        do {
            try await Database(engine: .sqlite, backend: .sqlite(writer: writer, readers: ConnectionPool([])), logger: logger, statements: statements)
                .migrate(migrations)
            for _ in 0..<4 { readers.append(try await open()) }
        } catch {
            for connection in readers + [await writer.close()] {
                let closed: EventLoopFuture<Void> = connection.close()
                try? await closed.get()
            }
            throw error
        }
        return Database(
            engine: .sqlite, backend: .sqlite(writer: writer, readers: ConnectionPool(readers)), logger: logger, statements: statements,
            reportBatchers: ReportBatchers(.sqlite(writer)))
    }

    private func closeSQLite() async {
        guard case .sqlite(let writer, let readers) = backend else { return }
        // Each step is logged: a shutdown that hangs shows where (see the open shutdown bug in the notes).
        logger.info("closing the database: waiting for readers")
        let idleReaders = await readers.drain()
        logger.info("closing the database: waiting for the writer's queued transactions")
        let idleWriter = await writer.close()
        for connection in idleReaders + [idleWriter] {
            // The future form: closing must happen even when the closing task is cancelled.
            let closed: EventLoopFuture<Void> = connection.close()
            try? await closed.get()
        }
        logger.info("database closed")
    }

    /// Runs `body` with a connection for reading. Statements run outside a transaction.
    public func read<T: Sendable>(_ body: @escaping @Sendable (StorageSession) async throws -> T) async throws -> T {
        switch backend {
        case .sqlite(_, let readers):
            let engine = engine
            return try await readers.withConnection { connection in
                try await body(StorageSession(sql: connection.sql(), engine: engine, statements: self.statements, sqliteConnection: connection))
            }
        case .postgres(let client):
            return try await Self.whileAvailable(client, watchdog: watchdog) { connection in
                try await body(
                    StorageSession(
                        sql: connection.sql(), engine: self.engine, statements: self.statements, postgresConnection: connection,
                        answers: self.watchdog.lastAnswer))
            }
        }
    }

    /// Runs `body` in one transaction: committed when it returns, rolled back when it throws. On SQLite, writes
    /// that arrive together share one commit (see ``GroupCommitter``); each still succeeds or fails alone.
    public func write<T: Sendable>(_ body: @escaping @Sendable (StorageSession) async throws -> T) async throws -> T {
        try await write(holdingAtMost: Self.holdLimit, body)
    }

    /// ``write(_:)`` whose PostgreSQL connection may be held for `limit` at most (nil: no limit, for migrations).
    func write<T: Sendable>(holdingAtMost limit: Duration?, _ body: @escaping @Sendable (StorageSession) async throws -> T) async throws -> T {
        guard engine == .postgres else { return try await writeStatement(body) }
        return try await writeStatement(holdingAtMost: limit) { try await Self.transaction($0, begin: "BEGIN", body) }
    }

    /// Runs `body`, which sends one statement on PostgreSQL, as its own transaction: a statement is atomic, so it needs
    /// no `BEGIN` and `COMMIT` (two round trips fewer). On SQLite it is ``write(_:)``: the body may send several
    /// statements, run in the group committer's transaction.
    public func writeStatement<T: Sendable>(_ body: @escaping @Sendable (StorageSession) async throws -> T) async throws -> T {
        try await writeStatement(holdingAtMost: Self.holdLimit, body)
    }

    /// ``writeStatement(_:)`` whose PostgreSQL connection may be held for `limit` at most (nil: no limit).
    private func writeStatement<T: Sendable>(
        holdingAtMost limit: Duration?, _ body: @escaping @Sendable (StorageSession) async throws -> T
    ) async throws -> T {
        switch backend {
        case .sqlite(let writer, _):
            return try await writer.write(body)
        case .postgres(let client):
            return try await Self.whileAvailable(client, watchdog: watchdog, holdingAtMost: limit) { connection in
                try await body(
                    StorageSession(
                        sql: connection.sql(), engine: self.engine, statements: self.statements, postgresConnection: connection,
                        answers: self.watchdog.lastAnswer))
            }
        }
    }

    /// Sends each of `payloads` on PostgreSQL's notification `channel` (`pg_notify`, one statement), to every
    /// connection that listens on it (``listen(channel:_:)``), this node's included. PostgreSQL only.
    public func notify(channel: String, payloads: [String]) async throws {
        guard case .postgres(let client) = backend, !payloads.isEmpty else { return }
        _ = try await Self.whileAvailable(client, watchdog: watchdog) { connection in
            try await connection.query("SELECT pg_notify(\(channel), payload) FROM unnest(\(payloads)::TEXT[]) AS payload", logger: connection.logger)
                .collect()
        }
    }

    /// Listens on PostgreSQL's notification `channel` with a connection of its own: `body` gets the payloads as they
    /// arrive, and this returns when `body` does or the connection fails (then throws). PostgreSQL only.
    public func listen(channel: String, _ body: @Sendable (AsyncThrowingMapSequence<PostgresNotificationSequence, String>) async throws -> Void)
        async throws
    {
        guard case .postgres(let client) = backend else { throw StorageError.unavailable("notifications need PostgreSQL") }
        try await client.withConnection { connection in
            try await connection.listen(on: channel) { notifications in
                try await body(notifications.map(\.payload))
            }
        }
    }

    private static func transaction<T>(
        _ session: StorageSession,
        begin: String,
        _ body: @Sendable (StorageSession) async throws -> T
    ) async throws -> T {
        try await session.sql.raw(SQLQueryString(begin)).run()
        do {
            let result = try await body(session)
            try await session.sql.raw("COMMIT").run()
            return result
        } catch {
            // A connection that failed takes its transaction with it (the server rolls it back); a ROLLBACK sent on it
            // would never be answered (PostgresNIO drops a query written to a closed connection without failing it).
            if !((error as? PSQLError).map(Self.meansUnavailable) ?? false), session.postgresConnection?.isClosed != true {
                try? await session.sql.raw("ROLLBACK").run()
            }
            throw error
        }
    }

    /// The newest migration this database has applied.
    public func schemaVersion() async throws -> Int {
        try await read { storage in
            Int(try await storage.sql.raw("SELECT MAX(version) AS version FROM schema_migrations").first()?.decode(column: "version", as: Int64?.self) ?? 0)
        }
    }

    /// Applies, in one transaction, every one of `migrations` that this database has not applied yet.
    func migrate(_ migrations: [Migration]) async throws {
        // No limit: an index built on a large table may take long (the watchdog still gives up on a silent database).
        try await write(holdingAtMost: nil) { session in
            if session.engine == .postgres {
                // Several nodes may start at once against one database: one migrates, the others wait.
                try await session.sql.raw("SELECT pg_advisory_xact_lock(4711)").run()
            }
            try await session.sql.raw(
                """
                CREATE TABLE IF NOT EXISTS schema_migrations (
                    version BIGINT PRIMARY KEY, name TEXT NOT NULL, applied_at BIGINT NOT NULL)
                """
            ).run()
            let applied = Set(
                try await session.sql.raw("SELECT version FROM schema_migrations").all()
                    .map { try $0.decode(column: "version", as: Int64.self) })
            for migration in migrations where !applied.contains(Int64(migration.version)) {
                for statement in migration.statements(for: session.engine) {
                    try await session.sql.raw(SQLQueryString(statement)).run()
                }
                try await session.sql.raw(
                    """
                    INSERT INTO schema_migrations (version, name, applied_at)
                    VALUES (\(bind: Int64(migration.version)), \(bind: migration.name), \(bind: StoredTime.millis(Date())))
                    """
                ).run()
                self.logger.info("applied migration", metadata: [LogKey.version: "\(migration.version)", LogKey.name: "\(migration.name)"])
            }
        }
    }
}

/// Where a database lives, parsed from the `--database` argument.
enum DatabaseLocation {
    case sqlite(path: String)
    case postgres(PostgresClient.Configuration)

    init(_ url: String) throws {
        if url.hasPrefix("sqlite:") {
            let path = String(url.dropFirst("sqlite:".count))
            guard !path.isEmpty else { throw StorageError.invalidURL("sqlite: needs a path, e.g. sqlite:.gamecenter/gamecenter.sqlite") }
            self = .sqlite(path: path)
        } else if url.hasPrefix("postgres://") || url.hasPrefix("postgresql://") {
            guard let components = URLComponents(string: url), let host = components.host, !host.isEmpty,
                let user = components.user, !user.isEmpty
            else {
                throw StorageError.invalidURL("expected postgres://USER:PASS@HOST:PORT/DB")
            }
            let database = components.path.hasPrefix("/") ? String(components.path.dropFirst()) : components.path
            var configuration = PostgresClient.Configuration(
                host: host, port: components.port ?? 5432, username: user,
                password: components.password, database: database.isEmpty ? nil : database, tls: .disable
            )
            configuration.options.maximumConnections = 16
            // No keep-alive query: the pool waits for it without a bound, and one sent to a database that answers
            // nothing (a black hole) held its connection for good — the pool ran out of them. Idle connections close
            // after a minute instead, and one that died meanwhile fails the work that gets it (see `whileAvailable`).
            configuration.options.keepAliveBehavior = nil
            self = .postgres(configuration)
        } else {
            throw StorageError.invalidURL("use sqlite:PATH or postgres://USER:PASS@HOST:PORT/DB")
        }
    }
}
