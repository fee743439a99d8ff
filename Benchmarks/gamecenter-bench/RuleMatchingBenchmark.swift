import GameCenterServer
import Histogram
import JMESPath
import NetworkFaultProxy

/// Rule-based matching alone, in process, for `gamecenter-bench matchmaking --rules`: `waiting` fresh 1v1 requests
/// (skill 0…1000, one of `regions` regions) under a rule set with a region rule (COMPATIBLE) and a skill window
/// (MATCH), one pass over them timed; then requests arriving one at a time into what is left, a pass each (the
/// server runs a pass 20 ms after an arrival). Anchor: the same requests through today's classic queue, the region as
/// the player group (it matches on arrival and knows no skill).
enum RuleMatchingBenchmark {
    /// What one run measured.
    struct Figures: Sendable {
        var firstPassMillis: [Double]
        var firstPassMatches: Int
        var firstPassEvaluations: Int
        var left: Int
        var steadyPassP50Millis: Double
        var steadyPassP99Millis: Double
        var steadyMatched: Int
        var arrivals: Int
        var classicMillis: Double
        var classicMatches: Int
    }

    static func ruleSet(window: Int) throws -> MatchmakingRuleSet {
        let functions = RuleFunctions.table()
        return MatchmakingRuleSet(
            referenceName: "bench.rules", minPlayers: 2, maxPlayers: 2,
            rules: [
                MatchmakingRule(
                    referenceName: "SameRegion", description: "one region", type: .compatible,
                    expression: try JMESPathExpression(compiling: "requests[0].properties.region == requests[1].properties.region", functions: functions)),
                MatchmakingRule(
                    referenceName: "SkillWindow", description: "skills close", type: .match,
                    expression: try JMESPathExpression(compiling: "diff(players[].properties.skill) <= `\(window)`", functions: functions)),
            ])
    }

    static func run(waiting: Int, regions: Int, window: Int, repeats: Int, arrivals: Int) throws -> Figures {
        let rules = try ruleSet(window: window)
        var generator = SplitMix64(seed: 42)
        let people = (0..<(waiting + arrivals)).map { _ in
            (skill: Double(Int.random(in: 0...1000, using: &generator)), region: Int.random(in: 0..<regions, using: &generator))
        }
        func request(_ index: Int, arrival: Int64) -> RuleRequest {
            RuleRequest(
                ticket: TicketID(UInt64(index + 1)), requestName: "r\(index)",
                players: [
                    RulePlayer(playerID: "p\(index)", properties: ["skill": .number(people[index].skill), "region": .string("region\(people[index].region)")])
                ],
                minPlayers: 2, maxPlayers: 2, ruleSet: rules, attributes: ["appVersion": "1.0", "bundleId": "bench", "platform": "LINUX", "locale": "en"],
                arrival: arrival)
        }
        let matcher = RuleMatcher(ruleSet: rules)
        let fresh = (0..<waiting).map { request($0, arrival: Int64($0)) }
        let clock = ContinuousClock()
        var firstPass: [Double] = []
        var result = matcher.pass(fresh, now: Int64(waiting))
        for _ in 0..<repeats {
            let start = clock.now
            result = matcher.pass(fresh, now: Int64(waiting))
            firstPass.append(milliseconds(clock.now - start))
        }
        let matchedFirst = Set(result.matches.flatMap(\.tickets))
        var left = fresh.filter { !matchedFirst.contains($0.ticket) }
        let leftAfterFirst = left.count

        var passes = Histogram<UInt64>(numberOfSignificantValueDigits: .three)
        var matched = 0
        for offset in 0..<arrivals {
            left.append(request(waiting + offset, arrival: Int64(waiting + offset)))
            let start = clock.now
            let pass = matcher.pass(left, now: Int64(waiting + offset))
            _ = passes.record(UInt64(milliseconds(clock.now - start) * 1000))
            let gone = Set(pass.matches.flatMap(\.tickets))
            matched += gone.count
            left.removeAll { gone.contains($0.ticket) }
        }

        var queue = MatchmakingQueue()
        var classicMatches = 0
        let classicStart = clock.now
        for index in 0..<waiting {
            let ticket = Ticket(
                id: TicketID(UInt64(index + 1)), playerID: "p\(index)",
                key: QueueKey(game: "bench", hosted: false, playerGroup: UInt32(people[index].region)), minPlayers: 2, maxPlayers: 2, fillTime: 0)
            classicMatches += queue.enqueue(ticket, now: Int64(index)).started.count
        }
        let classic = milliseconds(clock.now - classicStart)
        return Figures(
            firstPassMillis: firstPass, firstPassMatches: result.matches.count, firstPassEvaluations: result.evaluations, left: leftAfterFirst,
            steadyPassP50Millis: Double(passes.valueAtPercentile(50)) / 1000, steadyPassP99Millis: Double(passes.valueAtPercentile(99)) / 1000,
            steadyMatched: matched, arrivals: arrivals, classicMillis: classic, classicMatches: classicMatches)
    }

    private static func milliseconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) * 1000 + Double(duration.components.attoseconds) / 1e15
    }

}
