import Foundation

/// A challenge a game offers, from its manifest (`GET /v1/challenge-definitions`).
public struct ChallengeDefinitionInfo: Codable, Sendable, Equatable {
    public var identifier: String
    /// Title and details in the device's locale.
    public var title: String
    public var details: String?
    /// The leaderboard it is played on.
    public var leaderboard: String
    /// Repeatable: only scores reported after joining count. Not repeatable: a participant's best on the board counts.
    public var isRepeatable: Bool
    /// The lengths a new challenge may be given, in seconds; empty on a recurring board (a challenge lasts the rest of
    /// the occurrence).
    public var durationOptions: [Double]
    /// The scores after joining that count per participant; nil: any number.
    public var attempts: Int?
    /// The most players in one challenge, its creator included.
    public var maxParticipants: Int

    public init(
        identifier: String, title: String, details: String?, leaderboard: String, isRepeatable: Bool, durationOptions: [Double], attempts: Int?,
        maxParticipants: Int
    ) {
        self.identifier = identifier
        self.title = title
        self.details = details
        self.leaderboard = leaderboard
        self.isRepeatable = isRepeatable
        self.durationOptions = durationOptions
        self.attempts = attempts
        self.maxParticipants = maxParticipants
    }
}

/// `GET /v1/challenge-definitions`.
public struct ChallengeDefinitionList: Codable, Sendable, Equatable {
    public var definitions: [ChallengeDefinitionInfo]

    public init(definitions: [ChallengeDefinitionInfo]) {
        self.definitions = definitions
    }
}

/// `POST /v1/challenges`: a new challenge, its creator its first participant.
public struct ChallengeCreateBody: Codable, Sendable, Equatable {
    /// The definition's identifier.
    public var definition: String
    /// One of the definition's ``ChallengeDefinitionInfo/durationOptions`` (default: the first); leave it out on a
    /// recurring board.
    public var durationSeconds: Double?
    /// Friends invited (at most the definition's participants less one); anyone else joins with the challenge's code.
    public var invite: [String]?

    public init(definition: String, durationSeconds: Double? = nil, invite: [String]? = nil) {
        self.definition = definition
        self.durationSeconds = durationSeconds
        self.invite = invite
    }
}

/// `POST /v1/challenges/join`: joins the challenge with this code (invited or not).
public struct ChallengeJoinBody: Codable, Sendable, Equatable {
    /// The challenge's code, such as `7KQ2-M9XD` (letters in either case).
    public var code: String

    public init(code: String) {
        self.code = code
    }
}

/// Where a challenge is.
public enum ChallengeState: String, Codable, Sendable, CaseIterable {
    /// Taking scores until ``ChallengeInfo/endsAt``.
    case open
    /// Over: the standings are final.
    case ended
}

/// Where a player is in a challenge.
public enum ChallengeParticipantStatus: String, Codable, Sendable, CaseIterable {
    /// Invited, has not joined.
    case invited
    /// Playing: their scores count.
    case joined
    /// Left: their scores no longer count.
    case left
}

/// One player of a challenge, with their standing.
public struct ChallengeParticipant: Codable, Sendable, Equatable {
    public var playerID: String
    public var alias: String
    public var status: ChallengeParticipantStatus
    public var joinedAt: Date?
    /// The score that counts for them, and its formatting for the device's locale; nil until they have one.
    public var value: Int64?
    public var formattedValue: String?
    /// Scores reported since they joined that counted, and how many more may (nil: any number).
    public var attemptsUsed: Int
    public var attemptsLeft: Int?
    /// 1-based among the joined participants with a score (equal values share a rank); 0 without one.
    public var rank: Int

    public init(
        playerID: String, alias: String, status: ChallengeParticipantStatus, joinedAt: Date?, value: Int64?, formattedValue: String?,
        attemptsUsed: Int, attemptsLeft: Int?, rank: Int
    ) {
        self.playerID = playerID
        self.alias = alias
        self.status = status
        self.joinedAt = joinedAt
        self.value = value
        self.formattedValue = formattedValue
        self.attemptsUsed = attemptsUsed
        self.attemptsLeft = attemptsLeft
        self.rank = rank
    }
}

/// A challenge, with its participants best first.
public struct ChallengeInfo: Codable, Sendable, Equatable {
    public var challengeID: String
    /// The definition's identifier, title (device's locale) and board.
    public var definition: String
    public var title: String
    public var leaderboard: String
    public var isRepeatable: Bool
    public var creatorID: String
    /// Shared to let anyone join (`POST /v1/challenges/join`): two groups of four letters or digits, `-` between.
    public var code: String
    public var createdAt: Date
    public var endsAt: Date
    /// On a recurring board, the occurrence it is played in (its start).
    public var occurrence: Date?
    public var state: ChallengeState
    /// Joined players by rank, then those without a score, then the invited, then those who left.
    public var participants: [ChallengeParticipant]
    /// When ended: the players with the best score (several on a tie; none when nobody scored).
    public var winners: [String]
    /// The challenge this one is a rematch of.
    public var rematchOf: String?

    public init(
        challengeID: String, definition: String, title: String, leaderboard: String, isRepeatable: Bool, creatorID: String, code: String,
        createdAt: Date, endsAt: Date, occurrence: Date?, state: ChallengeState, participants: [ChallengeParticipant], winners: [String],
        rematchOf: String?
    ) {
        self.challengeID = challengeID
        self.definition = definition
        self.title = title
        self.leaderboard = leaderboard
        self.isRepeatable = isRepeatable
        self.creatorID = creatorID
        self.code = code
        self.createdAt = createdAt
        self.endsAt = endsAt
        self.occurrence = occurrence
        self.state = state
        self.participants = participants
        self.winners = winners
        self.rematchOf = rematchOf
    }
}

/// `GET /v1/challenges`: the signed-in player's challenges in the game (invited, joined; open first, then those ended
/// in the last 30 days), newest first.
public struct ChallengeList: Codable, Sendable, Equatable {
    public var challenges: [ChallengeInfo]

    public init(challenges: [ChallengeInfo]) {
        self.challenges = challenges
    }
}

/// What happened in a challenge.
public enum ChallengeEventKind: String, Codable, Sendable, CaseIterable {
    /// The player was invited (``ChallengeEventInfo/playerID`` invited them).
    case invited
    /// ``ChallengeEventInfo/playerID`` joined.
    case joined
    /// ``ChallengeEventInfo/playerID`` left.
    case left
    /// ``ChallengeEventInfo/playerID`` reported a score that counts.
    case score
    /// ``ChallengeEventInfo/playerID``'s score put them ahead of the player told.
    case overtaken
    /// One hour is left.
    case endingSoon
    /// The challenge is over; ``ChallengeInfo/winners`` won.
    case ended
}

/// Payload of ``EventKind/challenge``: sent to every participant (and invitee) a change concerns.
public struct ChallengeEventInfo: Codable, Sendable, Equatable {
    /// The challenge's game (a player's events carry every game's).
    public var bundleID: String
    public var kind: ChallengeEventKind
    /// The player who acted (invited, joined, left, scored, overtook); nil for the clock's notices.
    public var playerID: String?
    /// The challenge after the change.
    public var challenge: ChallengeInfo

    public init(bundleID: String, kind: ChallengeEventKind, playerID: String?, challenge: ChallengeInfo) {
        self.bundleID = bundleID
        self.kind = kind
        self.playerID = playerID
        self.challenge = challenge
    }
}
