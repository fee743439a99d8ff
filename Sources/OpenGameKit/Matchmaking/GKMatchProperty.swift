@_exported import enum JMESPath.JSONValue
import GameCenterProtocol

/// A value of a match property, for Apple's rule-based matchmaking: any JSON value (Apple's `[String: Any]` property
/// lists, typed). Write them as literals: `["skill": 42, "mode": "duel", "maps": ["a", "b"]]`.
public typealias GKMatchProperty = JSONValue

/// The players a hosted rule-based request found (``GKMatchmaker/findMatchedPlayers(_:)``), with the properties their
/// requests carried as the queue's rules saw them.
public struct GKMatchedPlayers: Sendable {
    /// Every player of the match, the local player included, in the order they joined.
    public let playerIDs: [String]
    /// The local player's properties, with Game Center's own under `gc` (`gc.team` when the rule set has teams).
    public let properties: [String: GKMatchProperty]?
    /// Every other player's properties, by player id, with Game Center's own under `gc`.
    public let playerProperties: [String: [String: GKMatchProperty]]?

    init(info: MatchInfo, localPlayerID: String) {
        playerIDs = info.players
        properties = info.playerProperties?[localPlayerID]
        playerProperties = info.playerProperties?.filter { $0.key != localPlayerID }
    }
}

/// Why a request in a rule-based queue is still waiting (``GKMatchmaker/explainWaiting()``).
public typealias GKMatchmakingExplanation = MatchRequestExplanation

/// One stage of a rule-based queue's rules as it stands for a waiting request (the `stages` of a ``GKMatchmakingExplanation``).
public typealias GKMatchRuleStage = MatchRuleStage
/// One aged value of a rule-based queue's rules as it stands for a waiting request (the `expansions` of a
/// ``GKMatchmakingExplanation``).
public typealias GKMatchRuleExpansion = MatchRuleExpansion
