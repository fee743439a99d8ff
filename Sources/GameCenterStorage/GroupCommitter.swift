import SQLKit
import SQLiteNIO
import Synchronization

/// SQLite's writer: runs queued write transactions in groups that share one `COMMIT` (one fsync); one that fails
/// leaves the others intact (see `commit`). A caller resumes only after its group committed, so "returned" still
/// means "durable".
///
/// SQLite allows one writer at a time anyway; grouping turns N fsyncs into one when writes arrive together.
actor GroupCommitter {
    /// One queued transaction body, type-erased.
    struct Job: Sendable {
        /// Runs the body; keeps its result for `finish`.
        let run: @Sendable (StorageSession) async throws -> Void
        /// Completes the caller: nil after the commit, or the error.
        let finish: @Sendable ((any Error)?) -> Void
    }

    /// Most transactions in one group.
    static let maximumGroup = 256

    private let connection: SQLiteConnection
    private let statements: StatementCounter
    private var queue: [Job] = []
    private var running = false
    private var closed = false

    init(connection: SQLiteConnection, statements: StatementCounter) {
        self.connection = connection
        self.statements = statements
    }

    /// Runs `body` in the next group; returns its result once the group has committed.
    func write<T: Sendable>(_ body: @escaping @Sendable (StorageSession) async throws -> T) async throws -> T {
        let result = Mutex<T?>(nil)
        return try await withCheckedThrowingContinuation { continuation in
            let job = Job(
                run: { session in
                    let value = try await body(session)
                    result.withLock { $0 = value }
                },
                finish: { error in
                    if let error {
                        continuation.resume(throwing: error)
                    } else if let value = result.withLock({ $0 }) {
                        continuation.resume(returning: value)
                    }
                })
            enqueue(job)
        }
    }

    private func enqueue(_ job: Job) {
        guard !closed else {
            job.finish(StorageError.closed)
            return
        }
        queue.append(job)
        guard !running else { return }
        running = true
        Task { await drain() }
    }

    private func drain() async {
        while !queue.isEmpty {
            let group = Array(queue.prefix(Self.maximumGroup))
            queue.removeFirst(group.count)
            await commit(group)
        }
        running = false
    }

    /// Runs `group` in one transaction with no savepoints (two statements fewer per job: most groups have no
    /// failure). When a job throws, the transaction is rolled back, that job gets its error, and the others run
    /// again, each in its own savepoint.
    private func commit(_ group: [Job]) async {
        let session = StorageSession(sql: connection.sql(), engine: .sqlite, statements: statements, sqliteConnection: connection)
        do {
            try await session.sql.raw("BEGIN IMMEDIATE").run()
        } catch {
            for job in group { job.finish(error) }
            return
        }
        for (position, job) in group.enumerated() {
            do {
                try await job.run(session)
            } catch {
                try? await session.sql.raw("ROLLBACK").run()
                job.finish(error)
                await commitWithSavepoints(Array(group[..<position] + group[(position + 1)...]), session: session)
                return
            }
        }
        await finish(group, session: session)
    }

    /// Runs `group` in one transaction, each job in its own savepoint, so that one failing leaves the others intact.
    private func commitWithSavepoints(_ group: [Job], session: StorageSession) async {
        guard !group.isEmpty else { return }
        do {
            try await session.sql.raw("BEGIN IMMEDIATE").run()
        } catch {
            for job in group { job.finish(error) }
            return
        }
        var succeeded: [Job] = []
        for job in group {
            do {
                try await session.sql.raw("SAVEPOINT job").run()
                do {
                    try await job.run(session)
                    try await session.sql.raw("RELEASE job").run()
                    succeeded.append(job)
                } catch {
                    try await session.sql.raw("ROLLBACK TO job").run()
                    try await session.sql.raw("RELEASE job").run()
                    job.finish(error)
                }
            } catch {
                job.finish(error)
            }
        }
        await finish(succeeded, session: session)
    }

    /// Commits the open transaction and completes `jobs` (with the error when the commit fails).
    private func finish(_ jobs: [Job], session: StorageSession) async {
        do {
            try await session.sql.raw("COMMIT").run()
            for job in jobs { job.finish(nil) }
        } catch {
            try? await session.sql.raw("ROLLBACK").run()
            for job in jobs { job.finish(error) }
        }
    }

    /// Refuses new work and waits for queued work to finish; returns the connection for closing.
    func close() async -> SQLiteConnection {
        closed = true
        while running || !queue.isEmpty { await Task.yield() }
        return connection
    }
}
