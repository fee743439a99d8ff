import PostgresNIO

/// Group commit across requests: one ``StatementBatcher`` per kind of report, which sends the single reports of
/// distinct players that wait at the same moment together — on PostgreSQL as one statement (``ScoreReportStatement``,
/// ``AchievementReportStatement``), on SQLite as one job of the writer's next group (``GroupCommitter``), whose
/// statements carry all the batch's reports (three for scores, two for achievements, however many reports).
///
/// A batch is atomic: when it fails as a whole for its content, nothing of it was stored, and each of its reports is
/// sent again alone, so that only the one at fault fails. When the database is unreachable the outcome is unknown and
/// every caller is told so (`StorageError.unavailable`); a report sent again is applied once (its id).
struct ReportBatchers: Sendable {
    /// Score reports, one per player in a batch.
    let scores: StatementBatcher<PendingScoreReport, ScoreReportAnswer>
    /// Achievement reports, one per player in a batch.
    let achievements: StatementBatcher<PendingAchievementReport, AchievementReportOutcome>
    /// Signed reports' counters, one per session in a batch: whether each was taken.
    let reportCounters: StatementBatcher<ReportCounter, Bool>

    /// Where a batch goes.
    enum Transport: Sendable {
        /// A pooled PostgreSQL connection, the batch as one statement (no transaction around it).
        case postgres(PostgresClient, watchdog: ConnectionWatchdog, statements: StatementCounter)
        /// SQLite's writer: the batch is one job in its next transaction.
        case sqlite(GroupCommitter)
    }

    init(_ transport: Transport) {
        scores = StatementBatcher(
            key: \.playerID, failsTheWaiting: Self.meansUnavailable, run: Self.runner(transport) { try await $0.reportScores($1) })
        achievements = StatementBatcher(
            key: \.playerID, failsTheWaiting: Self.meansUnavailable, run: Self.runner(transport) { try await $0.reportAchievements($1) })
        reportCounters = StatementBatcher(
            key: \.sessionID, failsTheWaiting: Self.meansUnavailable,
            run: Self.runner(transport) { storage, counters in
                let taken = try await storage.advanceReportCounters(counters.map { ($0.sessionID, $0.counter) })
                return counters.map { taken.contains($0.sessionID) }
            })
    }

    /// Whether `error` says the database cannot be reached now (the outcome of the work is unknown).
    static func meansUnavailable(_ error: any Error) -> Bool {
        (error as? StorageError)?.isUnavailable == true
    }

    /// Sends a batch with `send` through `transport`; when it fails for its content, each request alone.
    private static func runner<Request: Sendable, Response: Sendable>(
        _ transport: Transport, _ send: @escaping @Sendable (StorageSession, [Request]) async throws -> [Response]
    ) -> StatementBatcher<Request, Response>.Run {
        retryingAlone { requests in
            switch transport {
            case .postgres(let client, let watchdog, let statements):
                try await Database.whileAvailable(client, watchdog: watchdog) { connection in
                    let session = StorageSession(
                        sql: connection.sql(), engine: .postgres, statements: statements, postgresConnection: connection, answers: watchdog.lastAnswer)
                    return try await send(session, requests)
                }
            case .sqlite(let writer):
                try await writer.write { try await send($0, requests) }
            }
        }
    }

    /// Sends a batch with `attempt`. When it fails, every request fails with it if the database is unavailable (the
    /// outcome is unknown); otherwise the batch changed nothing, and each request is sent again alone.
    static func retryingAlone<Request: Sendable, Response: Sendable>(
        _ attempt: @escaping @Sendable ([Request]) async throws -> [Response]
    ) -> StatementBatcher<Request, Response>.Run {
        { requests in
            do {
                return try await attempt(requests).map { .success($0) }
            } catch  where meansUnavailable(error) {
                return requests.map { _ in .failure(error) }
            } catch {
                guard requests.count > 1 else { return [.failure(error)] }
                var results: [Result<Response, any Error>] = []
                for request in requests {
                    do {
                        results.append(.success(try await attempt([request])[0]))
                    } catch {
                        results.append(.failure(error))
                    }
                }
                return results
            }
        }
    }
}
