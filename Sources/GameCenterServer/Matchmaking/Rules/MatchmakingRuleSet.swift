import JMESPath

/// When the matchmaker applies a rule and what its expression must return (Apple's four rule types).
public enum MatchmakingRuleType: String, Sendable, CaseIterable {
    /// Two requests (`requests[0]`, `requests[1]`) may play together: true or false.
    case compatible = "COMPATIBLE"
    /// How far apart two requests are, from 0.0 (alike) to 1.0: ranks the compatible requests.
    case distance = "DISTANCE"
    /// All requests of a candidate match: true or false keeps or drops it; a number counts against it, times the
    /// rule's weight.
    case match = "MATCH"
    /// The players' assignment to teams (`teams`, `players`): true or false.
    case team = "TEAM"
}

/// One rule of a rule set: a JMESPath expression with Game Center's functions, compiled when the manifest loads.
public struct MatchmakingRule: Sendable, Equatable {
    /// Unique within its rule set; names the rule in explanations and metrics.
    public var referenceName: String
    /// What the rule is for, for people.
    public var description: String
    /// When the rule applies and what it returns.
    public var type: MatchmakingRuleType
    /// The compiled expression (its `source` is the text the manifest gave).
    public var expression: JMESPathExpression
    /// For DISTANCE and MATCH rules: how much a number the rule returns counts (default 1).
    public var weight: Double?

    /// The weight numbers count with.
    var effectiveWeight: Double { weight ?? 1 }

    /// A rule with its expression compiled.
    package init(referenceName: String, description: String, type: MatchmakingRuleType, expression: JMESPathExpression, weight: Double? = nil) {
        self.referenceName = referenceName
        self.description = description
        self.type = type
        self.expression = expression
        self.weight = weight
    }

    /// Rules are equal when they read the same: names, type, expression text and weight.
    public static func == (lhs: MatchmakingRule, rhs: MatchmakingRule) -> Bool {
        lhs.referenceName == rhs.referenceName && lhs.description == rhs.description && lhs.type == rhs.type
            && lhs.expression.source == rhs.expression.source && lhs.weight == rhs.weight
    }
}

/// A team players are assigned to by a rule set's TEAM rules.
public struct MatchmakingTeam: Sendable, Equatable {
    /// The team's name (Apple's `referenceName`; `name` in rule expressions and `gc.team` in match properties).
    public var name: String
    /// Fewest players the team takes in a match.
    public var minPlayers: Int
    /// Most players the team takes in a match.
    public var maxPlayers: Int
}

/// Apple's rule set: the players a match has, its teams, and its rules in the order the manifest gives them.
public struct MatchmakingRuleSet: Sendable, Equatable {
    /// The name queues refer to it by; unique in its game.
    public var referenceName: String
    /// The expression language's version; 1 is the only one.
    public var ruleLanguageVersion: Int
    /// Fewest players in a match (2…16); narrows a request's own range.
    public var minPlayers: Int
    /// Most players in a match (2…16); narrows a request's own range.
    public var maxPlayers: Int
    /// The teams players are assigned to; none, or two or more.
    public var teams: [MatchmakingTeam]
    /// The rules, in the order the manifest gives them.
    public var rules: [MatchmakingRule]

    /// A rule set; the manifest's loader checks what it may hold.
    package init(
        referenceName: String, ruleLanguageVersion: Int = 1, minPlayers: Int, maxPlayers: Int, teams: [MatchmakingTeam] = [],
        rules: [MatchmakingRule]
    ) {
        self.referenceName = referenceName
        self.ruleLanguageVersion = ruleLanguageVersion
        self.minPlayers = minPlayers
        self.maxPlayers = maxPlayers
        self.teams = teams
        self.rules = rules
    }

    /// The rules of one type, in manifest order.
    func rules(_ type: MatchmakingRuleType) -> [MatchmakingRule] { rules.filter { $0.type == type } }

    /// The players a request asking for `minPlayers…maxPlayers` is matched with: its own range where it lies inside
    /// the rule set's, the rule set's where the request's is wider, nil when the two do not meet (never matched).
    func playerRange(requestMin: Int, requestMax: Int) -> ClosedRange<Int>? {
        let low = max(requestMin, minPlayers)
        let high = min(requestMax, maxPlayers)
        return low <= high ? low...high : nil
    }

    /// Most rules a rule set may have.
    public static let maximumRules = 50
    /// Most teams a rule set may have.
    public static let maximumTeams = 8
    /// Longest expression, in characters.
    public static let maximumExpressionLength = 4096
}

/// Apple's queue: the name games ask with (`GKMatchRequest.queueName`) and the rule set that matches its requests.
public struct MatchmakingQueueDefinition: Sendable, Equatable {
    /// Reverse-DNS, letters, digits, `-` and `.`; case sensitive.
    public var referenceName: String
    /// The rule set's reference name.
    public var ruleSet: String
    /// A rule set run in shadow on the same requests: its matches are counted, never made.
    public var experimentRuleSet: String?
    /// Bundle ids whose classic requests (no queue name) also wait in this queue.
    public var classicMatchmakingBundleIds: [String]

    /// Most queues a game may have.
    public static let maximumPerGame = 100
}
