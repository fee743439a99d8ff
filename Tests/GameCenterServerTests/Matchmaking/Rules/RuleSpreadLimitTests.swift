import JMESPath
import NetworkFaultProxy
import Testing
@testable import GameCenterServer

/// The skill-window shortcut of a pass (``RuleMatcher/SpreadLimit``): candidates whose players are too far apart are
/// skipped without evaluating the rule. A traced pass evaluates every candidate, so on the same requests both must
/// give the same matches and count the same answers for every rule.
@Suite struct RuleSpreadLimitTests {
    /// Rule sets whose first MATCH rule bounds the spread: a literal window (`<=`, `<`), an aged window, on a nested
    /// property, for pairs and for three to four players; and one whose window rule is not the first MATCH rule.
    static func ruleSets() throws -> [(name: String, rules: MatchmakingRuleSet, spreadLimited: Bool)] {
        let region = try RuleMatcherTests.rule("SameRegion", .compatible, "requests[0].properties.region == requests[1].properties.region")
        let even = try RuleMatcherTests.rule("EvenTotal", .match, "sum(players[].properties.level) > `3`")
        func window(_ expression: String) throws -> MatchmakingRule { try RuleMatcherTests.rule("Window", .match, expression) }
        return [
            ("literal", RuleMatcherTests.ruleSet(2, 2, [region, try window("diff(players[].properties.skill) <= `20`"), even]), true),
            ("strict", RuleMatcherTests.ruleSet(2, 2, [try window("diff(players[].properties.skill) < `20`")]), true),
            (
                "aged",
                RuleMatcherTests.ruleSet(
                    2, 2, [try window("diff(players[].properties.skill) <= agedValues(avg(requests[].secondsInQueue), `10`, [`30`, `60`], [`5`, `10`])")]),
                true
            ),
            ("nested", RuleMatcherTests.ruleSet(3, 4, [try window("diff(players[].properties.stats.skill) <= `40`")]), true),
            ("second", RuleMatcherTests.ruleSet(2, 3, [even, try window("diff(players[].properties.skill) <= `20`")]), false),
        ]
    }

    /// `count` requests of one to three players, skills 0…1000 (some players without one), levels 0…3, two regions,
    /// arrived over 20 s.
    static func requests(_ count: Int, ruleSet: MatchmakingRuleSet, seed: UInt64) -> [RuleRequest] {
        var random = SplitMix64(seed: seed)
        return (0..<count).map { index in
            let players = (0..<Int.random(in: 1...3, using: &random)).map { player -> RulePlayer in
                let skill = Double(Int.random(in: 0...1000, using: &random))
                var properties: [String: JSONValue] = [
                    "region": .string(Bool.random(using: &random) ? "eu" : "us"), "level": .number(Double(Int.random(in: 0...3, using: &random))),
                    "stats": .object(["skill": .number(skill)]),
                ]
                if Int.random(in: 0..<20, using: &random) > 0 { properties["skill"] = .number(skill) }
                return RulePlayer(playerID: "r\(index)_p\(player)", properties: properties)
            }
            return RuleRequest(
                ticket: TicketID(UInt64(index + 1)), requestName: "r\(index)", players: players, minPlayers: 2, maxPlayers: 4, ruleSet: ruleSet,
                attributes: [:], arrival: Int64.random(in: 0...20_000, using: &random))
        }
    }

    /// Yields between passes: a second of CPU in one go beside the in-process suites starves their PostgreSQL pool.
    @Test func skippingFarCandidatesGivesTheMatchesAndAnswersOfEvaluatingEveryOne() async throws {
        for (name, rules, spreadLimited) in try Self.ruleSets() {
            let matcher = RuleMatcher(ruleSet: rules)
            var (matches, fastEvaluations, allEvaluations) = (0, 0, 0)
            for seed: UInt64 in 1...4 {
                let requests = Self.requests(120, ruleSet: rules, seed: seed)
                let fast = matcher.pass(requests, now: 25_000)
                await Task.yield()
                let every = matcher.pass(requests, now: 25_000, traced: true)
                await Task.yield()
                #expect(fast.matches == every.matches, "\(name), seed \(seed)")
                #expect(fast.tallies == every.tallies, "\(name), seed \(seed)")
                matches += fast.matches.count
                fastEvaluations += fast.evaluations
                allEvaluations += every.evaluations
            }
            #expect(matches > 0, "\(name): the requests make matches")
            if spreadLimited {
                #expect(fastEvaluations < allEvaluations / 2, "\(name): \(fastEvaluations) of \(allEvaluations) evaluated")
            } else {
                #expect(fastEvaluations == allEvaluations, "\(name): a window that is not the first MATCH rule is always evaluated")
            }
        }
    }

    @Test func onlyAWindowOfLiteralLimitsIsTakenAsOne() throws {
        func limit(_ expression: String) throws -> RuleMatcher.SpreadLimit? {
            RuleMatcher.SpreadLimit(try RuleMatcherTests.rule("W", .match, expression))
        }
        #expect(try limit("diff(players[].properties.skill) <= `20`")?.bound == 20)
        #expect(try limit(" diff( players[].properties.a.b ) < `5` ")?.path == ["a", "b"])
        #expect(try limit("diff(players[].properties.skill) <= agedValues(avg(requests[].secondsInQueue), `20`, [`40`, `100`], [`10`, `20`])")?.bound == 100)
        #expect(try limit("diff(players[].properties.skill) <= requests[0].properties.window") == nil, "a limit the requests give")
        #expect(try limit("diff(players[].properties.skill) >= `20`") == nil)
        #expect(try limit("diff(requests[].properties.skill) <= `20`") == nil)
        #expect(try limit("diff(players[].properties.skill) <= `20` || `true`") == nil)
    }
}
