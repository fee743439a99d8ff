/// One player's score report waiting for a batch (see ``Database/reportScores(reportID:_:bundleID:environment:playerID:now:)``).
struct PendingScoreReport: Sendable {
    var reportID: String
    /// One or more.
    var scores: [NewScore]
    var bundleID: String
    var environment: String
    var playerID: String
    /// When the report was applied (noted with its id).
    var now: Int64
    /// A signed report's counter: taken (above the session key's last) before the report is stored, or the report is
    /// refused.
    var counter: ReportCounter? = nil
}

/// A signed report's counter for its session's key.
struct ReportCounter: Sendable {
    var sessionID: String
    var counter: Int64
}

/// What became of one report of a batch.
enum ScoreReportAnswer: Sendable {
    /// Stored (its records), or nil: its id was applied before.
    case applied([ScoreRecord]?)
    /// Its counter was not above the key's last: nothing was stored.
    case counterTaken
}

/// A signed score report whose counter was not above the last one its session's key signed (a replay, or reports
/// that overtook each other): nothing of it was stored.
public struct ReportCounterTaken: Error, Equatable {}
