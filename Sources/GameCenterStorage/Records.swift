/// A player account as stored.
public struct PlayerRecord: Sendable, Equatable {
    public var playerID: String
    public var environment: String
    /// Lower-cased account name, unique per environment.
    public var accountName: String
    public var passwordHash: String
    public var alias: String
    public var underage: Bool
    public var status: String?
    /// The player's newest event sequence number.
    public var eventSeq: Int64
    public var createdAt: Int64

    public init(
        playerID: String, environment: String, accountName: String, passwordHash: String, alias: String,
        underage: Bool, status: String? = nil, eventSeq: Int64 = 0, createdAt: Int64
    ) {
        self.playerID = playerID
        self.environment = environment
        self.accountName = accountName
        self.passwordHash = passwordHash
        self.alias = alias
        self.underage = underage
        self.status = status
        self.eventSeq = eventSeq
        self.createdAt = createdAt
    }
}

/// A signed-in session as stored: the token only as its SHA-256 hash.
public struct SessionRecord: Sendable, Equatable {
    public var sessionID: String
    public var tokenHash: String
    public var playerID: String
    public var bundleID: String
    public var environment: String
    public var createdAt: Int64
    public var expiresAt: Int64
    public var revokedAt: Int64?

    public init(
        sessionID: String, tokenHash: String, playerID: String, bundleID: String, environment: String,
        createdAt: Int64, expiresAt: Int64, revokedAt: Int64? = nil
    ) {
        self.sessionID = sessionID
        self.tokenHash = tokenHash
        self.playerID = playerID
        self.bundleID = bundleID
        self.environment = environment
        self.createdAt = createdAt
        self.expiresAt = expiresAt
        self.revokedAt = revokedAt
    }
}

/// Failed sign-ins for one account name or one client address, for throttling. An attempt counts as a failure from
/// before its password is checked until it succeeds.
public struct SignInFailures: Sendable, Equatable {
    public var failures: Int64
    public var windowStart: Int64
    public var lockedUntil: Int64

    public init(failures: Int64, windowStart: Int64, lockedUntil: Int64) {
        self.failures = failures
        self.windowStart = windowStart
        self.lockedUntil = lockedUntil
    }
}

/// A friend request as stored.
public struct FriendRequestRecord: Sendable, Equatable {
    /// Where a request stands; only `pending` can be answered.
    public enum Status: String, Sendable {
        case pending, accepted, declined
    }

    public var requestID: String
    public var fromPlayer: String
    public var toPlayer: String
    public var message: String?
    public var status: Status
    public var createdAt: Int64

    public init(requestID: String, fromPlayer: String, toPlayer: String, message: String?, status: Status, createdAt: Int64) {
        self.requestID = requestID
        self.fromPlayer = fromPlayer
        self.toPlayer = toPlayer
        self.message = message
        self.status = status
        self.createdAt = createdAt
    }
}

/// A stored realtime event.
public struct EventRecord: Sendable, Equatable {
    public var playerID: String
    public var seq: Int64
    public var kind: String
    public var payload: String
    public var createdAt: Int64

    public init(playerID: String, seq: Int64, kind: String, payload: String, createdAt: Int64) {
        self.playerID = playerID
        self.seq = seq
        self.kind = kind
        self.payload = payload
        self.createdAt = createdAt
    }
}

/// A game a player signed in to, and when last.
public struct PlayedGameRecord: Sendable, Equatable {
    public var bundleID: String
    public var lastPlayedAt: Int64

    public init(bundleID: String, lastPlayedAt: Int64) {
        self.bundleID = bundleID
        self.lastPlayedAt = lastPlayedAt
    }
}

/// One player's stored progress on one achievement of one game.
public struct AchievementProgressRecord: Sendable, Equatable {
    public var identifier: String
    public var percent: Double
    public var completedAt: Int64?
    public var lastReportedAt: Int64

    public init(identifier: String, percent: Double, completedAt: Int64?, lastReportedAt: Int64) {
        self.identifier = identifier
        self.percent = percent
        self.completedAt = completedAt
        self.lastReportedAt = lastReportedAt
    }
}

/// A stored report and the game and environment whose boards it is on.
public struct BoardScore: Sendable, Equatable {
    /// The game.
    public var bundleID: String
    /// `production` or `sandbox`.
    public var environment: String
    /// The report.
    public var record: ScoreRecord

    /// A report on the boards of `bundleID` in `environment`.
    public init(bundleID: String, environment: String, record: ScoreRecord) {
        self.bundleID = bundleID
        self.environment = environment
        self.record = record
    }
}

/// One stored score report.
public struct ScoreRecord: Sendable, Equatable {
    /// Orders reports: a report stored earlier has a smaller id.
    public var scoreID: Int64
    public var category: String
    public var playerID: String
    public var value: Int64
    public var context: UInt64
    /// When the score was earned, in milliseconds since 1970 (the `reported_at` column).
    public var earnedAt: Int64
    /// On a recurring leaderboard, the start (milliseconds since 1970) of the occurrence the score belongs to; nil on
    /// a classic one.
    public var occurrence: Int64?

    public init(scoreID: Int64, category: String, playerID: String, value: Int64, context: UInt64, earnedAt: Int64, occurrence: Int64? = nil) {
        self.scoreID = scoreID
        self.category = category
        self.playerID = playerID
        self.value = value
        self.context = context
        self.earnedAt = earnedAt
        self.occurrence = occurrence
    }
}

/// A score about to be stored.
public struct NewScore: Sendable, Equatable {
    public var category: String
    public var value: Int64
    public var context: UInt64
    /// Which values are better on this score's leaderboard.
    public var higherIsBetter: Bool
    /// When the score was earned, in milliseconds since 1970 (stored as its `reported_at`, which the rolling windows
    /// go by).
    public var earnedAt: Int64
    /// On a recurring leaderboard, the start of the occurrence the score belongs to (the one running when the server
    /// received it); nil on a classic one.
    public var occurrence: Int64?

    public init(category: String, value: Int64, context: UInt64, higherIsBetter: Bool, earnedAt: Int64, occurrence: Int64? = nil) {
        self.category = category
        self.value = value
        self.context = context
        self.higherIsBetter = higherIsBetter
        self.earnedAt = earnedAt
        self.occurrence = occurrence
    }
}

/// How many players of a game completed each of its achievements, out of how many played it.
public struct AchievementRarityRecord: Sendable, Equatable {
    /// Players who played the game in the environment.
    public var players: Int64
    /// Completions by achievement identifier; achievements nobody completed are missing.
    public var completions: [String: Int64]

    /// A count as storage read it.
    public init(players: Int64, completions: [String: Int64]) {
        self.players = players
        self.completions = completions
    }
}

/// The kinds of device reports applied once per id (`applied_reports.kind`): a score report and an achievement
/// report may carry the same id.
public enum ReportKind {
    /// Score reports.
    public static let scores = "scores"
    /// Achievement reports.
    public static let achievements = "achievements"
}

/// One achievement of an achievement report.
public struct AchievementReportEntry: Sendable, Equatable {
    /// The achievement.
    public var identifier: String
    /// The progress reported, 0 to 100.
    public var percent: Double
    /// The event payload stored in the player's stream when this report completes the achievement (used only
    /// when `percent` is 100).
    public var completionEvent: String

    /// An entry of a report.
    public init(identifier: String, percent: Double, completionEvent: String) {
        self.identifier = identifier
        self.percent = percent
        self.completionEvent = completionEvent
    }
}

/// What applying an achievement report did.
public struct AchievementReportOutcome: Sendable, Equatable {
    /// False when the report's id was applied before: nothing changed.
    public var applied: Bool
    /// The reported achievements' stored progress afterwards, by identifier.
    public var progress: [AchievementProgressRecord]
    /// The achievements this report completed, by identifier.
    public var newlyCompleted: [String]

    /// An outcome.
    public init(applied: Bool, progress: [AchievementProgressRecord], newlyCompleted: [String] = []) {
        self.applied = applied
        self.progress = progress
        self.newlyCompleted = newlyCompleted
    }
}
