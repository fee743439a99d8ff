import Foundation
import JMESPath

/// Evaluates a rule set offline on requests written as Apple's `testrules.py` takes them, for
/// `gamecenter matchmaking test`: no server, no devices.
///
/// The requests are a JSON array. Each element is a request: an object of its player's properties, or an array of such
/// objects (the requester, then the players it invites). The requester's object may also set the request's own
/// fields, which are not properties: `appVersion` (default `1.0.0`), `bundleId` (the game's), `platform` (`IOS`),
/// `locale` (`EN-US`), `minPlayers` and `maxPlayers` (the rule set's), `secondsInQueue` (0), `latitude`, `longitude`.
/// Requests are named `r1`, `r2`, … and players `r1_p1`, `r1_p2`, … as in Apple's tool.
public struct RuleTest: Sendable {
    /// The rule set under test.
    public let ruleSet: MatchmakingRuleSet
    let requests: [RuleRequest]
    let names: [TicketID: String]
    /// The pass's clock: every request's age is measured back from it.
    private let now: Int64 = 1 << 40

    /// Fields of a request that are not player properties.
    static let requestFields: Set<String> = [
        "appVersion", "bundleId", "platform", "locale", "minPlayers", "maxPlayers", "secondsInQueue", "latitude", "longitude",
    ]

    /// Reads `json` (see the type's documentation); `extraSeconds` is added to every request's time in the queue.
    /// Throws ``RuleTestError`` naming the request and field that are wrong.
    public init(ruleSet: MatchmakingRuleSet, bundleID: String, requests json: JSONValue, extraSeconds: Double = 0) throws {
        self.ruleSet = ruleSet
        guard case .array(let elements) = json else { throw RuleTestError("the requests must be a JSON array of requests") }
        guard elements.count <= 10_000 else { throw RuleTestError("\(elements.count) requests; at most 10000 are tested at once") }
        var requests: [RuleRequest] = []
        var names: [TicketID: String] = [:]
        for (index, element) in elements.enumerated() {
            let name = "r\(index + 1)"
            let objects: [JSONValue]
            if case .array(let list) = element { objects = list } else { objects = [element] }
            guard !objects.isEmpty, objects.count <= 16 else { throw RuleTestError("\(name): a request has 1 to 16 players") }
            var players: [RulePlayer] = []
            var fields: [String: JSONValue] = [:]
            for (position, object) in objects.enumerated() {
                guard case .object(var properties) = object else { throw RuleTestError("\(name): each player is a JSON object of properties") }
                if position == 0 {
                    for key in Self.requestFields { fields[key] = properties.removeValue(forKey: key) }
                } else if let key = properties.keys.first(where: Self.requestFields.contains) {
                    throw RuleTestError("\(name): '\(key)' belongs to the request; set it on its first player")
                }
                guard properties["gc"] == nil else { throw RuleTestError("\(name): the property key 'gc' is reserved") }
                players.append(RulePlayer(playerID: "\(name)_p\(position + 1)", properties: properties))
            }
            func integer(_ key: String, default value: Int) throws -> Int {
                guard let field = fields[key] else { return value }
                guard case .number(let number) = field, number == number.rounded(), (0...1_000_000).contains(number) else {
                    throw RuleTestError("\(name): \(key) must be a whole number from 0 to 1000000")
                }
                return Int(number)
            }
            func text(_ key: String, default value: String) throws -> String {
                guard let field = fields[key] else { return value }
                guard case .string(let string) = field else { throw RuleTestError("\(name): \(key) must be a string") }
                return string
            }
            var attributes: [String: JSONValue] = [
                "appVersion": .string(try text("appVersion", default: "1.0.0")), "bundleId": .string(try text("bundleId", default: bundleID)),
                "platform": .string(try text("platform", default: "IOS")), "locale": .string(try text("locale", default: "EN-US")),
            ]
            for key in ["latitude", "longitude"] {
                guard let field = fields[key] else { continue }
                guard case .number = field else { throw RuleTestError("\(name): \(key) must be a number") }
                attributes[key] = field
            }
            let seconds = Double(try integer("secondsInQueue", default: 0)) + extraSeconds
            let ticket = TicketID(UInt64(index + 1))
            names[ticket] = name
            requests.append(
                RuleRequest(
                    ticket: ticket, requestName: name, players: players, minPlayers: try integer("minPlayers", default: ruleSet.minPlayers),
                    maxPlayers: try integer("maxPlayers", default: ruleSet.maxPlayers), ruleSet: ruleSet, attributes: attributes,
                    arrival: now - Int64((seconds * 1000).rounded())))
        }
        self.requests = requests
        self.names = names
    }

    /// Runs one traced pass: Apple's `matchmakingResults` (each match an array of `{requestName, teamAssignments}`),
    /// the requests left waiting, each rule's tally, and every evaluation with the requests it saw.
    public func report() -> JSONValue {
        let result = RuleMatcher(ruleSet: ruleSet).pass(requests, now: now, traced: true)
        let matched = Set(result.matches.flatMap(\.tickets))
        let requestOf = Dictionary(uniqueKeysWithValues: requests.map { ($0.ticket, $0) })
        let matches = result.matches.map { match -> JSONValue in
            .array(
                match.tickets.map { ticket in
                    let request = requestOf[ticket]!
                    let assignments: JSONValue =
                        match.teams.isEmpty
                        ? .null
                        : .array(
                            request.players.map { player in
                                ["playerId": .string(player.playerID), "team": .string(match.teams[player.playerID] ?? "")]
                            })
                    return ["requestName": .string(names[ticket]!), "teamAssignments": assignments]
                })
        }
        let tallies = ruleSet.rules.map { rule -> JSONValue in
            let tally = result.tallies[rule.referenceName] ?? RuleTally()
            var entry: [String: JSONValue] = [
                "referenceName": .string(rule.referenceName), "type": .string(rule.type.rawValue), "true": .number(Double(tally.trueCount)),
                "false": .number(Double(tally.falseCount)), "errors": .number(Double(tally.errors)),
            ]
            if tally.numberCount > 0 { entry["averageResult"] = .number(tally.numberSum / Double(tally.numberCount)) }
            if RuleMatcher.equalityPath(rule.expression.source) != nil, rule.type == .compatible {
                entry["evaluatedBy"] = "grouping requests on the compared value"
            }
            return .object(entry)
        }
        let verdicts = (result.trace ?? []).map { verdict -> JSONValue in
            var entry: [String: JSONValue] = [
                "rule": .string(verdict.rule), "requests": .array(verdict.tickets.map { .string(names[$0]!) }),
            ]
            if let value = verdict.result { entry["result"] = value }
            if let error = verdict.error { entry["error"] = .string(error) }
            return .object(entry)
        }
        return [
            "matchmakingResults": .array(matches),
            "unmatched": .array(requests.filter { !matched.contains($0.ticket) }.map { .string(names[$0.ticket]!) }),
            "rules": .array(tallies),
            "verdicts": .array(verdicts),
        ]
    }
}

/// A requests file `gamecenter matchmaking test` cannot use, and why.
public struct RuleTestError: Error, CustomStringConvertible {
    /// What is wrong, naming the request.
    public let description: String

    init(_ description: String) { self.description = description }
}
