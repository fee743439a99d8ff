import Foundation

/// A turn-based match as the server keeps it (`GET /v1/turn-matches/{id}`, and inside every turn-based event).
///
/// Indexes into ``participants`` name seats everywhere (the next participants, exchange recipients, outcomes).
/// ``version`` grows by one with every change and numbers the match's own event log; every write that depends on
/// what the device read carries it back, and a stale one is refused.
public struct TurnBasedMatchInfo: Codable, Sendable, Equatable {
    public var matchID: String
    public var bundleID: String
    public var createdAt: Date
    /// GameKit's `GKTurnBasedMatch.Status` raw value: open 1, ended 2, matching 3.
    public var status: Int
    public var version: Int64
    public var participants: [TurnBasedParticipantInfo]
    /// The seat whose turn it is; nil once the match ended.
    public var currentIndex: Int?
    /// The localizable message of the last turn (its key, with arguments substituted by the device).
    public var message: String?
    /// Bytes of match data stored now.
    public var matchDataSize: Int
    /// The most bytes of match data a turn may store (the game's manifest, default 1 MiB).
    public var matchDataMaximumSize: Int
    /// The most bytes one exchange or reply may carry (default 64 KiB).
    public var exchangeDataMaximumSize: Int
    /// The most active exchanges one player may have started at once (default 4).
    public var exchangeMaxInitiatedExchangesPerPlayer: Int
    /// Exchanges not yet resolved (active, complete, or canceled and not yet seen by the current player).
    public var exchanges: [TurnBasedExchangeInfo]

    public init(
        matchID: String, bundleID: String, createdAt: Date, status: Int, version: Int64, participants: [TurnBasedParticipantInfo],
        currentIndex: Int?, message: String?, matchDataSize: Int, matchDataMaximumSize: Int, exchangeDataMaximumSize: Int,
        exchangeMaxInitiatedExchangesPerPlayer: Int, exchanges: [TurnBasedExchangeInfo]
    ) {
        self.matchID = matchID
        self.bundleID = bundleID
        self.createdAt = createdAt
        self.status = status
        self.version = version
        self.participants = participants
        self.currentIndex = currentIndex
        self.message = message
        self.matchDataSize = matchDataSize
        self.matchDataMaximumSize = matchDataMaximumSize
        self.exchangeDataMaximumSize = exchangeDataMaximumSize
        self.exchangeMaxInitiatedExchangesPerPlayer = exchangeMaxInitiatedExchangesPerPlayer
        self.exchanges = exchanges
    }
}

/// One seat of a turn-based match.
public struct TurnBasedParticipantInfo: Codable, Sendable, Equatable {
    /// Nil while the seat waits for auto-match.
    public var playerID: String?
    /// GameKit's `GKTurnBasedParticipant.Status` raw value: invited 1, declined 2, matching 3, active 4, done 5.
    public var status: Int
    /// GameKit's `GKTurnBasedMatch.Outcome` raw value (0: none yet).
    public var outcome: Int
    public var lastTurnDate: Date?
    /// When the turn passes on if this participant does not take it (only while it is theirs).
    public var timeoutDate: Date?

    public init(playerID: String?, status: Int, outcome: Int, lastTurnDate: Date?, timeoutDate: Date?) {
        self.playerID = playerID
        self.status = status
        self.outcome = outcome
        self.lastTurnDate = lastTurnDate
        self.timeoutDate = timeoutDate
    }
}

/// An exchange between participants, outside the turn order.
public struct TurnBasedExchangeInfo: Codable, Sendable, Equatable {
    public var exchangeID: String
    public var senderIndex: Int
    public var recipientIndexes: [Int]
    public var data: Data
    public var message: String?
    public var sendDate: Date
    public var timeoutDate: Date?
    public var completionDate: Date?
    /// GameKit's `GKTurnBasedExchange.Status` raw value: active 1, complete 2, resolved 3, canceled 4.
    public var status: Int
    public var replies: [TurnBasedExchangeReplyInfo]

    public init(
        exchangeID: String, senderIndex: Int, recipientIndexes: [Int], data: Data, message: String?, sendDate: Date, timeoutDate: Date?,
        completionDate: Date?, status: Int, replies: [TurnBasedExchangeReplyInfo]
    ) {
        self.exchangeID = exchangeID
        self.senderIndex = senderIndex
        self.recipientIndexes = recipientIndexes
        self.data = data
        self.message = message
        self.sendDate = sendDate
        self.timeoutDate = timeoutDate
        self.completionDate = completionDate
        self.status = status
        self.replies = replies
    }
}

/// A recipient's reply to an exchange.
public struct TurnBasedExchangeReplyInfo: Codable, Sendable, Equatable {
    public var recipientIndex: Int
    public var data: Data
    public var message: String?
    public var replyDate: Date

    public init(recipientIndex: Int, data: Data, message: String?, replyDate: Date) {
        self.recipientIndex = recipientIndex
        self.data = data
        self.message = message
        self.replyDate = replyDate
    }
}

/// `GET /v1/turn-matches`: the caller's matches in the device's game that they have not removed.
public struct TurnBasedMatchList: Codable, Sendable, Equatable {
    public var matches: [TurnBasedMatchInfo]

    public init(matches: [TurnBasedMatchInfo]) {
        self.matches = matches
    }
}

/// `POST /v1/turn-matches`: find a match with an open seat, or start one (with invitations sent at the first turn).
public struct TurnBasedFindBody: Codable, Sendable, Equatable {
    public var minPlayers: Int
    public var maxPlayers: Int
    public var playerGroup: UInt32
    /// Friends invited to seats of a new match; the other seats are auto-matched.
    public var playersToInvite: [String]
    /// Shown to the invitees.
    public var inviteMessage: String?

    public init(minPlayers: Int, maxPlayers: Int, playerGroup: UInt32 = 0, playersToInvite: [String] = [], inviteMessage: String? = nil) {
        self.minPlayers = minPlayers
        self.maxPlayers = maxPlayers
        self.playerGroup = playerGroup
        self.playersToInvite = playersToInvite
        self.inviteMessage = inviteMessage
    }
}

/// A write in turn: `POST /v1/turn-matches/{id}/turn` with ``action``.
///
/// ``version`` is the match version the device read; a stale one is refused (`turnBasedInvalidTurn`).
public struct TurnBasedTurnBody: Codable, Sendable, Equatable {
    /// What the current participant does.
    public enum Action: String, WireEnum, Sendable {
        /// Stores the data and passes the turn to the first of ``TurnBasedTurnBody/nextParticipants`` who can take it.
        case endTurn
        /// Stores the data; the turn stays.
        case saveTurn
        /// Leaves with ``TurnBasedTurnBody/outcome`` and passes the turn on.
        case quit
        /// Ends the match with ``TurnBasedTurnBody/outcomes``.
        case endMatch
        /// Stores merged data and resolves ``TurnBasedTurnBody/resolvedExchangeIDs``.
        case saveMerged
    }

    public var action: Action
    public var version: Int64
    public var matchData: Data
    /// The turn's message (endTurn, quit).
    public var message: String?
    /// Seat indexes in the order the turn should try them (endTurn, quit).
    public var nextParticipants: [Int]
    /// Seconds the next participant has; 0 for none (GameKit's `GKTurnTimeoutNone`).
    public var turnTimeout: Double
    /// The quitter's outcome (quit).
    public var outcome: Int
    /// Every seat's outcome, by index (endMatch; endTurn may set outcomes of seats that are done).
    public var outcomes: [Int]
    /// The exchanges this data merges (saveMerged).
    public var resolvedExchangeIDs: [String]
    /// Scores of the match's participants, stored in the same transaction as the match's end (endMatch only; each
    /// names its participant, nil for the caller).
    public var scores: [ScoreReport]
    /// The caller's achievement progress, stored with the match's end (endMatch only).
    public var achievements: [AchievementReportBatch.Entry]

    public init(
        action: Action, version: Int64, matchData: Data, message: String? = nil, nextParticipants: [Int] = [], turnTimeout: Double = 0,
        outcome: Int = 0, outcomes: [Int] = [], resolvedExchangeIDs: [String] = [], scores: [ScoreReport] = [],
        achievements: [AchievementReportBatch.Entry] = []
    ) {
        self.action = action
        self.version = version
        self.matchData = matchData
        self.message = message
        self.nextParticipants = nextParticipants
        self.turnTimeout = turnTimeout
        self.outcome = outcome
        self.outcomes = outcomes
        self.resolvedExchangeIDs = resolvedExchangeIDs
        self.scores = scores
        self.achievements = achievements
    }

    /// Decodes a body; only `action`, `version` and `matchData` are required, the others default to none.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        action = try container.decode(Action.self, forKey: .action)
        version = try container.decode(Int64.self, forKey: .version)
        matchData = try container.decode(Data.self, forKey: .matchData)
        message = try container.decodeIfPresent(String.self, forKey: .message)
        nextParticipants = try container.decodeIfPresent([Int].self, forKey: .nextParticipants) ?? []
        turnTimeout = try container.decodeIfPresent(Double.self, forKey: .turnTimeout) ?? 0
        outcome = try container.decodeIfPresent(Int.self, forKey: .outcome) ?? 0
        outcomes = try container.decodeIfPresent([Int].self, forKey: .outcomes) ?? []
        resolvedExchangeIDs = try container.decodeIfPresent([String].self, forKey: .resolvedExchangeIDs) ?? []
        scores = try container.decodeIfPresent([ScoreReport].self, forKey: .scores) ?? []
        achievements = try container.decodeIfPresent([AchievementReportBatch.Entry].self, forKey: .achievements) ?? []
    }
}

/// A participant's act out of turn: `POST /v1/turn-matches/{id}/participant` with ``action``.
public struct TurnBasedParticipantBody: Codable, Sendable, Equatable {
    public enum Action: String, WireEnum, Sendable {
        case accept
        case decline
        /// Leaves with ``TurnBasedParticipantBody/outcome`` while it is someone else's turn.
        case quit
        /// Hides the match from the caller's list (once it ended or the caller left it).
        case remove
        /// Reminds ``TurnBasedParticipantBody/recipients`` (rate-limited per sender and match).
        case remind
    }

    public var action: Action
    public var outcome: Int
    public var recipients: [Int]
    public var message: String?

    public init(action: Action, outcome: Int = 0, recipients: [Int] = [], message: String? = nil) {
        self.action = action
        self.outcome = outcome
        self.recipients = recipients
        self.message = message
    }
}

/// `POST /v1/turn-matches/{id}/exchanges`: start an exchange.
public struct TurnBasedExchangeBody: Codable, Sendable, Equatable {
    public var recipients: [Int]
    public var data: Data
    public var message: String?
    /// Seconds the recipients have to reply; 0 for none.
    public var timeout: Double

    public init(recipients: [Int], data: Data, message: String?, timeout: Double) {
        self.recipients = recipients
        self.data = data
        self.message = message
        self.timeout = timeout
    }
}

/// `POST /v1/turn-matches/{id}/exchanges/{exchangeID}`: reply to an exchange, or (its sender) cancel it.
public struct TurnBasedExchangeAnswerBody: Codable, Sendable, Equatable {
    public enum Action: String, WireEnum, Sendable {
        case reply
        case cancel
    }

    public var action: Action
    public var data: Data
    public var message: String?

    public init(action: Action, data: Data = Data(), message: String?) {
        self.action = action
        self.data = data
        self.message = message
    }
}

/// What happened in a turn-based match: the payload of ``EventKind/turnBased`` events, one per change and recipient.
public struct TurnBasedEventInfo: Codable, Sendable, Equatable {
    /// The kinds of change, each its own (GameKit folds most into one callback that does not say which).
    public enum Kind: String, WireEnum, Sendable {
        case turnPassed
        case turnSaved
        case timedOut
        case participantQuit
        case invited
        case accepted
        case declined
        case joined
        case exchangeRequest
        case exchangeCancelled
        case exchangeCompleted
        case exchangesMerged
        case matchEnded
        case reminder
        case removed
        /// The recipient asked in the Game Center app to leave the match: their game quits it with the outcome it
        /// chooses (GameKit's `wantsToQuitMatch`); nothing changed yet.
        case quitRequested
    }

    public var kind: Kind
    /// The match as it is after the change (its ``TurnBasedMatchInfo/version`` numbers the change); exchanges here
    /// carry no data (``exchange`` does).
    public var match: TurnBasedMatchInfo
    /// The seat that acted (nil: the server's clock).
    public var actorIndex: Int?
    /// Whether the change made it the recipient's turn.
    public var becameActive: Bool
    /// The exchange concerned, with its data and replies (exchange kinds).
    public var exchange: TurnBasedExchangeInfo?
    /// The reminder's or invitation's message.
    public var message: String?

    public init(
        kind: Kind, match: TurnBasedMatchInfo, actorIndex: Int?, becameActive: Bool, exchange: TurnBasedExchangeInfo? = nil, message: String? = nil
    ) {
        self.kind = kind
        self.match = match
        self.actorIndex = actorIndex
        self.becameActive = becameActive
        self.exchange = exchange
        self.message = message
    }
}

/// The answer to starting an exchange: the exchange, and the match with it.
public struct TurnBasedExchangeSent: Codable, Sendable, Equatable {
    public var exchange: TurnBasedExchangeInfo
    public var match: TurnBasedMatchInfo

    public init(exchange: TurnBasedExchangeInfo, match: TurnBasedMatchInfo) {
        self.exchange = exchange
        self.match = match
    }
}
