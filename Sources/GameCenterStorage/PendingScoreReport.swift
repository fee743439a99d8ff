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
}
