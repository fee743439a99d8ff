import JMESPath
import NetworkFaultProxy
import Testing
@testable import GameCenterServer

/// Apple's rule-based matching, checked on Apple's own worked examples and on the cases its users report.
@Suite struct RuleMatcherTests {
    static func rule(_ name: String, _ type: MatchmakingRuleType, _ expression: String, weight: Double? = nil) throws -> MatchmakingRule {
        MatchmakingRule(
            referenceName: name, description: name, type: type,
            expression: try JMESPathExpression(compiling: expression, functions: RuleFunctions.table()), weight: weight)
    }

    static func ruleSet(_ min: Int, _ max: Int, teams: [MatchmakingTeam] = [], _ rules: [MatchmakingRule]) -> MatchmakingRuleSet {
        MatchmakingRuleSet(referenceName: "test.rules", ruleLanguageVersion: 1, minPlayers: min, maxPlayers: max, teams: teams, rules: rules)
    }

    /// Requests named r1, r2, … (players r1_p1, …) as Apple's testing tool names them, each a second older than the
    /// next; a request given several property sets brings invited players.
    static func requests(
        _ players: [[[String: JSONValue]]], ruleSet: MatchmakingRuleSet, min: Int = 2, max: Int = 16, arrivals: [Int64]? = nil
    ) -> [RuleRequest] {
        players.enumerated().map { index, properties in
            let name = "r\(index + 1)"
            return RuleRequest(
                ticket: TicketID(UInt64(index + 1)), requestName: name,
                players: properties.enumerated().map { RulePlayer(playerID: "\(name)_p\($0 + 1)", properties: $1) },
                minPlayers: min, maxPlayers: max, ruleSet: ruleSet,
                attributes: ["appVersion": "1.0.0", "bundleId": "com.example.mygame", "platform": "IOS", "locale": "EN-US"],
                arrival: arrivals?[index] ?? Int64(index) * 1000)
        }
    }

    static func names(_ result: RulePassResult) -> [[String]] {
        result.matches.map { $0.tickets.map { "r\($0.rawValue)" } }
    }

    @Test func skillsOneTwentyOneTwoTwentyTwoInATwentyWideWindowPairAsApplesToolShows() throws {
        // Apple's testrules example: skills 1, 21, 2, 22 → [r1, r3] and [r2, r4].
        let skills: [[[String: JSONValue]]] = [[["skill": 1]], [["skill": 21]], [["skill": 2]], [["skill": 22]]]
        let strict = Self.ruleSet(2, 2, [try Self.rule("SkillWindow", .match, "diff(players[].properties.skill) < `20`")])
        #expect(Self.names(RuleMatcher(ruleSet: strict).pass(Self.requests(skills, ruleSet: strict), now: 3000)) == [["r1", "r3"], ["r2", "r4"]])
        // An inclusive window with a DISTANCE rule: the closest skill is tried first.
        let ranked = Self.ruleSet(
            2, 2,
            [
                try Self.rule("SkillDistance", .distance, "div(abs(sub(requests[0].properties.skill, requests[1].properties.skill)), `100`)"),
                try Self.rule("SkillWindow", .match, "diff(players[].properties.skill) <= `20`"),
            ])
        #expect(Self.names(RuleMatcher(ruleSet: ranked).pass(Self.requests(skills, ruleSet: ranked), now: 3000)) == [["r1", "r3"], ["r2", "r4"]])
        // Without the ranking, the oldest compatible request is taken: 1 and 21 are exactly 20 apart.
        let inclusive = Self.ruleSet(2, 2, [try Self.rule("SkillWindow", .match, "diff(players[].properties.skill) <= `20`")])
        #expect(Self.names(RuleMatcher(ruleSet: inclusive).pass(Self.requests(skills, ruleSet: inclusive), now: 3000)) == [["r1", "r2"], ["r3", "r4"]])
    }

    @Test func skillsOneToFourSplitIntoBlueAndRedOfEqualSkillAsApplesToolShows() throws {
        // Apple's testrules team example: skills 1, 2, 3, 4 → blue r1 and r4, red r2 and r3.
        let teams = [MatchmakingTeam(name: "blue", minPlayers: 2, maxPlayers: 2), MatchmakingTeam(name: "red", minPlayers: 2, maxPlayers: 2)]
        let rules = Self.ruleSet(
            4, 4, teams: teams,
            [
                try Self.rule(
                    "BalancedSkill", .team,
                    "sum(teams[?name == 'blue'].players[].properties.skill) == sum(teams[?name == 'red'].players[].properties.skill)")
            ])
        let result = RuleMatcher(ruleSet: rules).pass(Self.requests([[["skill": 1]], [["skill": 2]], [["skill": 3]], [["skill": 4]]], ruleSet: rules), now: 0)
        #expect(Self.names(result) == [["r1", "r2", "r3", "r4"]])
        #expect(result.matches.first?.teams == ["r1_p1": "blue", "r2_p1": "red", "r3_p1": "red", "r4_p1": "blue"])
    }

    @Test func applesSameSizeTeamsRuleSplitsFourPlayersTwoAndTwo() throws {
        let teams = [MatchmakingTeam(name: "blue", minPlayers: 1, maxPlayers: 4), MatchmakingTeam(name: "red", minPlayers: 1, maxPlayers: 4)]
        let rules = Self.ruleSet(
            2, 4, teams: teams,
            [try Self.rule("SameSizeTeams", .team, "length(teams[?name == 'red'].players[]) == length(teams[?name == 'blue'].players[])")])
        let result = RuleMatcher(ruleSet: rules).pass(Self.requests([[[:]], [[:]], [[:]], [[:]]], ruleSet: rules), now: 0)
        #expect(result.matches.count == 1)
        let assigned = result.matches[0].teams
        #expect(assigned.values.filter { $0 == "blue" }.count == 2 && assigned.values.filter { $0 == "red" }.count == 2)
        // Three players can never be split evenly: no match of three, even though the rule set allows it.
        let three = RuleMatcher(ruleSet: rules).pass(Self.requests([[[:]], [[:]], [[:]]], ruleSet: rules), now: 0)
        #expect(Self.names(three) == [["r1", "r2"]])
    }

    @Test func aRuleSetOfThreeToFourMatchesFourWhenFourWait() throws {
        // Apple forum 805868: minPlayers 3, maxPlayers 4 "never matches 4". The most players come first.
        let rules = Self.ruleSet(3, 4, [try Self.rule("Everyone", .match, "length(requests) >= `3`")])
        let matcher = RuleMatcher(ruleSet: rules)
        #expect(Self.names(matcher.pass(Self.requests([[[:]], [[:]], [[:]], [[:]]], ruleSet: rules), now: 0)) == [["r1", "r2", "r3", "r4"]])
        #expect(Self.names(matcher.pass(Self.requests([[[:]], [[:]], [[:]], [[:]], [[:]]], ruleSet: rules), now: 0)) == [["r1", "r2", "r3", "r4"]])
        #expect(Self.names(matcher.pass(Self.requests([[[:]], [[:]], [[:]]], ruleSet: rules), now: 0)) == [["r1", "r2", "r3"]])
        #expect(matcher.pass(Self.requests([[[:]], [[:]]], ruleSet: rules), now: 0).matches.isEmpty)
    }

    @Test func theRuleSetsRangeNarrowsARequestsAndARequestOutsideItIsNeverMatched() throws {
        let rules = Self.ruleSet(2, 8, [])
        // A request for 2 to 4 in a rule set of 2 to 8: at most 4 players.
        let four = RuleMatcher(ruleSet: rules).pass(Self.requests(Array(repeating: [[:]], count: 6), ruleSet: rules, min: 2, max: 4), now: 0)
        #expect(Self.names(four) == [["r1", "r2", "r3", "r4"], ["r5", "r6"]])
        // 8 to 8 in a rule set of 2 to 4: never.
        let narrow = Self.ruleSet(2, 4, [])
        let never = RuleMatcher(ruleSet: narrow).pass(Self.requests(Array(repeating: [[:]], count: 8), ruleSet: narrow, min: 8, max: 8), now: 0)
        #expect(never.matches.isEmpty)
        #expect(Self.requests([[[:]]], ruleSet: narrow, min: 8, max: 8)[0].playerRange == nil)
    }

    @Test func partyCodesMatchOnlyTheirOwnParty() throws {
        let rules = Self.ruleSet(
            2, 2, [try Self.rule("PartyCode", .compatible, "requests[0].properties.partyCode == requests[1].properties.partyCode")])
        let codes: [[[String: JSONValue]]] = [[["partyCode": "A"]], [["partyCode": "B"]], [["partyCode": "A"]], [["partyCode": "B"]], [["partyCode": "C"]]]
        #expect(Self.names(RuleMatcher(ruleSet: rules).pass(Self.requests(codes, ruleSet: rules), now: 0)) == [["r1", "r3"], ["r2", "r4"]])
    }

    @Test func groupingOnAnEqualityRuleMatchesExactlyAsEvaluatingEveryPair() throws {
        var generator = SplitMix64(seed: 7)
        let grouped = Self.ruleSet(
            2, 4,
            [
                try Self.rule("SameMode", .compatible, "requests[0].properties.mode == requests[1].properties.mode"),
                try Self.rule("Skill", .match, "diff(players[].properties.skill) <= `30`"),
            ])
        #expect(RuleMatcher.equalityPath(grouped.rules[0].expression.source) == "properties.mode")
        let pairwise = Self.ruleSet(
            2, 4,
            [
                try Self.rule("SameMode", .compatible, "(requests[0].properties.mode == requests[1].properties.mode)"),
                try Self.rule("Skill", .match, "diff(players[].properties.skill) <= `30`"),
            ])
        #expect(RuleMatcher.equalityPath(pairwise.rules[0].expression.source) == nil)
        for _ in 0..<50 {
            let count = Int.random(in: 0...40, using: &generator)
            let players: [[[String: JSONValue]]] = (0..<count).map { _ in
                var properties: [String: JSONValue] = ["skill": .number(Double(Int.random(in: 0...100, using: &generator)))]
                switch Int.random(in: 0...3, using: &generator) {
                case 0: break  // no mode: null equals null
                case 1: properties["mode"] = 1
                default: properties["mode"] = .string(["duel", "race"].randomElement(using: &generator)!)
                }
                return [properties]
            }
            let min = Int.random(in: 2...3, using: &generator)
            let a = RuleMatcher(ruleSet: grouped).pass(Self.requests(players, ruleSet: grouped, min: min, max: 4), now: 0)
            let b = RuleMatcher(ruleSet: pairwise).pass(Self.requests(players, ruleSet: pairwise, min: min, max: 4), now: 0)
            #expect(a.matches == b.matches)
        }
    }

    @Test func applesAgedSkillRuleWidensTheWindowAsRequestsWait() throws {
        // "Finding players with similar skill levels": 20 wide for 10 s, then 40, and 100 from 20 s on.
        let rules = Self.ruleSet(
            2, 4,
            [
                try Self.rule(
                    "SkillDifference", .match,
                    "diff(players[].properties.skill) <= agedValues(avg(requests[].secondsInQueue), `20`, [ `40`, `100` ], [ `10`, `20` ])")
            ])
        let requests = Self.requests([[["skill": 10]], [["skill": 45]]], ruleSet: rules, arrivals: [0, 0])
        let matcher = RuleMatcher(ruleSet: rules)
        #expect(matcher.pass(requests, now: 9_999).matches.isEmpty)
        #expect(matcher.pass(requests, now: 10_000).matches.count == 1)
        let far = Self.requests([[["skill": 0]], [["skill": 90]]], ruleSet: rules, arrivals: [0, 0])
        #expect(matcher.pass(far, now: 19_999).matches.isEmpty)
        #expect(matcher.pass(far, now: 20_000).matches.count == 1)
    }

    @Test func invitedPlayersCountAndStayOnTheirInvitersTeam() throws {
        let teams = [MatchmakingTeam(name: "blue", minPlayers: 1, maxPlayers: 2), MatchmakingTeam(name: "red", minPlayers: 1, maxPlayers: 2)]
        let rules = Self.ruleSet(3, 4, teams: teams, [try Self.rule("Friends", .team, "hasInvitedPlayersOnSameTeam(teams, players)")])
        // r1 brings a friend (playerCount 2); r2 and r3 come alone.
        let result = RuleMatcher(ruleSet: rules).pass(
            Self.requests([[["skill": 1], ["skill": 2]], [[:]], [[:]]], ruleSet: rules), now: 0)
        #expect(Self.names(result) == [["r1", "r2", "r3"]])
        let assigned = result.matches[0].teams
        #expect(assigned["r1_p1"] == assigned["r1_p2"])
        #expect(assigned["r2_p1"] != assigned["r1_p1"] && assigned["r3_p1"] != assigned["r1_p1"])
    }

    @Test func aRuleThatFailsToEvaluateCountsAsAnErrorAndMatchesNothing() throws {
        let rules = Self.ruleSet(2, 2, [try Self.rule("Broken", .match, "abs(players[0].properties.name)")])
        let result = RuleMatcher(ruleSet: rules).pass(Self.requests([[["name": "Ann"]], [["name": "Bob"]]], ruleSet: rules), now: 0)
        #expect(result.matches.isEmpty)
        #expect(result.tallies["Broken"]?.errors == 1)
    }

    @Test func numericMatchRulesPickTheCheapestValidCandidate() throws {
        // No DISTANCE rule, so candidates come by age; the weighted number still prefers the closest skill.
        let rules = Self.ruleSet(2, 2, [try Self.rule("SkillGap", .match, "diff(players[].properties.skill)", weight: 2)])
        let result = RuleMatcher(ruleSet: rules).pass(
            Self.requests([[["skill": 50]], [["skill": 10]], [["skill": 48]], [["skill": 12]]], ruleSet: rules), now: 0)
        #expect(Self.names(result) == [["r1", "r3"], ["r2", "r4"]])
        #expect(result.tallies["SkillGap"]?.numberCount ?? 0 >= 3)
    }

    @Test func theSameRequestsAtTheSameTimeGiveTheSameMatchesInAnyOrder() throws {
        var generator = SplitMix64(seed: 11)
        let rules = Self.ruleSet(
            2, 4,
            [
                try Self.rule("Region", .compatible, "requests[0].properties.region == requests[1].properties.region"),
                try Self.rule("Skill", .distance, "div(abs(sub(requests[0].properties.skill, requests[1].properties.skill)), `100`)"),
                try Self.rule("Window", .match, "diff(players[].properties.skill) <= `25`"),
            ])
        let players: [[[String: JSONValue]]] = (0..<60).map { _ in
            [["skill": .number(Double(Int.random(in: 0...100, using: &generator))), "region": .string(["eu", "us"].randomElement(using: &generator)!)]]
        }
        let requests = Self.requests(players, ruleSet: rules)
        let matcher = RuleMatcher(ruleSet: rules)
        let first = matcher.pass(requests, now: 61_000)
        #expect(!first.matches.isEmpty)
        #expect(matcher.pass(requests.shuffled(using: &generator), now: 61_000).matches == first.matches)
    }
}

/// Apple's documented function examples (on an empty object: a multi-select list of null is null).
@Suite struct RuleFunctionTests {
    static func evaluate(_ expression: String, _ data: JSONValue = [:], versions: [[String]] = []) throws -> JSONValue {
        try JMESPathExpression(compiling: expression, functions: RuleFunctions.table(compatibleAppVersions: versions)).evaluate(data)
    }

    @Test func arrayFunctions() throws {
        #expect(try Self.evaluate("diff([ `4`, `3`, `2`, `1` ])") == 3)
        #expect(try Self.evaluate("diff([ `50`, `19`, `21`, `61` ])") == 42)
        #expect(try Self.evaluate("diff(`[]`)") == .null)
        #expect(try Self.evaluate("asSet([ `4`, `3`, `2`, `1`, `4`, `1` ])") == [1, 2, 3, 4])
        #expect(try Self.evaluate("asSet([ 'd', 'c', 'b', 'a', 'd', 'a' ])") == ["a", "b", "c", "d"])
        #expect(try Self.evaluate("intersection([[ 'a', 'b' ], [ 'b', 'c' ], [ 'b', 'd']])") == ["b"])
    }

    @Test func agedFunctions() throws {
        let values = "[ `20`, `30`, `40`, `50`, `60`, `100` ], [ `5`, `10`, `15`, `20`, `25`, `30` ]"
        for (age, expected) in [(0, 5), (3, 5), (5, 20), (17, 40), (29, 60), (30, 100), (32, 100)] {
            #expect(try Self.evaluate("agedValues(`\(age)`, `5`, \(values))") == .number(Double(expected)), "age \(age)")
        }
        #expect(throws: JMESPathError.self) { try Self.evaluate("agedValues(`1`, `5`, [`1`], [`1`, `2`])") }
        // Apple's declared formula: initialValue + intervalChange × ⌊age / ageIntervalSeconds⌋, capped at finalLimit.
        for (age, expected) in [(3, 50), (10, 100), (84, 450), (200, 500)] {
            #expect(try Self.evaluate("agedAsSteppedValue(`\(age)`, `50`, `500`, `10`, `50`)") == .number(Double(expected)), "age \(age)")
        }
        for (age, expected) in [(4, 8), (5, 6), (20, 0), (29, -2), (100, -4)] {
            #expect(try Self.evaluate("agedValueLinear(`\(age)`, `8`, `-4`, `5`, `-2`)") == .number(Double(expected)), "age \(age)")
        }
    }

    @Test func numericAndBooleanFunctions() throws {
        #expect(try Self.evaluate("if(`true`, `0.0`, `1.0`)") == 0)
        #expect(try Self.evaluate("if(`false`, `0.0`, `1.0`)") == 1)
        #expect(try Self.evaluate("div(`7`, `2`)") == 3.5)
        #expect(try Self.evaluate("div(`7`, `0`)") == .null)
        #expect(try Self.evaluate("sub(`7`, `2`)") == 5)
        #expect(try Self.evaluate("sub(`7`, 'x')") == .null)
    }

    @Test func requestFunctions() throws {
        let pair: JSONValue = [
            "requests": [
                ["appVersion": "1.0", "latitude": 48.85, "longitude": 2.35], ["appVersion": "1.1", "latitude": -48.85, "longitude": -177.65],
            ]
        ]
        #expect(try Self.evaluate("areCompatibleAppVersions(requests[0], requests[0])", pair) == true)
        #expect(try Self.evaluate("areCompatibleAppVersions(requests[0], requests[1])", pair) == false)
        #expect(try Self.evaluate("areCompatibleAppVersions(requests[0], requests[1])", pair, versions: [["1.0", "1.1"]]) == true)
        #expect(try Self.evaluate("geoLatency(requests[0], requests[0])", pair) == 0)
        guard case .number(let antipodes) = try Self.evaluate("geoLatency(requests[0], requests[1])", pair) else {
            Issue.record("geoLatency gave no number")
            return
        }
        #expect(abs(antipodes - 1) < 1e-9)
        #expect(try Self.evaluate("geoLatency(requests[0], `{}`)", pair) == 1)
    }
}
