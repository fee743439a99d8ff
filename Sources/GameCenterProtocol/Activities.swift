import Foundation

/// How an activity is played (Apple's `GKGameActivityPlayStyle`).
public enum ActivityPlayStyle: String, Codable, Sendable, CaseIterable {
    case unspecified
    /// Everyone plays at the same time (a real-time match).
    case synchronous
    /// Players take turns or play apart (a turn-based match, a challenge).
    case asynchronous
}

/// An activity a game offers, from its manifest (`GET /v1/activity-definitions`).
public struct ActivityDefinitionInfo: Codable, Sendable, Equatable {
    public var identifier: String
    /// Title and details in the device's locale.
    public var title: String
    public var details: String?
    /// The players one match of the activity takes (nil: the manifest says none; the activity is not matched).
    public var minPlayers: Int?
    public var maxPlayers: Int?
    public var playStyle: ActivityPlayStyle
    /// Whether players join each other with a party code.
    public var supportsPartyCode: Bool
    /// Properties every activity of this definition starts with.
    public var defaultProperties: [String: String]

    public init(
        identifier: String, title: String, details: String?, minPlayers: Int?, maxPlayers: Int?, playStyle: ActivityPlayStyle, supportsPartyCode: Bool,
        defaultProperties: [String: String]
    ) {
        self.identifier = identifier
        self.title = title
        self.details = details
        self.minPlayers = minPlayers
        self.maxPlayers = maxPlayers
        self.playStyle = playStyle
        self.supportsPartyCode = supportsPartyCode
        self.defaultProperties = defaultProperties
    }
}

/// `GET /v1/activity-definitions`.
public struct ActivityDefinitionList: Codable, Sendable, Equatable {
    public var definitions: [ActivityDefinitionInfo]

    public init(definitions: [ActivityDefinitionInfo]) {
        self.definitions = definitions
    }
}

/// `POST /v1/activities`: starts an activity for the signed-in player.
public struct ActivityStartBody: Codable, Sendable, Equatable {
    /// The definition's identifier.
    public var definition: String
    /// Join the party with this code, or start one with it when no live party of the game has it (letters in either
    /// case). Left out on a definition that supports party codes: the server makes a code.
    public var partyCode: String?
    /// Properties set over the definition's defaults (at most 20; keys up to 64 characters, values up to 256).
    public var properties: [String: String]?

    public init(definition: String, partyCode: String? = nil, properties: [String: String]? = nil) {
        self.definition = definition
        self.partyCode = partyCode
        self.properties = properties
    }
}

/// Where an activity is (Apple's `GKGameActivity.State`).
public enum ActivityState: String, Codable, Sendable, CaseIterable {
    /// Made for the player (they joined a party in the Game Center app) and not started on a device yet.
    case initialized
    case active
    case paused
    /// Over; its party (when it was the host's) takes no more players.
    case ended
}

/// `POST /v1/activities/{activityID}/state`: starts, pauses, resumes or ends an activity.
public struct ActivityStateBody: Codable, Sendable, Equatable {
    /// `active` (start or resume), `paused` or `ended`.
    public var state: ActivityState

    public init(state: ActivityState) {
        self.state = state
    }
}

/// One player's activity, as stored.
public struct ActivityInfo: Codable, Sendable, Equatable {
    public var activityID: String
    public var bundleID: String
    /// The definition's identifier.
    public var definition: String
    public var state: ActivityState
    /// The party's code, while the player is in a party.
    public var partyCode: String?
    /// The player who started the party (whose friends are kept together when the party needs several matches).
    public var partyHostID: String?
    /// The players in the party, in the order they joined (the host first).
    public var partyPlayerIDs: [String]
    public var properties: [String: String]
    public var createdAt: Date
    public var startedAt: Date?
    /// The last time it was started or resumed (nil while paused or ended).
    public var resumedAt: Date?
    public var endedAt: Date?
    /// How long it has been active, pauses left out, up to when this answer was made.
    public var activeSeconds: Double

    public init(
        activityID: String, bundleID: String, definition: String, state: ActivityState, partyCode: String?, partyHostID: String?,
        partyPlayerIDs: [String], properties: [String: String], createdAt: Date, startedAt: Date?, resumedAt: Date?, endedAt: Date?,
        activeSeconds: Double
    ) {
        self.activityID = activityID
        self.bundleID = bundleID
        self.definition = definition
        self.state = state
        self.partyCode = partyCode
        self.partyHostID = partyHostID
        self.partyPlayerIDs = partyPlayerIDs
        self.properties = properties
        self.createdAt = createdAt
        self.startedAt = startedAt
        self.resumedAt = resumedAt
        self.endedAt = endedAt
        self.activeSeconds = activeSeconds
    }
}

/// What happened to an activity of the player told.
public enum ActivityEventKind: String, Codable, Sendable, CaseIterable {
    /// The player joined a party in the Game Center app: their running game should start ``ActivityEventInfo/activity``
    /// (Apple's `player(_:wantsToPlay:)`).
    case wantsToPlay
    /// ``ActivityEventInfo/playerID`` joined the player's party.
    case playerJoined
}

/// Payload of ``EventKind/activity``.
public struct ActivityEventInfo: Codable, Sendable, Equatable {
    /// The activity's game (a player's events carry every game's).
    public var bundleID: String
    public var kind: ActivityEventKind
    /// The player who joined.
    public var playerID: String?
    /// The told player's activity after the change.
    public var activity: ActivityInfo

    public init(bundleID: String, kind: ActivityEventKind, playerID: String?, activity: ActivityInfo) {
        self.bundleID = bundleID
        self.kind = kind
        self.playerID = playerID
        self.activity = activity
    }
}
