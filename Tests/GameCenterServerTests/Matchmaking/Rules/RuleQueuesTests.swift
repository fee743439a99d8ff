import JMESPath
import Testing
@testable import GameCenterServer

/// The rule-based queues' bookkeeping: when a queue is due a pass, how a pass's matches start (or are dropped when a
/// request left meanwhile), and the activity count.
@Suite struct RuleQueuesTests {
    static let key = RuleQueues.Key(game: "com.example.game\nsandbox", queue: "com.example.Q", hosted: false)

    static func ruleSet(aged: Bool) throws -> MatchmakingRuleSet {
        let expression = aged ? "diff(players[].properties.skill) <= agedValues(avg(requests[].secondsInQueue), `0`, [`100`], [`10`])" : "`true`"
        return RuleMatcherTests.ruleSet(2, 2, [try RuleMatcherTests.rule("Skill", .match, expression)])
    }

    static func request(_ ticket: UInt64, skill: Double, ruleSet: MatchmakingRuleSet, arrival: Int64 = 0) -> RuleRequest {
        RuleRequest(
            ticket: TicketID(ticket), requestName: "t\(ticket)", players: [RulePlayer(playerID: "G:\(ticket)", properties: ["skill": .number(skill)])],
            minPlayers: 2, maxPlayers: 2, ruleSet: ruleSet, attributes: [:], arrival: arrival)
    }

    @Test func aQueueRunsAPassShortlyAfterAChangeAndEverySecondWhenItsRulesDependOnTime() throws {
        let rules = try Self.ruleSet(aged: true)
        var queues = RuleQueues()
        queues.enqueue(Self.request(1, skill: 10, ruleSet: rules), playerID: "G:1", key: Self.key, ruleSet: rules, experiment: nil, now: 1000)
        do {
            let due = queues.takeDuePasses(now: 1000)
            #expect(due.count == 1, "the first pass runs at once")
        }
        do {
            let due = queues.takeDuePasses(now: 1010)
            #expect(due.isEmpty)
        }
        queues.enqueue(Self.request(2, skill: 90, ruleSet: rules), playerID: "G:2", key: Self.key, ruleSet: rules, experiment: nil, now: 1010)
        do {
            let due = queues.takeDuePasses(now: 1010 + RuleQueues.passDelayMillis - 11)
            #expect(due.isEmpty, "arrivals close together wait for each other")
        }
        let due = queues.takeDuePasses(now: 1000 + RuleQueues.passDelayMillis)
        #expect(due.map(\.requests.count) == [2])
        do {
            let due = queues.takeDuePasses(now: 1500)
            #expect(due.isEmpty, "nothing changed")
        }
        do {
            let due = queues.takeDuePasses(now: 1000 + RuleQueues.passDelayMillis + RuleQueues.agedPassMillis)
            #expect(due.count == 1, "time alone may match")
        }
        // The same queue with rules that ignore time is left alone until something changes.
        let still = try Self.ruleSet(aged: false)
        var other = RuleQueues()
        other.enqueue(Self.request(3, skill: 1, ruleSet: still), playerID: "G:3", key: Self.key, ruleSet: still, experiment: nil, now: 0)
        do {
            let due = other.takeDuePasses(now: 0)
            #expect(due.count == 1)
        }
        do {
            let due = other.takeDuePasses(now: 60_000)
            #expect(due.isEmpty)
        }
    }

    @Test func aMatchStartsOnlyWhenAllItsRequestsStillWait() throws {
        let rules = try Self.ruleSet(aged: false)
        var queues = RuleQueues()
        for ticket: UInt64 in 1...4 {
            queues.enqueue(Self.request(ticket, skill: 1, ruleSet: rules), playerID: "G:\(ticket)", key: Self.key, ruleSet: rules, experiment: nil, now: 0)
        }
        let pass = try #require(queues.takeDuePasses(now: 0).first)
        let result = pass.matcher.pass(pass.requests, now: 0)
        #expect(result.matches.map(\.tickets) == [[TicketID(1), TicketID(2)], [TicketID(3), TicketID(4)]])
        let removed = queues.remove(TicketID(4))
        #expect(removed)
        let (outcome, waits) = queues.apply(result.matches, key: pass.key, now: 0)
        #expect(waits == [0, 0], "G:1 and G:2 arrived at 0")
        #expect(outcome.started.map { $0.members.map(\.playerID) } == [["G:1", "G:2"]])
        #expect(outcome.started.first?.playerProperties?["G:1"] == ["skill": 1, "gc": [:]])
        #expect(queues.waitingCount == 1 && queues.contains(TicketID(3)))
        let rerun = queues.takeDuePasses(now: 1000)
        #expect(rerun.map(\.requests.count) == [1], "the dropped match's queue runs again")
        let again = queues.remove(TicketID(4))
        #expect(!again)
    }

    @Test func activityCountsArrivalsOfTheLastMinute() throws {
        let rules = try Self.ruleSet(aged: false)
        var queues = RuleQueues()
        for (ticket, now): (UInt64, Int64) in [(1, 0), (2, 30_000), (3, 59_000)] {
            queues.enqueue(Self.request(ticket, skill: 1, ruleSet: rules), playerID: "G:\(ticket)", key: Self.key, ruleSet: rules, experiment: nil, now: now)
        }
        #expect(queues.activity(game: Self.key.game, queue: Self.key.queue, now: 59_000) == 3)
        #expect(queues.activity(game: Self.key.game, queue: Self.key.queue, now: 60_001) == 2)
        #expect(queues.activity(game: Self.key.game, queue: "com.example.Other", now: 0) == 0)
    }
}
