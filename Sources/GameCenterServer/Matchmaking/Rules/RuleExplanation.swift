import GameCenterProtocol
import JMESPath

extension RuleMatcher {
    /// The most other requests an explanation tries its stages on.
    static let explainedRequestsLimit = 2_000

    /// Why `ticket` still waits among `requests` (its queue's waiting requests, itself included) at `now`: each stage
    /// of the rule set in Apple's order, with how many of the other requests passed it with this one. The player
    /// ranges and COMPATIBLE rules are tried on every other request (each rule on all of them, so that each one's
    /// count is its own); DISTANCE and MATCH rules and the team assignment on the compatible ones, each with this
    /// request alone — the team assignment only where the two bring enough players for a match. `estimate` is the
    /// queue's wait estimate. The stages are tried on the oldest `limit` other requests at most (an explanation is asked
    /// for by players: its cost stays bounded however long the queue); `waiting` counts them all. Nil when `ticket` is
    /// not among `requests`.
    func explain(
        _ ticket: TicketID, among requests: [RuleRequest], now: Int64, estimate: (seconds: Double?, samples: Int),
        limit: Int = RuleMatcher.explainedRequestsLimit
    ) -> MatchRequestExplanation? {
        guard let own = requests.first(where: { $0.ticket == ticket }) else { return nil }
        let tried = requests.filter { $0.ticket != ticket }.sorted { ($0.arrival, $0.ticket) < ($1.arrival, $1.ticket) }.prefix(limit)
        var context = PassContext(matcher: self, requests: [own] + tried, now: now)
        guard let anchor = context.requests.firstIndex(where: { $0.ticket == ticket }) else { return nil }
        let others = context.requests.indices.filter { $0 != anchor }
        /// The pair as rules see it: the older request first.
        func pair(_ other: Int) -> [Int] { [min(anchor, other), max(anchor, other)] }
        func input(_ members: [Int]) -> JSONValue {
            .object(["requests": .array(members.map { context.documents[$0] }), "players": context.players(members)])
        }

        var stages: [MatchRuleStage] = []
        let range = context.requests[anchor].playerRange
        var compatible = Set(
            others.filter { other in
                guard let range, let theirs = context.requests[other].playerRange else { return false }
                return range.overlaps(theirs)
            })
        stages.append(MatchRuleStage(name: "size", type: "size", tried: others.count, passed: compatible.count))
        for rule in ruleSet.rules(.compatible) {
            let passed = Set(others.filter { context.boolean(rule, input(pair($0)), pair($0)) })
            stages.append(MatchRuleStage(name: rule.referenceName, type: "compatible", tried: others.count, passed: passed.count))
            compatible.formIntersection(passed)
        }
        let candidates = others.filter(compatible.contains)
        for rule in ruleSet.rules(.distance) {
            let distances = candidates.compactMap { context.number(rule, input(pair($0)), pair($0)) }
            stages.append(
                MatchRuleStage(name: rule.referenceName, type: "distance", tried: candidates.count, passed: distances.count, nearestDistance: distances.min()))
        }
        for rule in ruleSet.rules(.match) {
            let passed = candidates.filter { candidate in
                switch context.evaluate(rule, input(pair(candidate)), pair(candidate)) {
                case .bool(true)?: true
                case .number(let value)?: value.isFinite
                default: false
                }
            }
            stages.append(MatchRuleStage(name: rule.referenceName, type: "match", tried: candidates.count, passed: passed.count))
        }
        if !ruleSet.teams.isEmpty {
            let whole = candidates.filter { context.requests[anchor].playerCount + context.requests[$0].playerCount >= ruleSet.minPlayers }
            let passed = whole.filter { candidate in
                let members = pair(candidate)
                return context.assignTeams(members, requestsJSON: .array(members.map { context.documents[$0] }), playersJSON: context.players(members)) != nil
            }
            stages.append(MatchRuleStage(name: "teams", type: "team", tried: whole.count, passed: passed.count))
        }
        // Most turned away first; ties in Apple's order.
        let blocking = stages.enumerated().filter { $0.element.tried > $0.element.passed }
            .sorted { ($1.element.tried - $1.element.passed, $0.offset) < ($0.element.tried - $0.element.passed, $1.offset) }
            .prefix(3).map(\.element.name)
        return MatchRequestExplanation(
            secondsInQueue: Int(context.requests[anchor].secondsInQueue(now: now)), waiting: requests.count - 1, compatible: candidates.count,
            stages: stages, blockingRules: Array(blocking), estimatedWaitSeconds: estimate.seconds, estimateSamples: estimate.samples,
            expansions: expansions(for: input([anchor])))
    }

    /// The aged values of the rules (`agedValues`, `agedAsSteppedValue` and its other name), each evaluated on `alone`
    /// (the request by itself, as its rules see it now): its age, its step and the value the rule uses. A call whose
    /// arguments do not evaluate to numbers for it is left out.
    func expansions(for alone: JSONValue) -> [MatchRuleExpansion] {
        ruleSet.rules.flatMap { rule in
            rule.expression.functionCalls(named: ["agedValues", "agedAsSteppedValue", "agedValueLinear"]).compactMap { call in
                guard case .number(let age)? = try? call.arguments[0].evaluate(alone), case .number(let value)? = try? call.call.evaluate(alone)
                else { return nil }
                let (step, steps): (Int, Int)
                if call.name == "agedValues" {
                    guard case .array(let ages)? = try? call.arguments[3].evaluate(alone) else { return nil }
                    let thresholds = ages.compactMap { if case .number(let seconds) = $0 { seconds } else { nil } }
                    (step, steps) = (thresholds.filter { $0 <= age }.count, thresholds.count)
                } else {
                    // agedAsSteppedValue(age, initial, limit, interval, change): a step each interval until the limit.
                    let numbers = call.arguments[1...4].map { argument -> Double in
                        if case .number(let number)? = try? argument.evaluate(alone) { number } else { .nan }
                    }
                    let (initial, limit, interval, change) = (numbers[0], numbers[1], numbers[2], numbers[3])
                    guard numbers.allSatisfy(\.isFinite), interval > 0 else { return nil }
                    let all = change == 0 ? 0 : Int((abs(limit - initial) / abs(change)).rounded(.up))
                    (step, steps) = (min(Int((max(age, 0) / interval).rounded(.down)), all), all)
                }
                return MatchRuleExpansion(rule: rule.referenceName, expression: call.source, seconds: age, step: step, steps: steps, value: value)
            }
        }
    }
}
