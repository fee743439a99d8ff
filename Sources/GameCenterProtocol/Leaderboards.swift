import Crypto
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
    /// Up to ``Limits/maximumScoreDetails`` integers the game attaches (Steam's "details"): sent to the studio's
    /// verifier and kept with a verified board's submission.
    public var details: [Int64]?
    /// An input log or replay for the studio's verifier (base64 on the wire), only on a board that requires
    /// verification; a report's attachments total at most ``Limits/maximumScoreAttachmentBytes``.
    public var attachment: Data?

    public init(
        category: String?, value: Int64, context: UInt64, playerID: String? = nil, date: Date? = nil, details: [Int64]? = nil,
        attachment: Data? = nil
    ) {
        self.category = category
        self.value = value
        self.context = context
        self.playerID = playerID
        self.date = date
        self.details = details
        self.attachment = attachment
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
    /// On a recurring leaderboard, the start of the occurrence the score counts in (the one running when the server
    /// received it); nil on a classic one.
    public var occurrence: Date?
    /// In a report's answer, on a tournament board with limited attempts: the attempts the player has left in this
    /// occurrence after this report.
    public var attemptsLeft: Int?

    public init(
        category: String, playerID: String, value: Int64, context: UInt64, date: Date, formattedValue: String, rank: Int, occurrence: Date? = nil,
        attemptsLeft: Int? = nil
    ) {
        self.category = category
        self.playerID = playerID
        self.value = value
        self.context = context
        self.date = date
        self.formattedValue = formattedValue
        self.rank = rank
        self.occurrence = occurrence
        self.attemptsLeft = attemptsLeft
    }
}

/// The answer to a score report: the scores as stored, in the order sent.
public struct ScoreReportResult: Codable, Sendable {
    /// The scores stored (ranked): those on boards without verification and those the verifier accepted.
    public var scores: [ScoreEntry]
    /// The report's scores on boards that require verification, each with its state; nil when it has none.
    public var submissions: [ScoreSubmissionInfo]?

    public init(scores: [ScoreEntry], submissions: [ScoreSubmissionInfo]? = nil) {
        self.scores = scores
        self.submissions = submissions
    }
}

/// Where a score on a leaderboard that requires verification stands.
public enum ScoreVerificationState: String, WireEnum, Sendable {
    /// The studio's verifier is being asked (for at most the board's budget).
    case verifying
    /// It counts: the verifier accepted it, or the studio released it from quarantine.
    case accepted
    /// The verifier did not answer in time (or could not be reached): it does not count until the studio releases or
    /// rejects it. Never silently accepted.
    case quarantined
    /// The verifier or the studio refused it, with a reason.
    case rejected
}

/// A score reported to a leaderboard that requires verification (manifest `verification`), as its player and the
/// studio see it.
public struct ScoreSubmissionInfo: Codable, Sendable, Equatable {
    public var submissionID: String
    public var category: String
    public var playerID: String
    public var value: Int64
    public var context: UInt64
    /// When the score was earned.
    public var date: Date
    /// Its place (from 0) among the scores of the report it came in.
    public var position: Int
    public var state: ScoreVerificationState
    /// Why it was rejected (the verifier's or the studio's words), or why it was quarantined.
    public var reason: String?
    /// When it was reported.
    public var submittedAt: Date
    /// When it was accepted or rejected.
    public var decidedAt: Date?
    /// On a recurring leaderboard, the start of the occurrence it counts in.
    public var occurrence: Date?

    public init(
        submissionID: String, category: String, playerID: String, value: Int64, context: UInt64, date: Date, position: Int,
        state: ScoreVerificationState, reason: String?, submittedAt: Date, decidedAt: Date?, occurrence: Date?
    ) {
        self.submissionID = submissionID
        self.category = category
        self.playerID = playerID
        self.value = value
        self.context = context
        self.date = date
        self.position = position
        self.state = state
        self.reason = reason
        self.submittedAt = submittedAt
        self.decidedAt = decidedAt
        self.occurrence = occurrence
    }
}

/// `GET /v1/score-submissions`: the signed-in player's submissions in this game, newest first.
public struct ScoreSubmissionList: Codable, Sendable {
    public var submissions: [ScoreSubmissionInfo]

    public init(submissions: [ScoreSubmissionInfo]) {
        self.submissions = submissions
    }
}

/// `POST /v1/report-keys`: the key this session signs score reports with (for boards whose `writePolicy` is
/// `signed`). Each signed report carries `X-GameCenter-Report-Counter` (above every counter this key signed before)
/// and `X-GameCenter-Report-Signature: v1=HEX`, the HMAC-SHA256 with the key of `COUNTER.BODY`. Asking again replaces
/// the key (and starts its counter again).
public struct ReportKey: Codable, Sendable {
    /// 32 random bytes, base64.
    public var key: String
    /// The last counter the key signed (0 for a new key).
    public var counter: Int64

    public init(key: String, counter: Int64) {
        self.key = key
        self.counter = counter
    }
}

/// The headers of a signed score report.
public enum ReportSignature {
    /// The report's counter: a whole number above every counter the session's key signed before.
    public static let counterHeader = "X-GameCenter-Report-Counter"
    /// `v1=` and the lowercase hex HMAC-SHA256, with the session's report key, of `COUNTER.BODY`.
    public static let signatureHeader = "X-GameCenter-Report-Signature"

    /// The two headers of a report whose body is `body`, signed with `key` and `counter`.
    public static func headers(key: SymmetricKey, counter: Int64, body: some DataProtocol) -> [(String, String)] {
        var mac = HMAC<SHA256>(key: key)
        mac.update(data: Data("\(counter).".utf8))
        mac.update(data: body)
        let digits = Array("0123456789abcdef".utf8)
        var hex: [UInt8] = Array("v1=".utf8)
        hex.reserveCapacity(67)
        for byte in mac.finalize() {
            hex.append(digits[Int(byte >> 4)])
            hex.append(digits[Int(byte & 0x0F)])
        }
        return [(counterHeader, String(counter)), (signatureHeader, String(decoding: hex, as: UTF8.self))]
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
    /// Recurring leaderboards: the start of the occurrence to read (as an answer's ``LeaderboardOccurrence/start`` or
    /// ``LeaderboardOccurrence/previousStart`` gave it); nil reads the running occurrence, or the last one when none
    /// runs. `timeScope` does not apply to recurring leaderboards.
    public var occurrence: Date?
    /// Recurring leaderboards whose manifest keeps lifetime bests: true ranks each player's best over every occurrence.
    public var lifetimeBest: Bool?

    public init(
        category: String?, playerScope: LeaderboardPlayerScope, timeScope: LeaderboardTimeScope,
        rangeStart: Int, rangeLength: Int, playerIDs: [String]? = nil, occurrence: Date? = nil, lifetimeBest: Bool? = nil
    ) {
        self.category = category
        self.playerScope = playerScope
        self.timeScope = timeScope
        self.rangeStart = rangeStart
        self.rangeLength = rangeLength
        self.playerIDs = playerIDs
        self.occurrence = occurrence
        self.lifetimeBest = lifetimeBest
    }
}

/// Whether a leaderboard ranks every score ever reported or starts again at each occurrence.
public enum LeaderboardKind: String, WireEnum, Sendable, Hashable {
    /// One board for all time (with the rolling `today` and `week` windows).
    case classic
    /// A board that starts empty at each occurrence of its schedule.
    case recurring
}

/// One occurrence of a recurring leaderboard: `[start, end)`, with its neighbours and its times in the schedule's zone.
public struct LeaderboardOccurrence: Codable, Sendable, Equatable, Hashable {
    /// When it starts (inclusive).
    public var start: Date
    /// When it ends (exclusive): a score the server receives at `end` belongs to the next occurrence, or to none.
    public var end: Date
    /// The next occurrence's start; nil when the schedule names none.
    public var nextStart: Date?
    /// The previous occurrence's start; nil when this is the first one still kept.
    public var previousStart: Date?
    /// The schedule's IANA time zone (`UTC` for a start-duration-interval schedule).
    public var timeZone: String
    /// `start` in that zone, as ISO 8601 with its offset (`2026-11-01T00:00:00-04:00`).
    public var localStart: String
    /// `end` in that zone.
    public var localEnd: String
    /// Whether it runs now (by the server's clock).
    public var isRunning: Bool

    public init(
        start: Date, end: Date, nextStart: Date?, previousStart: Date?, timeZone: String, localStart: String, localEnd: String, isRunning: Bool
    ) {
        self.start = start
        self.end = end
        self.nextStart = nextStart
        self.previousStart = previousStart
        self.timeZone = timeZone
        self.localStart = localStart
        self.localEnd = localEnd
        self.isRunning = isRunning
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
    /// Recurring leaderboards: the occurrence this page ranks (nil on classic ones and in the lifetime-best view).
    public var occurrence: LeaderboardOccurrence?

    public init(
        category: String, title: String, scores: [ScoreEntry], localPlayerScore: ScoreEntry?, maxRange: Int, occurrence: LeaderboardOccurrence? = nil
    ) {
        self.category = category
        self.title = title
        self.scores = scores
        self.localPlayerScore = localPlayerScore
        self.maxRange = maxRange
        self.occurrence = occurrence
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
    /// Classic or recurring; nil from servers older than recurring leaderboards (classic).
    public var kind: LeaderboardKind?
    /// The manifest's description in the device's locale, when it has one.
    public var description: String?
    /// Recurring leaderboards: the running occurrence, or the last one when none runs, or the first when none has started.
    public var occurrence: LeaderboardOccurrence?
    /// Recurring leaderboards: whether a query may ask for lifetime bests (``LeaderboardQuery/lifetimeBest``).
    public var lifetimeBest: Bool?

    public init(
        category: String, title: String, isDefault: Bool, members: [String], kind: LeaderboardKind? = nil, description: String? = nil,
        occurrence: LeaderboardOccurrence? = nil, lifetimeBest: Bool? = nil
    ) {
        self.category = category
        self.title = title
        self.isDefault = isDefault
        self.members = members
        self.kind = kind
        self.description = description
        self.occurrence = occurrence
        self.lifetimeBest = lifetimeBest
    }
}

/// A set of a game's leaderboards, as `GET /v1/leaderboard-sets` lists it.
public struct LeaderboardSetInfo: Codable, Sendable, Equatable {
    public var identifier: String
    /// Title in the device's locale.
    public var title: String
    /// Sets of several games that share boards name one group.
    public var groupIdentifier: String?
    /// The categories of its leaderboards (hidden ones left out), in manifest order.
    public var leaderboards: [String]

    public init(identifier: String, title: String, groupIdentifier: String?, leaderboards: [String]) {
        self.identifier = identifier
        self.title = title
        self.groupIdentifier = groupIdentifier
        self.leaderboards = leaderboards
    }
}

/// `GET /v1/leaderboard-sets`: the game's leaderboard sets in manifest order.
public struct LeaderboardSetList: Codable, Sendable {
    public var sets: [LeaderboardSetInfo]

    public init(sets: [LeaderboardSetInfo]) {
        self.sets = sets
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

/// A player's entry in the running occurrence of a tournament board (`POST` and `GET /v1/leaderboards/{category}/entry`).
public struct TournamentEntry: Codable, Sendable, Equatable {
    public var category: String
    /// The occurrence entered.
    public var occurrence: LeaderboardOccurrence
    /// Scores reported to it so far.
    public var attemptsUsed: Int
    /// Scores the player may still report to it (the board's attempts and any granted); nil: no limit.
    public var attemptsLeft: Int?
    /// Players in the occurrence, and the most it takes (nil: any number).
    public var entrants: Int
    public var maxSize: Int?
    public var joinedAt: Date

    public init(
        category: String, occurrence: LeaderboardOccurrence, attemptsUsed: Int, attemptsLeft: Int?, entrants: Int, maxSize: Int?, joinedAt: Date
    ) {
        self.category = category
        self.occurrence = occurrence
        self.attemptsUsed = attemptsUsed
        self.attemptsLeft = attemptsLeft
        self.entrants = entrants
        self.maxSize = maxSize
        self.joinedAt = joinedAt
    }
}

/// `POST /admin/v1/games/{bundleID}/leaderboards/{category}/players/{playerID}/attempts`: attempts granted to a joined
/// player in the running occurrence, beyond the board's.
public struct TournamentAttemptGrant: Codable, Sendable, Equatable {
    /// Environment of the player's entry (default sandbox).
    public var environment: Environment?
    /// 1…1000.
    public var extra: Int

    public init(environment: Environment? = nil, extra: Int) {
        self.environment = environment
        self.extra = extra
    }
}

/// `POST /admin/v1/games/{bundleID}/leaderboards/{category}/end`: ends the running occurrence of a tournament now.
public struct TournamentEndBody: Codable, Sendable, Equatable {
    /// The environment whose occurrence ends (default sandbox).
    public var environment: Environment?

    public init(environment: Environment? = nil) {
        self.environment = environment
    }
}

/// `POST /admin/v1/games/{bundleID}/leaderboards/{category}/start`: starts a tournament's next occurrence now.
public struct TournamentStartBody: Codable, Sendable, Equatable {
    /// The environment whose occurrence starts (default sandbox).
    public var environment: Environment?

    public init(environment: Environment? = nil) {
        self.environment = environment
    }
}

/// Whether an occurrence event records a start or an end.
public enum LeaderboardOccurrenceEventKind: String, WireEnum, Sendable {
    case started, ended
}

/// A recurring leaderboard's occurrence started or ended: recorded once, by whichever node saw it first (or, when
/// every node was down at the moment, by the first one back).
public struct LeaderboardOccurrenceEvent: Codable, Sendable, Equatable {
    /// Orders the events; ask for those after the last one read.
    public var eventID: Int64
    public var category: String
    public var environment: Environment
    public var kind: LeaderboardOccurrenceEventKind
    /// The occurrence's start and end (for a tournament an admin ended early, when it was ended).
    public var start: Date
    public var end: Date
    /// When the server recorded it (at or after `start` for a start, `end` for an end).
    public var recordedAt: Date
    /// An end's final standings: the top entries (at most ``LeaderboardOccurrenceEvent/standingsLength``), empty for a start.
    public var standings: [AdminScoreEntry]

    /// Entries in an end's standings.
    public static let standingsLength = 10

    public init(
        eventID: Int64, category: String, environment: Environment, kind: LeaderboardOccurrenceEventKind, start: Date, end: Date, recordedAt: Date,
        standings: [AdminScoreEntry]
    ) {
        self.eventID = eventID
        self.category = category
        self.environment = environment
        self.kind = kind
        self.start = start
        self.end = end
        self.recordedAt = recordedAt
        self.standings = standings
    }
}

/// `GET /admin/v1/games/{bundleID}/occurrence-events`: events after `after`, oldest first.
public struct LeaderboardOccurrenceEventList: Codable, Sendable, Equatable {
    public var events: [LeaderboardOccurrenceEvent]

    public init(events: [LeaderboardOccurrenceEvent]) {
        self.events = events
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
    /// Stops the clock at this time (now to a year ahead; `seconds` 0): it stands there, to the millisecond, until
    /// moved again; later moves move the stopped time.
    public var freezeAt: Date?

    public init(seconds: Double, freezeAt: Date? = nil) {
        self.seconds = seconds
        self.freezeAt = freezeAt
    }
}

/// The server's clock after a move.
public struct ClockReading: Codable, Sendable, Equatable {
    public var now: Date

    public init(now: Date) {
        self.now = now
    }
}
