import Foundation

/// One score as a device reports it; the server adds the player.
///
/// `value` and `context` travel as JSON integers; decoders must keep all 64 bits (Swift's and Python's do).
/// `date` is when the score was earned by the device's clock; the server corrects it by the device's clock offset
/// (``DeviceHeader/deviceTime``) and keeps it within ``Limits/maximumReportAge`` before now.
public struct ScoreReport: Codable, Sendable, Equatable {
    /// The leaderboard; nil reports to the game's default leaderboard.
    public var category: String?
    public var value: Int64
    /// Opaque to the server; returned with the score.
    public var context: UInt64
    /// Optional; when present it must be the signed-in player (scores are always the local player's).
    public var playerID: String?
    /// When the score was earned, by the device's clock; nil means when the server receives it.
    public var date: Date?

    public init(category: String?, value: Int64, context: UInt64, playerID: String? = nil, date: Date? = nil) {
        self.category = category
        self.value = value
        self.context = context
        self.playerID = playerID
        self.date = date
    }
}

/// `POST /v1/scores`: 1…100 scores of the signed-in player, applied all or none, once per `reportID`.
public struct ScoreReportBatch: Codable, Sendable {
    /// Chosen by the device (a UUID); a batch re-sent with the same id is applied once.
    public var reportID: String
    public var scores: [ScoreReport]

    public init(reportID: String, scores: [ScoreReport]) {
        self.reportID = reportID
        self.scores = scores
    }
}

/// A stored score: one report of one player to one leaderboard.
public struct ScoreEntry: Codable, Sendable, Equatable {
    /// The leaderboard the score was reported to (a member's category in an aggregate's listing).
    public var category: String
    public var playerID: String
    public var value: Int64
    public var context: UInt64
    /// When the score was earned (the report's date, corrected for the device's clock; see ``ScoreReport``).
    public var date: Date
    /// The value formatted by the leaderboard's format for the device's locale.
    public var formattedValue: String
    /// 1-based position in the query's scope; 0 when not ranked (as in a report's answer).
    public var rank: Int

    public init(category: String, playerID: String, value: Int64, context: UInt64, date: Date, formattedValue: String, rank: Int) {
        self.category = category
        self.playerID = playerID
        self.value = value
        self.context = context
        self.date = date
        self.formattedValue = formattedValue
        self.rank = rank
    }
}

/// The answer to a score report: the scores as stored, in the order sent.
public struct ScoreReportResult: Codable, Sendable {
    public var scores: [ScoreEntry]

    public init(scores: [ScoreEntry]) {
        self.scores = scores
    }
}

/// Which players a leaderboard query ranks.
public enum LeaderboardPlayerScope: String, WireEnum, Sendable, Hashable {
    /// Everyone in the game and environment.
    case global
    /// The signed-in player and their friends.
    case friendsOnly
}

/// Which reports a leaderboard query counts: rolling windows ending now.
public enum LeaderboardTimeScope: String, WireEnum, Sendable {
    /// The last 24 hours.
    case today
    /// The last 7 days.
    case week
    /// Every report.
    case allTime
}

/// `POST /v1/leaderboards/query`: one page of a leaderboard.
///
/// With `playerIDs`, the scope is those players (`playerScope` is ignored) and ranks are positions among them;
/// with `friendsOnly`, positions among the player and their friends; with `global`, positions on the whole board.
public struct LeaderboardQuery: Codable, Sendable, Hashable {
    /// nil: the game's default leaderboard.
    public var category: String?
    public var playerScope: LeaderboardPlayerScope
    public var timeScope: LeaderboardTimeScope
    /// First rank of the page, 1-based.
    public var rangeStart: Int
    /// Ranks in the page, 1…100.
    public var rangeLength: Int
    /// At most 100 players; when set, the scope is these players.
    public var playerIDs: [String]?

    public init(
        category: String?, playerScope: LeaderboardPlayerScope, timeScope: LeaderboardTimeScope,
        rangeStart: Int, rangeLength: Int, playerIDs: [String]? = nil
    ) {
        self.category = category
        self.playerScope = playerScope
        self.timeScope = timeScope
        self.rangeStart = rangeStart
        self.rangeLength = rangeLength
        self.playerIDs = playerIDs
    }
}

/// One page of a leaderboard.
public struct LeaderboardPage: Codable, Sendable, Equatable {
    /// The leaderboard asked for (the default one's category when the query named none).
    public var category: String
    /// Its title in the device's locale.
    public var title: String
    /// The entries whose ranks fall in the asked range, best first.
    public var scores: [ScoreEntry]
    /// The signed-in player's entry in this scope, when they have one.
    public var localPlayerScore: ScoreEntry?
    /// How many entries the scope holds.
    public var maxRange: Int

    public init(category: String, title: String, scores: [ScoreEntry], localPlayerScore: ScoreEntry?, maxRange: Int) {
        self.category = category
        self.title = title
        self.scores = scores
        self.localPlayerScore = localPlayerScore
        self.maxRange = maxRange
    }
}

/// A leaderboard's identity as `GET /v1/leaderboards` lists it.
public struct LeaderboardInfo: Codable, Sendable, Equatable {
    public var category: String
    /// Title in the device's locale.
    public var title: String
    public var isDefault: Bool
    /// For aggregates: the member categories; empty otherwise.
    public var members: [String]

    public init(category: String, title: String, isDefault: Bool, members: [String]) {
        self.category = category
        self.title = title
        self.isDefault = isDefault
        self.members = members
    }
}

/// `GET /v1/leaderboards`: the game's leaderboards in manifest order, aggregates last.
public struct LeaderboardList: Codable, Sendable {
    public var leaderboards: [LeaderboardInfo]

    public init(leaderboards: [LeaderboardInfo]) {
        self.leaderboards = leaderboards
    }
}

/// One entry of `GET /admin/v1/games/{bundleID}/leaderboards/{category}`: a score with the player's alias.
public struct AdminScoreEntry: Codable, Sendable, Equatable {
    public var score: ScoreEntry
    public var alias: String

    public init(score: ScoreEntry, alias: String) {
        self.score = score
        self.alias = alias
    }
}

/// A page of a leaderboard as studios (and the web app) read it.
public struct AdminLeaderboardPage: Codable, Sendable, Equatable {
    public var category: String
    public var environment: Environment
    public var timeScope: LeaderboardTimeScope
    public var entries: [AdminScoreEntry]
    /// Entries on the board.
    public var maxRange: Int

    public init(category: String, environment: Environment, timeScope: LeaderboardTimeScope, entries: [AdminScoreEntry], maxRange: Int) {
        self.category = category
        self.environment = environment
        self.timeScope = timeScope
        self.entries = entries
        self.maxRange = maxRange
    }
}

/// The answer to `DELETE /admin/v1/games/{bundleID}/players/{playerID}/scores`.
public struct RemovedScores: Codable, Sendable, Equatable {
    /// Reports erased.
    public var removed: Int

    public init(removed: Int) {
        self.removed = removed
    }
}

/// `POST /admin/v1/clock` (servers started with `--test-clock` only): moves the server's clock forward.
public struct ClockAdvance: Codable, Sendable, Equatable {
    /// Seconds to move forward, 0…31,536,000 (a year).
    public var seconds: Double

    public init(seconds: Double) {
        self.seconds = seconds
    }
}

/// The server's clock after a move.
public struct ClockReading: Codable, Sendable, Equatable {
    public var now: Date

    public init(now: Date) {
        self.now = now
    }
}
