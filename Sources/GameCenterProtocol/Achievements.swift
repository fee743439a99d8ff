import Foundation

/// An achievement as the manifest describes it, localized for the device. A hidden achievement the player has
/// not reported progress on comes with `isHidden` and empty texts: it is not revealed yet.
public struct AchievementDescriptionInfo: Codable, Sendable, Equatable {
    public var identifier: String
    public var title: String
    public var unachievedDescription: String
    public var achievedDescription: String
    /// Points for completing it (0 while hidden).
    public var maximumPoints: Int
    public var isHidden: Bool
    /// Whether the completed image can be loaded (it exists and the achievement is revealed).
    public var hasImage: Bool

    public init(
        identifier: String, title: String, unachievedDescription: String, achievedDescription: String,
        maximumPoints: Int, isHidden: Bool, hasImage: Bool
    ) {
        self.identifier = identifier
        self.title = title
        self.unachievedDescription = unachievedDescription
        self.achievedDescription = achievedDescription
        self.maximumPoints = maximumPoints
        self.isHidden = isHidden
        self.hasImage = hasImage
    }
}

/// `GET /v1/achievement-descriptions`.
public struct AchievementDescriptionList: Codable, Sendable {
    public var descriptions: [AchievementDescriptionInfo]

    public init(descriptions: [AchievementDescriptionInfo]) {
        self.descriptions = descriptions
    }
}

/// One player's progress on one achievement.
public struct AchievementProgress: Codable, Sendable, Equatable {
    public var identifier: String
    /// 0…100; never lowered by a report.
    public var percentComplete: Double
    public var completedAt: Date?
    public var lastReportedAt: Date

    public init(identifier: String, percentComplete: Double, completedAt: Date?, lastReportedAt: Date) {
        self.identifier = identifier
        self.percentComplete = percentComplete
        self.completedAt = completedAt
        self.lastReportedAt = lastReportedAt
    }
}

/// A player's achievements in one game: progress and the points earned by completed ones.
public struct AchievementList: Codable, Sendable {
    public var achievements: [AchievementProgress]
    public var points: Int

    public init(achievements: [AchievementProgress], points: Int) {
        self.achievements = achievements
        self.points = points
    }
}

/// The answer to `POST /v1/achievements`: the stored progress of the achievements reported (by identifier, each
/// once), after the report — or, for a re-sent report, as it is now.
public struct AchievementReportResult: Codable, Sendable {
    /// The reported achievements' progress.
    public var achievements: [AchievementProgress]

    /// A result.
    public init(achievements: [AchievementProgress]) {
        self.achievements = achievements
    }
}

/// `POST /v1/achievements`: progress on several achievements, applied atomically and once per `reportID`.
public struct AchievementReportBatch: Codable, Sendable {
    /// Chosen by the device; a re-send with the same id is answered without applying it again.
    public var reportID: String
    public var achievements: [Entry]

    /// Progress on one achievement.
    public struct Entry: Codable, Sendable, Equatable {
        public var identifier: String
        public var percentComplete: Double

        public init(identifier: String, percentComplete: Double) {
            self.identifier = identifier
            self.percentComplete = percentComplete
        }
    }

    public init(reportID: String, achievements: [Entry]) {
        self.reportID = reportID
        self.achievements = achievements
    }
}

/// Pushed to a player's devices when they complete an achievement.
public struct AchievementCompleted: Codable, Sendable, Equatable {
    public var bundleID: String
    public var identifier: String
    public var completedAt: Date

    public init(bundleID: String, identifier: String, completedAt: Date) {
        self.bundleID = bundleID
        self.identifier = identifier
        self.completedAt = completedAt
    }
}
