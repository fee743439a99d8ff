/// One player's achievement report waiting for a batch (see
/// ``Database/reportAchievements(reportID:_:bundleID:playerID:eventKind:now:)``).
struct PendingAchievementReport: Sendable {
    var reportID: String
    /// One or more, one per achievement.
    var entries: [AchievementReportEntry]
    var bundleID: String
    var playerID: String
    /// The kind of the completion events.
    var eventKind: String
    /// When the report was applied: the completion time and the report time.
    var now: Int64
}
