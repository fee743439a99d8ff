import Foundation

/// A game as configured by its manifest, after every rule of `MANIFEST.md` has been checked.
public struct Game: Sendable, Equatable {
    /// Reverse-DNS bundle identifier, unique on the server.
    public var bundleID: String
    /// Display name.
    public var name: String
    /// When set, devices must present it in `X-GameCenter-Client-Key`.
    public var clientKey: String?
    /// Locale whose texts every localized field must have.
    public var defaultLocale: String
    /// Leaderboards that accept scores, in manifest order.
    public var leaderboards: [LeaderboardDefinition]
    /// Aggregate leaderboards, in manifest order.
    public var aggregates: [AggregateDefinition]
    /// Leaderboard sets, in manifest order.
    public var leaderboardSets: [LeaderboardSetDefinition] = []
    /// Achievements, in manifest order.
    public var achievements: [AchievementDefinition]
    /// Challenges, in manifest order.
    public var challenges: [ChallengeDefinition] = []
    /// Activities (with party codes), in manifest order.
    public var activities: [ActivityDefinition] = []
    /// How the matchmaker treats this game's requests.
    public var matchmaking = MatchmakingSettings()
    /// The limits of this game's turn-based matches.
    public var turnBased = TurnBasedSettings()
    /// The limits and conflict policy of this game's saved games.
    public var savedGames = SavedGameSettings()
    /// The file the game was loaded from.
    public var manifestPath: String
}

/// The manifest's `turnBased` section: the limits of a game's turn-based matches, published to devices with every
/// match (``GameCenterProtocol/TurnBasedMatchInfo``) and enforced by the server.
public struct TurnBasedSettings: Sendable, Equatable {
    /// The most bytes of match data a turn may store (default 1 MiB).
    public var matchDataBytes = 1 << 20
    /// The most bytes one exchange or reply may carry (default 64 KiB).
    public var exchangeDataBytes = 64 << 10
    /// The most active exchanges one player may have started in a match at once (default 4).
    public var exchangesPerPlayer = 4
    /// The most turn-based matches of this game one player may be playing at once (default 100).
    public var openMatchesPerPlayer = 100

    /// The defaults.
    public init() {}

    /// Allowed match data limits: 1 KiB to 4 MiB.
    public static let matchDataBytesRange = 1024...(4 << 20)
    /// Allowed exchange data limits: 1 KiB to 1 MiB.
    public static let exchangeDataBytesRange = 1024...(1 << 20)
    /// Allowed exchange counts per player.
    public static let exchangesPerPlayerRange = 1...16
    /// Allowed open matches per player.
    public static let openMatchesPerPlayerRange = 1...1000
    /// The longest turn or exchange timeout: 90 days.
    static let maximumTimeoutMillis: Int64 = 90 * 86_400_000
    /// How often one player may remind the others of one match.
    static let reminderIntervalMillis: Int64 = 60_000
    /// Longest turn, exchange, reminder or invitation message, in characters.
    static let maximumMessageLength = 280
}

/// The manifest's `savedGames` section: the limits of a player's saves of the game (published with every list,
/// enforced by the server) and how a conflict between two devices' saves is settled.
public struct SavedGameSettings: Sendable, Equatable {
    /// How a conflict is settled.
    public enum ConflictPolicy: String, Sendable, CaseIterable {
        /// Every conflicting version is kept until the game resolves them (the default).
        case manual
        /// The version saved last wins.
        case mostRecent
        /// The version with the most `playedSeconds` wins.
        case longestPlayed
        /// The version with the highest `progress` wins.
        case highestProgress
    }

    /// The most bytes one save may have (default 32 MiB).
    public var saveBytes: Int64 = 32 << 20
    /// The most bytes the current versions of one player's saves may have together (default 256 MiB).
    public var totalBytes: Int64 = 256 << 20
    /// The most saves one player may have (default 200).
    public var saves = 200
    /// The longest save name, in characters (default 255).
    public var nameLength = 255
    /// How a conflict is settled (default: kept for the game to resolve).
    public var conflictPolicy = ConflictPolicy.manual

    /// The defaults.
    public init() {}

    /// Allowed sizes per save: 1 KiB to 1 GiB.
    public static let saveBytesRange: ClosedRange<Int64> = 1024...(1 << 30)
    /// Allowed totals per player: 1 KiB to 16 GiB.
    public static let totalBytesRange: ClosedRange<Int64> = 1024...(16 << 30)
    /// Allowed save counts per player.
    public static let savesRange = 1...10_000
    /// Allowed name lengths.
    public static let nameLengthRange = 1...1024
    /// The size of every upload chunk but the last: 1 MiB.
    public static let chunkBytes = 1 << 20
    /// Versions kept of each save (the current ones and the latest superseded ones), for restoring.
    public static let keptVersions = 10
}

/// The manifest's `matchmaking` section.
public struct MatchmakingSettings: Sendable, Equatable {
    /// How long a match that has enough players but room for more waits for them, in milliseconds (default 2 s).
    public var fillMilliseconds: Int64 = 2000
    /// When true, every request must name a role (`playerAttributes` ≠ 0).
    public var rolesRequired = false
    /// How long an invitation can be answered, in seconds; nil (the default) leaves it to the server
    /// (``GameCenterApp/Configuration/invitationLifetime``, `--invitation-lifetime`).
    public var invitationSeconds: Int?
    /// How long a match member may stay silent on the relay before the others are told it disconnected, in
    /// milliseconds (default 10 s).
    public var timeoutMilliseconds: Int64 = 10_000
    /// The most players a relayed match of this game may have (default 4, the seed's peer-to-peer cap; at most 16).
    /// Hosted matches always allow ``GameCenterProtocol/Limits/matchPlayers``.
    public var maxRelayedPlayers = 4
    /// When true, members of this game's matches never reach each other directly: all their data goes through the
    /// relay, and no player learns another's address (default false: direct paths where they work).
    public var relayOnly = false
    /// Apple's rule sets, by reference name (`matchmaking.ruleSets`, or imported from App Store Connect).
    public var ruleSets: [String: MatchmakingRuleSet] = [:]
    /// Apple's queues, by reference name: a request naming one (`queueName`) is matched by its rule set.
    public var queues: [String: MatchmakingQueueDefinition] = [:]
    /// The queue this game's classic requests (no `queueName`) wait in: the one whose `classicMatchmakingBundleIds`
    /// lists the game's bundle id; nil: classic requests are matched classically.
    public var classicQueue: String?
    /// Groups of app versions that play together (`areCompatibleAppVersions`); a version always plays with itself.
    public var compatibleAppVersions: [[String]] = []

    /// The defaults.
    public init() {}

    /// Allowed fill times, in seconds.
    public static let fillSecondsRange = 0.0...30.0
    /// Allowed invitation lifetimes, in seconds (10 s to a day), for manifests and `--invitation-lifetime` alike.
    public static let invitationSecondsRange = 10...86_400
    /// Allowed relay timeouts, in seconds.
    public static let timeoutSecondsRange = 0.5...300.0
    /// Allowed caps on relayed match sizes.
    public static let maxRelayedPlayersRange = 2...16
}

/// Texts by locale identifier (`en`, `ja`, `pt-BR`); always has the game's default locale.
public typealias LocalizedText = [String: String]

/// How a leaderboard's 64-bit value is shown.
public enum ScoreFormat: String, Sendable, CaseIterable {
    case integer, fixedPoint1, fixedPoint2, fixedPoint3, elapsedMinute, elapsedSecond, elapsedHundredth, moneyWhole, money2
}

/// Which scores are better.
public enum ScoreOrder: String, Sendable, CaseIterable {
    /// Higher is better.
    case descending
    /// Lower is better.
    case ascending
}

/// One leaderboard category.
public struct LeaderboardDefinition: Sendable, Equatable {
    public var category: String
    public var isDefault: Bool
    public var title: LocalizedText
    public var format: ScoreFormat
    /// Suffixes by locale; no space is added.
    public var suffix: [String: PluralSuffix]
    public var order: ScoreOrder
    /// ISO 4217 code for money formats.
    public var currency: String
    /// The values a report may hold (manifest `minValue`/`maxValue`; by default any but −2⁶³, and no negative
    /// elapsed time).
    public var valueRange: ClosedRange<Int64>
    /// Accepts scores but is never listed (manifest `hidden`).
    public var isHidden = false
    /// Shown under the title (manifest `description`), when given.
    public var description: LocalizedText? = nil
    /// When its occurrences run (manifest `recurring`); nil for a classic leaderboard.
    public var recurrence: Recurrence? = nil
    /// Who may report scores to it (manifest `writePolicy`).
    public var writePolicy: WritePolicy = .open
    /// Whether devices' scores must pass the studio's verifier before they count (manifest `verification`).
    public var verification: Verification? = nil

    /// Who may report scores to a leaderboard.
    public enum WritePolicy: String, Sendable, Equatable, CaseIterable {
        /// Players' devices and the studio's game servers (server keys with `scores:write`).
        case open
        /// Only the studio's game servers: a device's report is refused with `leaderboard.server_only`.
        case serverOnly
        /// Devices' reports must be signed with their session's report key and a counter above the last one
        /// (`leaderboard.signature_required`, `.signature_invalid`, `.counter_used`); game servers as `open`.
        case signed
    }

    /// A board whose devices' scores go to the studio's verifier (the game's webhook endpoint that hears
    /// `score.verify`) before they count: accepted, rejected with a reason, or quarantined when no answer comes within
    /// the budget.
    public struct Verification: Sendable, Equatable {
        /// How long the verifier has to answer, in milliseconds (manifest `timeoutSeconds`, 0.1 to 30; 5 by default).
        public var timeoutMillis: Int64 = 5000
    }

    /// A recurring leaderboard's schedule and what it keeps.
    public struct Recurrence: Sendable, Equatable {
        public var schedule: OccurrenceSchedule
        /// How many occurrences stay queryable, the running one included; nil keeps every one.
        public var keep: Int?
        /// Whether players may also read each player's best over every occurrence (the lifetime best).
        public var lifetimeBest: Bool
        /// Entry rules when the board is a tournament (manifest `tournament`).
        public var tournament: TournamentRules? = nil
    }

    /// A tournament's entry rules, per occurrence.
    public struct TournamentRules: Sendable, Equatable {
        /// The first this many players who join are in; nil: any number.
        public var maxSize: Int?
        /// Scores one player may report per occurrence (beyond it: only extra attempts an admin granted); nil: any.
        public var attempts: Int?
        /// Whether a player must join before reporting; when false, the first score joins.
        public var joinRequired: Bool
    }

    /// The values a leaderboard of `format` takes when its manifest sets no bounds.
    public static func defaultValueRange(for format: ScoreFormat) -> ClosedRange<Int64> {
        switch format {
        case .elapsedMinute, .elapsedSecond, .elapsedHundredth: 0...Int64.max
        default: -Int64.max...Int64.max
        }
    }
}

/// A named group of a game's leaderboards (manifest `leaderboardSets`), as Apple's leaderboard sets: a board may be
/// in several sets, classic and recurring mixed.
public struct LeaderboardSetDefinition: Sendable, Equatable {
    public var identifier: String
    public var title: LocalizedText
    /// Sets of several games that share boards name one group.
    public var groupIdentifier: String?
    /// Categories of leaderboards or aggregates, in manifest order.
    public var leaderboards: [String]
}

/// A leaderboard that ranks its members' scores together.
public struct AggregateDefinition: Sendable, Equatable {
    public var category: String
    public var isDefault: Bool
    public var title: LocalizedText
    public var members: [String]
}

/// One achievement.
public struct AchievementDefinition: Sendable, Equatable {
    public var identifier: String
    public var title: LocalizedText
    public var unachievedDescription: LocalizedText
    public var achievedDescription: LocalizedText
    public var points: Int
    public var hidden: Bool
    /// The completed image (PNG bytes), when the manifest names one.
    public var image: Data?
}
