import JMESPath
import Foundation

/// `POST /v1/matchmaking/requests`: ask to be put into a match (auto-match, invitations, or both).
///
/// The request waits on the server only while the device's realtime channel is open; the match is pushed as a
/// ``EventKind/matchFound`` event naming `requestID`.
public struct MatchRequestBody: Codable, Sendable, Equatable {
    /// Chosen by the device (at most 64 characters); names the request in events, status and cancel calls.
    public var requestID: String
    public var minPlayers: Int
    public var maxPlayers: Int
    /// Only requests with the same group are matched; 0 is the default group.
    public var playerGroup: UInt32
    /// The role this player wants (a bit mask); 0 for none.
    public var playerAttributes: UInt32
    /// A hosted match hands out player ids only; hosted and relayed requests never mix.
    public var hosted: Bool
    /// Friends to invite; empty seats are filled by auto-match.
    public var playersToInvite: [String]
    /// Shown to the invitees.
    public var inviteMessage: String?
    /// Adds players to this running match (the caller must be a member) instead of forming a new one.
    public var matchID: String?
    /// Matches only players of the party with this code (the caller must be in it, through an activity); its sizes
    /// are the activity's. The host's match forms first, with the host's friends in the party.
    public var partyCode: String?
    /// Apple's rule-based matchmaking: the queue (of the game's manifest) whose rule set matches this request; nil is
    /// classic matchmaking. With a queue, `playerGroup` and `playerAttributes` are ignored.
    public var queueName: String?
    /// What the queue's rules see of the requesting player (`requests[].properties`); the key `gc` is reserved.
    public var properties: [String: JSONValue]?
    /// What the rules see of each invited player, by player id (each must be in `playersToInvite`).
    public var recipientProperties: [String: [String: JSONValue]]?
    /// The game's version, for `areCompatibleAppVersions` (nil: the rules see `"1.0"`).
    public var appVersion: String?
    /// The device's platform as rules see it (`platform`), such as `LINUX`, `MAC_OS` or `IOS`.
    public var platform: String?

    public init(
        requestID: String, minPlayers: Int, maxPlayers: Int, playerGroup: UInt32 = 0, playerAttributes: UInt32 = 0,
        hosted: Bool = false, playersToInvite: [String] = [], inviteMessage: String? = nil, matchID: String? = nil, partyCode: String? = nil,
        queueName: String? = nil, properties: [String: JSONValue]? = nil, recipientProperties: [String: [String: JSONValue]]? = nil,
        appVersion: String? = nil, platform: String? = nil
    ) {
        self.queueName = queueName
        self.properties = properties
        self.recipientProperties = recipientProperties
        self.appVersion = appVersion
        self.platform = platform
        self.partyCode = partyCode
        self.requestID = requestID
        self.minPlayers = minPlayers
        self.maxPlayers = maxPlayers
        self.playerGroup = playerGroup
        self.playerAttributes = playerAttributes
        self.hosted = hosted
        self.playersToInvite = playersToInvite
        self.inviteMessage = inviteMessage
        self.matchID = matchID
    }
}

/// Where a match request stands (`GET /v1/matchmaking/requests/{id}`; also the answer to creating one).
public struct MatchRequestStatus: Codable, Sendable, Equatable {
    public enum State: String, Codable, Sendable {
        /// In the queue, waiting for players (or for invitees to answer).
        case waiting
        /// Part of a started match: `matchID` names it.
        case matched
        /// Not waiting: cancelled, left with its device's channel, or failed.
        case gone
    }

    public var requestID: String
    public var state: State
    /// The match being formed (invitations, added players) or formed.
    public var matchID: String?
    /// Players in the forming match now, the requester included.
    public var players: Int
    /// The size the forming match aims for (the smallest maximum of its members).
    public var maxPlayers: Int
    /// The invitees and their answers so far (invitation lobbies only).
    public var invitees: [InviteeStatus]
    /// Why it is still waiting: a waiting request of a rule-based queue only.
    public var explanation: MatchRequestExplanation?

    public init(
        requestID: String, state: State, matchID: String?, players: Int, maxPlayers: Int, invitees: [InviteeStatus],
        explanation: MatchRequestExplanation? = nil
    ) {
        self.requestID = requestID
        self.state = state
        self.matchID = matchID
        self.players = players
        self.maxPlayers = maxPlayers
        self.invitees = invitees
        self.explanation = explanation
    }
}

/// Why a request of a rule-based queue is still waiting: the other waiting requests of its queue, how many of them
/// passed each stage of the rules with it, the rules that turned away the most, and a wait estimate.
public struct MatchRequestExplanation: Codable, Sendable, Equatable {
    /// Whole seconds the request has waited (the `secondsInQueue` its rules see now).
    public var secondsInQueue: Int
    /// The other requests waiting in its queue.
    public var waiting: Int
    /// Of those, the ones that may play with it: a player range that fits and every COMPATIBLE rule passed.
    public var compatible: Int
    /// Each stage in Apple's order — `size`, each COMPATIBLE rule, each DISTANCE rule, each MATCH rule, `teams` — with
    /// how many requests it was tried on and how many passed. COMPATIBLE rules are tried on every waiting request (the
    /// oldest 2,000 at most); the later stages on the compatible ones, each with this request alone.
    public var stages: [MatchRuleStage]
    /// The stages that turned away the most requests, most first (at most three; empty when none turned any away).
    public var blockingRules: [String]
    /// How long requests of this queue matched in the last 15 minutes waited, the median in seconds; nil when fewer
    /// than ``MatchRequestExplanation/estimateMinimumSamples`` were matched ("not enough data").
    public var estimatedWaitSeconds: Double?
    /// How many matched requests the estimate comes from.
    public var estimateSamples: Int
    /// Where the rules' expansions stand for this request: each aged value its rules compute (Apple's `agedValues`,
    /// `agedAsSteppedValue`), its step and the value the rule uses now. Empty when no rule ages (or from a server that
    /// does not tell).
    public var expansions: [MatchRuleExpansion]

    /// The fewest matched requests an estimate is made from.
    public static let estimateMinimumSamples = 5

    public init(
        secondsInQueue: Int, waiting: Int, compatible: Int, stages: [MatchRuleStage], blockingRules: [String], estimatedWaitSeconds: Double?,
        estimateSamples: Int, expansions: [MatchRuleExpansion] = []
    ) {
        self.secondsInQueue = secondsInQueue
        self.waiting = waiting
        self.compatible = compatible
        self.stages = stages
        self.blockingRules = blockingRules
        self.estimatedWaitSeconds = estimatedWaitSeconds
        self.estimateSamples = estimateSamples
        self.expansions = expansions
    }

    private enum CodingKeys: String, CodingKey {
        case secondsInQueue, waiting, compatible, stages, blockingRules, estimatedWaitSeconds, estimateSamples, expansions
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            secondsInQueue: try container.decode(Int.self, forKey: .secondsInQueue), waiting: try container.decode(Int.self, forKey: .waiting),
            compatible: try container.decode(Int.self, forKey: .compatible), stages: try container.decode([MatchRuleStage].self, forKey: .stages),
            blockingRules: try container.decode([String].self, forKey: .blockingRules),
            estimatedWaitSeconds: try container.decodeIfPresent(Double.self, forKey: .estimatedWaitSeconds),
            estimateSamples: try container.decode(Int.self, forKey: .estimateSamples),
            expansions: try container.decodeIfPresent([MatchRuleExpansion].self, forKey: .expansions) ?? [])
    }
}

/// One aged value of a rule as it stands for a waiting request (see ``MatchRequestExplanation/expansions``): the
/// call evaluated for this request alone.
public struct MatchRuleExpansion: Codable, Sendable, Equatable {
    /// The rule's reference name.
    public var rule: String
    /// The call as the rule writes it, e.g. `agedValues(avg(requests[].secondsInQueue), \`20\`, [\`40\`], [\`10\`])`.
    public var expression: String
    /// The age the call is given now, in seconds.
    public var seconds: Double
    /// The steps taken: 0 before the first.
    public var step: Int
    /// The steps there are (the value changes no more after the last).
    public var steps: Int
    /// The value the rule uses now.
    public var value: Double

    public init(rule: String, expression: String, seconds: Double, step: Int, steps: Int, value: Double) {
        self.rule = rule
        self.expression = expression
        self.seconds = seconds
        self.step = step
        self.steps = steps
        self.value = value
    }
}

/// One stage of a rule set as it stands for one waiting request (see ``MatchRequestExplanation/stages``).
public struct MatchRuleStage: Codable, Sendable, Equatable {
    /// The rule's reference name; `size` for the player ranges, `teams` for the team assignment.
    public var name: String
    /// `size`, `compatible`, `distance`, `match` or `team`.
    public var type: String
    /// Requests it was tried on.
    public var tried: Int
    /// Requests that passed it (a DISTANCE rule passes every request it gives a number).
    public var passed: Int
    /// DISTANCE rules: the smallest distance to a compatible request; nil for other stages or when none was tried.
    public var nearestDistance: Double?

    public init(name: String, type: String, tried: Int, passed: Int, nearestDistance: Double? = nil) {
        self.name = name
        self.type = type
        self.tried = tried
        self.passed = passed
        self.nearestDistance = nearestDistance
    }
}

/// An invited player's state as the inviter sees it.
public enum InviteeState: String, WireEnum, Sendable {
    /// The invitation was sent and is not answered yet.
    case pending
    /// The invitee joined the forming match.
    case accepted
    /// The invitee said no (or the invitation expired).
    case declined
    /// The match started with the invitee in it.
    case connected
}

/// One invitee of a forming match.
public struct InviteeStatus: Codable, Sendable, Equatable {
    public var playerID: String
    public var state: InviteeState

    public init(playerID: String, state: InviteeState) {
        self.playerID = playerID
        self.state = state
    }
}

/// An invitation to a match, as the invitee receives it (pushed as ``EventKind/matchInvitation`` and listed by
/// `GET /v1/invitations` until answered or expired; pushed again as ``EventKind/invitationAccepted`` when the invitee
/// accepts it in the Game Center app).
public struct InvitationInfo: Codable, Sendable, Equatable {
    public var invitationID: String
    public var matchID: String
    public var bundleID: String
    public var inviter: String
    public var inviterAlias: String
    public var hosted: Bool
    public var minPlayers: Int
    public var maxPlayers: Int
    public var message: String?
    public var expiresAt: Date
    /// When the invitee accepted it in the Game Center app (their game joins it without asking again); nil while
    /// it waits for an answer.
    public var acceptedAt: Date?

    public init(
        invitationID: String, matchID: String, bundleID: String, inviter: String, inviterAlias: String, hosted: Bool,
        minPlayers: Int, maxPlayers: Int, message: String?, expiresAt: Date, acceptedAt: Date? = nil
    ) {
        self.invitationID = invitationID
        self.matchID = matchID
        self.bundleID = bundleID
        self.inviter = inviter
        self.inviterAlias = inviterAlias
        self.hosted = hosted
        self.minPlayers = minPlayers
        self.maxPlayers = maxPlayers
        self.message = message
        self.expiresAt = expiresAt
        self.acceptedAt = acceptedAt
    }
}

/// `GET /v1/invitations`: the caller's unanswered, unexpired invitations for the device's game, oldest first (those
/// accepted in the Game Center app but not yet joined included, with ``InvitationInfo/acceptedAt``).
public struct InvitationList: Codable, Sendable {
    public var invitations: [InvitationInfo]

    public init(invitations: [InvitationInfo]) {
        self.invitations = invitations
    }
}

/// `POST /v1/matchmaking/requests/{id}/invitations`: invite more friends into the open seats of the forming match a
/// waiting request opened (the matchmaking screen inviting while it is shown).
public struct MatchInvitationsBody: Codable, Sendable {
    /// Friends of the caller who are not in the forming match and were not invited to it.
    public var playerIDs: [String]
    /// Shown with the invitations, like a match request's `inviteMessage`.
    public var inviteMessage: String?

    public init(playerIDs: [String], inviteMessage: String? = nil) {
        self.playerIDs = playerIDs
        self.inviteMessage = inviteMessage
    }
}

/// `POST /v1/invitations/{id}/accept`: join the inviter's forming match; the match is pushed when it starts.
public struct AcceptInvitation: Codable, Sendable {
    /// Names the acceptance in the ``EventKind/matchFound`` event, like a match request's id.
    public var requestID: String

    public init(requestID: String) {
        self.requestID = requestID
    }
}

/// Pushed to an invitee when an invitation can no longer be accepted (the inviter left or the match started
/// without them).
public struct InvitationCancelled: Codable, Sendable, Equatable {
    public var invitationID: String
    public var bundleID: String
    public var reason: String

    public init(invitationID: String, bundleID: String, reason: String) {
        self.invitationID = invitationID
        self.bundleID = bundleID
        self.reason = reason
    }
}

/// Pushed to the inviter when an invitee answers (``EventKind/inviteeAnswered``).
public struct InviteeAnswered: Codable, Sendable, Equatable {
    public var matchID: String
    public var bundleID: String
    public var requestID: String
    public var playerID: String
    public var state: InviteeState

    public init(matchID: String, bundleID: String, requestID: String, playerID: String, state: InviteeState) {
        self.matchID = matchID
        self.bundleID = bundleID
        self.requestID = requestID
        self.playerID = playerID
        self.state = state
    }
}

/// A started match (``EventKind/matchFound``, `GET /v1/matches/{id}`).
public struct MatchInfo: Codable, Sendable, Equatable {
    public var matchID: String
    public var bundleID: String
    public var hosted: Bool
    /// Every member, the receiver included, in the order they joined.
    public var players: [String]
    /// The request (or invitation acceptance) of the receiving player that this match answers; nil for a
    /// member who was already in the match (players added to a running match).
    public var requestID: String?
    /// The base URL of the server whose relay carries the match (several nodes: the node that formed it, when its
    /// members came through different nodes); nil: the server the device uses.
    public var relayURL: String?
    /// A rule-based match: each member's properties as the rules saw them, with Game Center's own under `gc` (`gc.team`
    /// when the rule set has teams), by player id. Nil for classic matches.
    public var playerProperties: [String: [String: JSONValue]]?

    public init(
        matchID: String, bundleID: String, hosted: Bool, players: [String], requestID: String?, relayURL: String? = nil,
        playerProperties: [String: [String: JSONValue]]? = nil
    ) {
        self.playerProperties = playerProperties
        self.matchID = matchID
        self.bundleID = bundleID
        self.hosted = hosted
        self.players = players
        self.requestID = requestID
        self.relayURL = relayURL
    }
}

/// `GET /v1/matchmaking/queues/{queueName}/activity`: how busy a rule-based queue is (Apple's `queryQueueActivity`).
public struct QueueActivity: Codable, Sendable, Equatable {
    public var queueName: String
    /// Requests that entered the queue in the last `windowSeconds`.
    public var requests: Int
    public var windowSeconds: Int

    public init(queueName: String, requests: Int, windowSeconds: Int) {
        self.queueName = queueName
        self.requests = requests
        self.windowSeconds = windowSeconds
    }
}

/// A match request that ended without a match (``EventKind/matchRequestFailed``): every invitee declined and
/// auto-match was not allowed, or the match could not be stored.
public struct MatchRequestFailed: Codable, Sendable, Equatable {
    public var requestID: String
    public var bundleID: String
    public var reason: String

    public init(requestID: String, bundleID: String, reason: String) {
        self.requestID = requestID
        self.bundleID = bundleID
        self.reason = reason
    }
}

/// A member left a started match (``EventKind/matchPlayerLeft``).
public struct MatchPlayerLeft: Codable, Sendable, Equatable {
    public var matchID: String
    public var bundleID: String
    public var playerID: String

    public init(matchID: String, bundleID: String, playerID: String) {
        self.matchID = matchID
        self.bundleID = bundleID
        self.playerID = playerID
    }
}

/// Friends the player chose in the Game Center app to play a game with: kept for the game (one choice per player and
/// game, a new one replaces it) until a device of it claims it (`POST /v1/matchmaking/play-with-friends/claim`) or it
/// expires; announced to running devices as ``EventKind/playWithFriends``. The game makes a request inviting them.
public struct PlayWithFriends: Codable, Sendable, Equatable {
    public var bundleID: String
    public var playerIDs: [String]
    /// The friends were chosen for a turn-based match (GameKit's `didRequestMatchWithOtherPlayers`); absent: real-time.
    public var turnBased: Bool?

    public init(bundleID: String, playerIDs: [String], turnBased: Bool? = nil) {
        self.bundleID = bundleID
        self.playerIDs = playerIDs
        self.turnBased = turnBased
    }
}

/// `POST /v1/matchmaking/play-with-friends/claim`: the friends chosen for the device's game that were waiting for it,
/// handed out once (a second claim, from this device or another, gets none of them).
public struct PlayWithFriendsList: Codable, Sendable, Equatable {
    public var choices: [PlayWithFriends]

    public init(choices: [PlayWithFriends]) {
        self.choices = choices
    }
}

/// `GET /v1/matchmaking/activity[?playerGroup=N]`: players of this game (and group) who asked for a match
/// within the last `windowSeconds`.
public struct MatchmakingActivity: Codable, Sendable, Equatable {
    public var players: Int
    public var windowSeconds: Int

    public init(players: Int, windowSeconds: Int) {
        self.players = players
        self.windowSeconds = windowSeconds
    }
}
