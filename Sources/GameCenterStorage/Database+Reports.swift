extension Database {
    /// Applies one report of a player's scores once per `reportID`, as
    /// ``StorageSession/reportScores(reportID:_:bundleID:environment:playerID:now:)`` in its own write, durable when
    /// this returns. The reports of other players that wait at the same moment share its statements (group commit, see
    /// ``ReportBatchers``); each caller gets its own answer and its own failure.
    ///
    /// A signed report's `counter` (its session and counter) is taken with it: when it is not above the last one the
    /// session's key signed, nothing is stored and ``ReportCounterTaken`` is thrown.
    public func reportScores(
        reportID: String, _ scores: [NewScore], bundleID: String, environment: String, playerID: String, now: Int64,
        counter: (sessionID: String, counter: Int64)? = nil
    ) async throws -> [ScoreRecord]? {
        let report = PendingScoreReport(
            reportID: reportID, scores: scores, bundleID: bundleID, environment: environment, playerID: playerID, now: now,
            counter: counter.map { ReportCounter(sessionID: $0.sessionID, counter: $0.counter) })
        let answer: ScoreReportAnswer
        if let reportBatchers, !scores.isEmpty {
            answer = try await reportBatchers.scores.submit(report)
        } else {
            answer = try await writeStatement { storage in
                guard report.counter != nil else {
                    return .applied(
                        try await storage.reportScores(
                            reportID: reportID, scores, bundleID: bundleID, environment: environment, playerID: playerID, now: now))
                }
                return try await storage.reportScores([report])[0]
            }
        }
        guard case .applied(let records) = answer else { throw ReportCounterTaken() }
        return records
    }

    /// Applies one report of a player's achievement progress once per `reportID`, as
    /// ``StorageSession/reportAchievements(reportID:_:bundleID:playerID:eventKind:now:)`` in its own write, durable
    /// when this returns. The reports of other players that wait at the same moment share its statements (group commit, see
    /// ``ReportBatchers``); each caller gets its own answer and its own failure.
    public func reportAchievements(
        reportID: String, _ entries: [AchievementReportEntry], bundleID: String, playerID: String, eventKind: String, now: Int64
    ) async throws -> AchievementReportOutcome {
        guard let reportBatchers else {
            return try await writeStatement {
                try await $0.reportAchievements(reportID: reportID, entries, bundleID: bundleID, playerID: playerID, eventKind: eventKind, now: now)
            }
        }
        return try await reportBatchers.achievements.submit(
            PendingAchievementReport(
                reportID: reportID, entries: StorageSession.merged(entries), bundleID: bundleID, playerID: playerID, eventKind: eventKind, now: now))
    }

    /// Takes `counter` for the session's report key when it is above the last one taken (a signed score report's
    /// counter): false when it is not (a replayed or out-of-order report) or the session has no key. Durable when this
    /// returns; the sessions that wait at the same moment share one statement.
    public func advanceReportCounter(sessionID: String, to counter: Int64) async throws -> Bool {
        guard let reportBatchers else {
            return try await writeStatement { try await $0.advanceReportCounters([(sessionID, counter)]).contains(sessionID) }
        }
        return try await reportBatchers.reportCounters.submit(ReportCounter(sessionID: sessionID, counter: counter))
    }
}
