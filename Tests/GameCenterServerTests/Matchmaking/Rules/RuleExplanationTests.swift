import GameCenterProtocol
import JMESPath
import Testing

@testable import GameCenterServer

/// Why a rule-based request waits: each stage's counts over the queue's other requests, the blocking rules, and the
/// wait estimate from the queue's recent matches.
@Suite struct RuleExplanationTests {
    static func request(_ ticket: UInt64, region: String, skill: Double, min: Int = 2, max: Int = 2, ruleSet: MatchmakingRuleSet, arrival: Int64 = 0)
        -> RuleRequest
    {
        RuleRequest(
            ticket: TicketID(ticket), requestName: "t\(ticket)",
            players: [RulePlayer(playerID: "G:\(ticket)", properties: ["region": .string(region), "skill": .number(skill)])],
            minPlayers: min, maxPlayers: max, ruleSet: ruleSet, attributes: [:], arrival: arrival)
    }

    static func rules(teams: [MatchmakingTeam] = [], min: Int = 2, max: Int = 4) throws -> MatchmakingRuleSet {
        RuleMatcherTests.ruleSet(
            min, max, teams: teams,
            [
                try RuleMatcherTests.rule("SameRegion", .compatible, "requests[0].properties.region == requests[1].properties.region"),
                try RuleMatcherTests.rule("NotBlocked", .compatible, "requests[0].properties.skill != `13`"),
                try RuleMatcherTests.rule("SkillDistance", .distance, "div(diff(requests[].properties.skill), `100`)"),
                try RuleMatcherTests.rule("SkillWindow", .match, "diff(players[].properties.skill) <= `20`"),
            ])
    }

    /// Apple's aged values (`agedValues`, `agedAsSteppedValue`) evaluated for the request alone: where each expansion
    /// stands, and the value its rule uses now.
    @Test func theRulesExpansionsSayTheirStepAndTheValueInUseNow() throws {
        let rules = RuleMatcherTests.ruleSet(
            2, 2,
            [
                try RuleMatcherTests.rule(
                    "SkillWindow", .match, "diff(players[].properties.skill) <= agedValues(avg(requests[].secondsInQueue), `20`, [`40`, `100`], [`10`, `20`])"),
                try RuleMatcherTests.rule(
                    "Latency", .compatible, "geoLatency(requests[0], requests[1]) <= agedAsSteppedValue(requests[0].secondsInQueue, `50`, `200`, `5`, `40`)"),
                try RuleMatcherTests.rule("SameRegion", .compatible, "requests[0].properties.region == requests[1].properties.region"),
            ])
        func expansions(at millis: Int64) throws -> [MatchRuleExpansion] {
            let requests = [Self.request(1, region: "eu", skill: 10, ruleSet: rules, arrival: 0)]
            return try #require(RuleMatcher(ruleSet: rules).explain(TicketID(1), among: requests, now: millis, estimate: (nil, 0))).expansions
        }
        let window = "agedValues(avg(requests[].secondsInQueue), `20`, [`40`, `100`], [`10`, `20`])"
        let latency = "agedAsSteppedValue(requests[0].secondsInQueue, `50`, `200`, `5`, `40`)"
        #expect(
            try expansions(at: 3_000) == [
                MatchRuleExpansion(rule: "SkillWindow", expression: window, seconds: 3, step: 0, steps: 2, value: 20),
                MatchRuleExpansion(rule: "Latency", expression: latency, seconds: 3, step: 0, steps: 4, value: 50),
            ])
        #expect(try expansions(at: 12_900).map(\.step) == [1, 2] && expansions(at: 12_900).map(\.value) == [40, 130])
        #expect(try expansions(at: 60_000).map(\.step) == [2, 4] && expansions(at: 60_000).map(\.value) == [100, 200], "both at their last step")
        // The calls' texts as written: a parenthesis inside a string argument does not end the call, and a character of
        // three Unicode scalars before it does not shift it (the parser's offsets count scalars, not characters).
        let quoted = try JMESPathExpression(
            compiling: "'e\u{301}\u{301})' == 'x' || agedValues(length(')'), `2`, [`3`], [`4`]) > `0`", functions: RuleFunctions.table())
        #expect(quoted.functionCalls(named: ["agedValues"]).map(\.source) == ["agedValues(length(')'), `2`, [`3`], [`4`])"])
    }

    @Test func eachStageCountsTheRequestsThatPassedItWithThisOne() throws {
        let rules = try Self.rules()
        let requests = [
            Self.request(1, region: "eu", skill: 10, ruleSet: rules, arrival: 0),  // the one explained
            Self.request(2, region: "eu", skill: 15, ruleSet: rules),  // passes every stage
            Self.request(3, region: "eu", skill: 90, ruleSet: rules),  // outside the skill window
            Self.request(4, region: "eu", skill: 70, ruleSet: rules),  // outside the skill window
            Self.request(5, region: "us", skill: 12, ruleSet: rules),  // another region
            Self.request(6, region: "eu", skill: 11, min: 5, max: 5, ruleSet: rules),  // a range outside the rule set's
        ]
        let explanation = try #require(
            RuleMatcher(ruleSet: rules).explain(TicketID(1), among: requests.reversed(), now: 42_500, estimate: (nil, 2)))
        #expect(explanation.secondsInQueue == 42 && explanation.waiting == 5 && explanation.compatible == 3)
        #expect(
            explanation.stages == [
                MatchRuleStage(name: "size", type: "size", tried: 5, passed: 4),
                MatchRuleStage(name: "SameRegion", type: "compatible", tried: 5, passed: 4),
                MatchRuleStage(name: "NotBlocked", type: "compatible", tried: 5, passed: 5),
                MatchRuleStage(name: "SkillDistance", type: "distance", tried: 3, passed: 3, nearestDistance: 0.05),
                MatchRuleStage(name: "SkillWindow", type: "match", tried: 3, passed: 1),
            ])
        #expect(explanation.blockingRules == ["SkillWindow", "size", "SameRegion"])
        #expect(explanation.estimatedWaitSeconds == nil && explanation.estimateSamples == 2)
        #expect(RuleMatcher(ruleSet: rules).explain(TicketID(9), among: requests, now: 0, estimate: (nil, 0)) == nil)
        // A long queue: the stages are tried on the oldest requests only, the count of waiting ones stays whole.
        let older = requests.enumerated().map { index, request in
            Self.request(request.ticket.rawValue, region: index == 4 ? "us" : "eu", skill: 10, ruleSet: rules, arrival: Int64(index))
        }
        let bounded = try #require(RuleMatcher(ruleSet: rules).explain(TicketID(1), among: older, now: 0, estimate: (nil, 0), limit: 2))
        #expect(bounded.waiting == 5 && bounded.stages.first == MatchRuleStage(name: "size", type: "size", tried: 2, passed: 2))
    }

    @Test func teamsAreTriedOnlyWhereTheTwoBringEnoughPlayers() throws {
        let teams = [MatchmakingTeam(name: "blue", minPlayers: 1, maxPlayers: 1), MatchmakingTeam(name: "red", minPlayers: 1, maxPlayers: 1)]
        let pairs = try Self.rules(teams: teams, min: 2, max: 2)
        let requests = [Self.request(1, region: "eu", skill: 10, ruleSet: pairs), Self.request(2, region: "eu", skill: 12, ruleSet: pairs)]
        let explanation = try #require(RuleMatcher(ruleSet: pairs).explain(TicketID(1), among: requests, now: 0, estimate: (nil, 0)))
        #expect(explanation.stages.last == MatchRuleStage(name: "teams", type: "team", tried: 1, passed: 1))
        #expect(explanation.blockingRules.isEmpty)

        let fours = try Self.rules(teams: teams.map { MatchmakingTeam(name: $0.name, minPlayers: 2, maxPlayers: 2) }, min: 4, max: 4)
        let four = [
            Self.request(1, region: "eu", skill: 10, min: 4, max: 4, ruleSet: fours), Self.request(2, region: "eu", skill: 12, min: 4, max: 4, ruleSet: fours),
        ]
        let waiting = try #require(RuleMatcher(ruleSet: fours).explain(TicketID(1), among: four, now: 0, estimate: (nil, 0)))
        #expect(waiting.stages.last == MatchRuleStage(name: "teams", type: "team", tried: 0, passed: 0), "two players cannot make two teams of two")
    }

    @Test func theWaitEstimateIsTheMedianOfTheLastFifteenMinutesMatchesOnceThereAreEnough() throws {
        let rules = RuleMatcherTests.ruleSet(2, 2, [try RuleMatcherTests.rule("Any", .match, "`true`")])
        let key = RuleQueuesTests.key
        var queues = RuleQueues()
        var next: UInt64 = 1
        /// Two requests that waited `seconds` each are matched at `now`.
        func matchPair(waited seconds: Int64, at now: Int64) throws {
            for _ in 0..<2 {
                queues.enqueue(
                    RuleQueuesTests.request(next, skill: 1, ruleSet: rules, arrival: now - seconds * 1000), playerID: "G:\(next)", key: key, ruleSet: rules,
                    experiment: nil, now: now - seconds * 1000)
                next += 1
            }
            let pass = try #require(queues.takeDuePasses(now: now).first)
            let waits = queues.apply(pass.matcher.pass(pass.requests, now: now).matches, key: pass.key, now: now).waits
            #expect(waits == [seconds * 1000, seconds * 1000])
        }
        try matchPair(waited: 100, at: 100_000)
        queues.enqueue(
            RuleQueuesTests.request(99, skill: 1, ruleSet: rules, arrival: 100_000), playerID: "G:99", key: key, ruleSet: rules, experiment: nil, now: 100_000)
        #expect(queues.explanationInput(TicketID(99), now: 100_000)?.estimate.samples == 2)
        #expect(queues.explanationInput(TicketID(99), now: 100_000)?.estimate.seconds == nil, "not enough data")
        _ = queues.remove(TicketID(99))
        try matchPair(waited: 10, at: 200_000)
        try matchPair(waited: 30, at: 300_000)
        queues.enqueue(
            RuleQueuesTests.request(98, skill: 1, ruleSet: rules, arrival: 300_000), playerID: "G:98", key: key, ruleSet: rules, experiment: nil, now: 300_000)
        let estimate = try #require(queues.explanationInput(TicketID(98), now: 300_000)?.estimate)
        #expect(estimate.samples == 6 && estimate.seconds == 30, "waits 10, 10, 30, 30, 100, 100: the median is 30")
        // Fifteen minutes after the first pair, it no longer counts.
        let later = try #require(queues.explanationInput(TicketID(98), now: 100_000 + RuleQueues.estimateWindowMillis)?.estimate)
        #expect(later.samples == 4 && later.seconds == nil)
        #expect(queues.explanationInput(TicketID(1), now: 300_000) == nil, "a matched request waits no more")
    }
}
