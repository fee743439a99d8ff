import JMESPath

/// A match a pass formed: its requests, oldest first, and with teams each player's team.
package struct RuleMatch: Sendable, Equatable {
    package var tickets: [TicketID]
    /// Team name by player id; empty when the rule set has no teams.
    var teams: [String: String]
}

/// What one rule answered during a pass.
struct RuleTally: Sendable, Equatable {
    var trueCount = 0
    var falseCount = 0
    /// Evaluations that failed, or gave a value of the wrong type (taken as false, or as distance 1).
    var errors = 0
    var numberCount = 0
    var numberSum = 0.0
}

/// One evaluation of one rule, kept when a pass is traced (`gamecenter matchmaking test`).
struct RuleVerdict: Sendable, Equatable {
    var rule: String
    /// The requests the rule saw, oldest first.
    var tickets: [TicketID]
    /// What it returned, or nil when it failed.
    var result: JSONValue?
    /// Why it failed.
    var error: String?
}

/// What a pass did: the matches it formed and what each rule answered.
package struct RulePassResult: Sendable {
    package var matches: [RuleMatch] = []
    /// By rule reference name.
    var tallies: [String: RuleTally] = [:]
    /// Expressions evaluated.
    package var evaluations = 0
    /// Every evaluation, in order, when the pass was traced; nil otherwise.
    var trace: [RuleVerdict]?
}

/// Apple's rule-based matching over the requests of one queue, as a pure function of the requests and the time.
///
/// Requests are taken oldest first; each one not yet matched anchors a match of younger requests:
/// 1. COMPATIBLE rules keep the requests that may play with it (rules of the form `requests[0].x == requests[1].x`
///    are answered by grouping requests on `x`, without evaluating them pair by pair);
/// 2. DISTANCE rules rank those by the weighted sum of their distances to it (then by age);
/// 3. from the most players its range allows down to the fewest, candidates are added in rank order while every pair
///    of members is compatible; a full candidate match must pass every MATCH rule that returns a Boolean (a MATCH rule
///    returning a number adds, times its weight, to the match's cost: the cheapest of the first valid candidates wins);
/// 4. with teams, the players are assigned to them in the first way (in players' and teams' order) that fills every
///    team to its minimum and passes every TEAM rule.
/// The same requests at the same time always give the same matches.
package struct RuleMatcher: Sendable {
    let ruleSet: MatchmakingRuleSet
    /// COMPATIBLE rules evaluated pair by pair.
    private let compatible: [MatchmakingRule]
    /// COMPATIBLE rules answered by grouping: the rule, and the expression that reads its key from one request.
    private let groupings: [(rule: MatchmakingRule, key: JMESPathExpression)]
    private let distance: [MatchmakingRule]
    private let matchRules: [MatchmakingRule]
    private let teamRules: [MatchmakingRule]
    /// The first MATCH rule, when it bounds how far apart the players' values may be (``SpreadLimit``).
    private let spreadLimit: SpreadLimit?

    /// Most team assignments tried for one candidate match.
    static let maximumTeamAssignments = 4096
    /// With numeric MATCH rules, how many valid candidate matches are compared before the cheapest is taken.
    static let validCandidatesCompared = 16

    package init(ruleSet: MatchmakingRuleSet) {
        self.ruleSet = ruleSet
        var compatible: [MatchmakingRule] = []
        var groupings: [(MatchmakingRule, JMESPathExpression)] = []
        for rule in ruleSet.rules(.compatible) {
            if let path = Self.equalityPath(rule.expression.source), let key = try? JMESPathExpression(compiling: "requests[0].\(path)") {
                groupings.append((rule, key))
            } else {
                compatible.append(rule)
            }
        }
        self.compatible = compatible
        self.groupings = groupings
        distance = ruleSet.rules(.distance)
        matchRules = ruleSet.rules(.match)
        teamRules = ruleSet.rules(.team)
        spreadLimit = matchRules.first.flatMap(SpreadLimit.init)
    }

    /// A MATCH rule `diff(players[].properties.P) <= limit` (or `<`), whose limit is a number or an `agedValues` call
    /// of literal numbers: no candidate match whose players' `P` differ by more than the largest limit can pass it.
    /// A pass skips such candidates without evaluating the rule, and counts them false, as the rule would answer
    /// (the skill window of most rule sets; it is the rule most candidates fail).
    struct SpreadLimit: Sendable {
        let rule: MatchmakingRule
        /// The property's path under `properties`.
        let path: [String]
        /// The largest limit the rule can compare with.
        let bound: Double
        /// `<` rather than `<=`.
        let strict: Bool

        init?(_ rule: MatchmakingRule) {
            let pattern = /^\s*diff\(\s*players\[\]\.properties\.([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*)\s*\)\s*(<=|<)\s*(.+?)\s*$/
            guard let match = rule.expression.source.wholeMatch(of: pattern),
                let limit = try? JMESPathExpression(compiling: String(match.3), functions: RuleFunctions.table())
            else { return nil }
            // The limit must be the whole right side: a literal, or one agedValues call (`a <= b || c` compares less).
            if match.3.wholeMatch(of: /`[^`]*`/) != nil, case .number(let value)? = try? limit.evaluate(.object([:])) {
                bound = value
            } else if let call = limit.functionCalls(named: ["agedValues"]).first, call.source == limit.source, call.arguments.count == 4,
                case .number(let initial)? = try? call.arguments[1].evaluate(.object([:])),
                case .array(let values)? = try? call.arguments[2].evaluate(.object([:]))
            {
                let numbers = values.compactMap { if case .number(let value) = $0 { value } else { nil } }
                guard numbers.count == values.count else { return nil }
                bound = ([initial] + numbers).max()!
            } else {
                return nil
            }
            self.rule = rule
            path = match.1.split(separator: ".").map(String.init)
            strict = match.2 == "<"
        }

        /// The lowest and highest value of the property among `request`'s players; nil when one of them has no number
        /// there (the rule then sees fewer values: it is evaluated).
        func span(_ request: RuleRequest) -> ClosedRange<Double>? {
            var low = Double.infinity, high = -Double.infinity
            for player in request.players {
                var value = JSONValue.object(player.properties)
                for key in path {
                    guard case .object(let members) = value, let next = members[key] else { return nil }
                    value = next
                }
                guard case .number(let number) = value else { return nil }
                (low, high) = (min(low, number), max(high, number))
            }
            return low <= high ? low...high : nil
        }

        /// Whether players spanning `spread` fail the rule whatever its limit is.
        func fails(_ spread: Double) -> Bool { strict ? spread >= bound : spread > bound }
    }

    /// `p` when `source` is exactly `requests[0].p == requests[1].p` (or the reverse) for a dotted path `p`.
    static func equalityPath(_ source: String) -> String? {
        let pattern =
            /^\s*requests\[([01])\]\.([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*)\s*==\s*requests\[([01])\]\.([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*)\s*$/
        guard let match = source.wholeMatch(of: pattern), match.1 != match.3, match.2 == match.4 else { return nil }
        return String(match.2)
    }

    /// Runs one pass over `requests` at `now` (monotonic ms); `traced` keeps every evaluation (slower).
    package func pass(_ requests: [RuleRequest], now: Int64, traced: Bool = false) -> RulePassResult {
        var context = PassContext(matcher: self, requests: requests, now: now)
        if traced { context.result.trace = [] }
        context.run()
        return context.result
    }

    /// One pass's working state (also what ``explain(_:among:now:estimate:)`` evaluates with).
    struct PassContext {
        let matcher: RuleMatcher
        /// Oldest first.
        let requests: [RuleRequest]
        let documents: [JSONValue]
        var matched: [Bool]
        var result = RulePassResult()
        /// Pairwise verdicts of the pair-by-pair COMPATIBLE rules, by (older, younger) index.
        var compatibility: [Pair: Bool] = [:]
        /// Each request's span of the spread-limited property (``SpreadLimit``); empty without such a rule, or when
        /// the pass is traced (every evaluation is then shown).
        let spans: [ClosedRange<Double>?]
        /// Candidates the spread-limited rule refused without being evaluated, added to its false answers when the pass
        /// ends (a count, not a dictionary update per candidate).
        var spreadRefusals = 0

        struct Pair: Hashable {
            var older: Int
            var younger: Int
        }

        init(matcher: RuleMatcher, requests: [RuleRequest], now: Int64) {
            self.matcher = matcher
            let sorted = requests.sorted { ($0.arrival, $0.ticket) < ($1.arrival, $1.ticket) }
            self.requests = sorted
            documents = sorted.map { $0.json(now: now) }
            matched = Array(repeating: false, count: requests.count)
            spans = matcher.spreadLimit.map { limit in sorted.map(limit.span) } ?? []
        }

        /// Whether `members` certainly fail the spread-limited rule (counted false, as evaluating it would).
        mutating func outsideSpreadLimit(_ members: [Int]) -> Bool {
            guard let limit = matcher.spreadLimit, !spans.isEmpty, result.trace == nil else { return false }
            var low = Double.infinity, high = -Double.infinity
            for member in members {
                guard let span = spans[member] else { return false }
                (low, high) = (min(low, span.lowerBound), max(high, span.upperBound))
            }
            guard limit.fails(high - low) else { return false }
            spreadRefusals += 1
            return true
        }

        mutating func run() {
            defer {
                if let limit = matcher.spreadLimit, spreadRefusals > 0 {
                    result.tallies[limit.rule.referenceName, default: RuleTally()].falseCount += spreadRefusals
                    spreadRefusals = 0
                }
            }
            var groups: [[JSONValue]: [Int]] = [:]
            var keyOf: [[JSONValue]] = []
            /// Where each request stands in its group (groups list requests oldest first).
            var position: [Int] = []
            for index in requests.indices {
                let key = matcher.groupings.map { grouping in
                    (try? grouping.key.evaluate(.object(["requests": .array([documents[index]])]))) ?? .null
                }
                keyOf.append(key)
                position.append(groups[key]?.count ?? 0)
                groups[key, default: []].append(index)
            }
            for anchor in requests.indices where !matched[anchor] {
                guard let range = requests[anchor].playerRange, let group = groups[keyOf[anchor]] else { continue }
                // The younger requests of its group, uncopied: `form` skips those matched meanwhile.
                let younger = group[(position[anchor] + 1)...]
                let candidates = matcher.distance.isEmpty ? younger : ArraySlice(ranked(younger, anchor: anchor))
                for size in range.reversed() {
                    if let match = form(anchor: anchor, size: size, candidates: candidates) {
                        for member in match.members { matched[member] = true }
                        result.matches.append(RuleMatch(tickets: match.members.map { requests[$0].ticket }, teams: match.teams))
                        break
                    }
                }
            }
        }

        /// The younger unmatched requests compatible with `anchor`, best first: by weighted distance, then age (for rule
        /// sets with DISTANCE rules; without, candidates come by age and their compatibility is found when tried).
        mutating func ranked(_ younger: ArraySlice<Int>, anchor: Int) -> [Int] {
            var scored: [(index: Int, distance: Double)] = []
            for candidate in younger where !matched[candidate] && compatible(anchor, candidate) {
                let input = JSONValue.object(["requests": .array([documents[anchor], documents[candidate]]), "players": players([anchor, candidate])])
                var total = 0.0
                for rule in matcher.distance {
                    total += rule.effectiveWeight * (number(rule, input, [anchor, candidate]) ?? 1)
                }
                scored.append((candidate, total))
            }
            return scored.sorted { ($0.distance, $0.index) < ($1.distance, $1.index) }.map(\.index)
        }

        /// The best valid match of `size` players anchored by `anchor`, if any.
        mutating func form(anchor: Int, size: Int, candidates: ArraySlice<Int>) -> (members: [Int], teams: [String: String])? {
            var members = [anchor]
            var count = requests[anchor].playerCount
            // A request that brings players may fill a match alone.
            guard count < size else { return count == size ? evaluate(members).map { (members, $0.teams) } : nil }
            var best: (members: [Int], teams: [String: String], cost: Double)?
            var valid = 0
            for candidate in candidates where !matched[candidate] {
                let request = requests[candidate]
                guard request.playerRange?.contains(size) == true, count + request.playerCount <= size else { continue }
                guard members.allSatisfy({ compatible($0, candidate) }) else { continue }
                members.append(candidate)
                count += request.playerCount
                if count == size {
                    if !outsideSpreadLimit(members), let (teams, cost, scored) = evaluate(members) {
                        guard scored else { return (members, teams) }
                        if best.map({ cost < $0.cost }) ?? true { best = (members, teams, cost) }
                        valid += 1
                        if valid >= RuleMatcher.validCandidatesCompared { break }
                    }
                    members.removeLast()
                    count -= request.playerCount
                }
            }
            return best.map { ($0.members, $0.teams) }
        }

        /// Whether requests `a` and `b` pass every pair-by-pair COMPATIBLE rule.
        mutating func compatible(_ a: Int, _ b: Int) -> Bool {
            if a == b || matcher.compatible.isEmpty { return true }
            let pair = Pair(older: min(a, b), younger: max(a, b))
            if let known = compatibility[pair] { return known }
            let input = JSONValue.object(
                ["requests": .array([documents[pair.older], documents[pair.younger]]), "players": players([pair.older, pair.younger])])
            var verdict = true
            for rule in matcher.compatible where !boolean(rule, input, [pair.older, pair.younger]) {
                verdict = false
                break
            }
            compatibility[pair] = verdict
            return verdict
        }

        /// A full candidate match's MATCH rules and team assignment: its teams, its cost and whether any MATCH rule gave
        /// a number; nil when it is not valid.
        mutating func evaluate(_ members: [Int]) -> (teams: [String: String], cost: Double, scored: Bool)? {
            let ordered = members.sorted()
            let requestsJSON = JSONValue.array(ordered.map { documents[$0] })
            let playersJSON = players(ordered)
            let input = JSONValue.object(["requests": requestsJSON, "players": playersJSON])
            var cost = 0.0
            var scored = false
            for rule in matcher.matchRules {
                switch evaluate(rule, input, ordered) {
                case .bool(true)?:
                    result.tallies[rule.referenceName, default: RuleTally()].trueCount += 1
                case .bool(false)?:
                    result.tallies[rule.referenceName, default: RuleTally()].falseCount += 1
                    return nil
                case .number(let value)? where value.isFinite:
                    result.tallies[rule.referenceName, default: RuleTally()].numberCount += 1
                    result.tallies[rule.referenceName, default: RuleTally()].numberSum += value
                    cost += rule.effectiveWeight * value
                    scored = true
                default:
                    result.tallies[rule.referenceName, default: RuleTally()].errors += 1
                    return nil
                }
            }
            guard !matcher.ruleSet.teams.isEmpty else { return ([:], cost, scored) }
            guard let teams = assignTeams(ordered, requestsJSON: requestsJSON, playersJSON: playersJSON) else { return nil }
            return (teams, cost, scored)
        }

        /// The first assignment of the members' players to teams that fills every team to its minimum and passes every
        /// TEAM rule.
        mutating func assignTeams(_ members: [Int], requestsJSON: JSONValue, playersJSON: JSONValue) -> [String: String]? {
            let teams = matcher.ruleSet.teams
            let players = members.flatMap { member in zip(requests[member].players, requests[member].playerDocuments).map { ($0.playerID, $1) } }
            var assignment = [Int](repeating: 0, count: players.count)
            var sizes = [Int](repeating: 0, count: teams.count)
            var tried = 0
            var found: [Int]?

            func deficit() -> Int { zip(sizes, teams).map { max(0, $1.minPlayers - $0) }.reduce(0, +) }
            func search(_ position: Int, _ context: inout PassContext) {
                guard found == nil, tried < RuleMatcher.maximumTeamAssignments else { return }
                if position == players.count {
                    tried += 1
                    let teamsJSON = JSONValue.array(
                        teams.indices.map { team in
                            .object([
                                "name": .string(teams[team].name), "minPlayers": .number(Double(teams[team].minPlayers)),
                                "maxPlayers": .number(Double(teams[team].maxPlayers)),
                                "players": .array(players.indices.filter { assignment[$0] == team }.map { players[$0].1 }),
                            ])
                        })
                    let input = JSONValue.object(["requests": requestsJSON, "players": playersJSON, "teams": teamsJSON])
                    if context.matcher.teamRules.allSatisfy({ context.boolean($0, input, members) }) { found = assignment }
                    return
                }
                for team in teams.indices where sizes[team] < teams[team].maxPlayers {
                    assignment[position] = team
                    sizes[team] += 1
                    if deficit() <= players.count - position - 1 { search(position + 1, &context) }
                    sizes[team] -= 1
                    if found != nil { return }
                }
            }
            search(0, &self)
            guard let found else { return nil }
            return Dictionary(uniqueKeysWithValues: players.indices.map { (players[$0].0, teams[found[$0]].name) })
        }

        /// The players of the given requests, as expressions see them.
        func players(_ members: [Int]) -> JSONValue {
            .array(members.flatMap { requests[$0].playerDocuments })
        }

        /// Evaluates `rule` on `input`, about the requests `subject`: its value, or nil when it failed.
        mutating func evaluate(_ rule: MatchmakingRule, _ input: JSONValue, _ subject: [Int]) -> JSONValue? {
            result.evaluations += 1
            guard result.trace != nil else { return try? rule.expression.evaluate(input) }
            let tickets = subject.sorted().map { requests[$0].ticket }
            do {
                let value = try rule.expression.evaluate(input)
                result.trace?.append(RuleVerdict(rule: rule.referenceName, tickets: tickets, result: value))
                return value
            } catch {
                result.trace?.append(RuleVerdict(rule: rule.referenceName, tickets: tickets, error: error.description))
                return nil
            }
        }

        /// A rule that must answer true or false; anything else (or an error) counts as an error and as false.
        mutating func boolean(_ rule: MatchmakingRule, _ input: JSONValue, _ subject: [Int]) -> Bool {
            switch evaluate(rule, input, subject) {
            case .bool(let verdict)?:
                if verdict {
                    result.tallies[rule.referenceName, default: RuleTally()].trueCount += 1
                } else {
                    result.tallies[rule.referenceName, default: RuleTally()].falseCount += 1
                }
                return verdict
            default:
                result.tallies[rule.referenceName, default: RuleTally()].errors += 1
                return false
            }
        }

        /// A rule that must answer a number; anything else (or an error) counts as an error and gives nil.
        mutating func number(_ rule: MatchmakingRule, _ input: JSONValue, _ subject: [Int]) -> Double? {
            guard case .number(let value)? = evaluate(rule, input, subject), value.isFinite else {
                result.tallies[rule.referenceName, default: RuleTally()].errors += 1
                return nil
            }
            result.tallies[rule.referenceName, default: RuleTally()].numberCount += 1
            result.tallies[rule.referenceName, default: RuleTally()].numberSum += value
            return value
        }
    }
}
