import JMESPath

/// A player of a rule-based request and the properties rules see for them (an invitee's come from the inviter's
/// `recipientProperties`).
package struct RulePlayer: Sendable, Equatable {
    var playerID: String
    var properties: [String: JSONValue]

    package init(playerID: String, properties: [String: JSONValue]) {
        self.playerID = playerID
        self.properties = properties
    }
}

/// A match request waiting in a rule-based queue: what Apple's `Request` object shows rule expressions, and when it
/// arrived.
package struct RuleRequest: Sendable {
    package let ticket: TicketID
    /// The requester first, then the players it brings.
    let players: [RulePlayer]
    /// The players this request is matched with (its own range narrowed to the rule set's); nil: never matched.
    let playerRange: ClosedRange<Int>?
    /// Monotonic milliseconds when it entered the queue.
    let arrival: Int64
    /// The request as expressions see it, without `secondsInQueue` (which grows).
    private let document: [String: JSONValue]
    /// The players as expressions see them.
    let playerDocuments: [JSONValue]

    /// `attributes`: `appVersion`, `bundleId`, `platform`, `locale` and, when the device sent a location, `latitude` and
    /// `longitude`.
    package init(
        ticket: TicketID, requestName: String, players: [RulePlayer], minPlayers: Int, maxPlayers: Int, ruleSet: MatchmakingRuleSet,
        attributes: [String: JSONValue], arrival: Int64
    ) {
        precondition(!players.isEmpty, "a request has its requester")
        self.ticket = ticket
        self.players = players
        self.arrival = arrival
        playerRange = ruleSet.playerRange(requestMin: minPlayers, requestMax: maxPlayers)
        playerDocuments = players.map { player in
            .object(["playerId": .string(player.playerID), "properties": .object(player.properties), "requestName": .string(requestName)])
        }
        var document = attributes
        document["requestName"] = .string(requestName)
        document["playerId"] = .string(players[0].playerID)
        document["properties"] = .object(players[0].properties)
        document["players"] = .array(playerDocuments)
        document["minPlayers"] = .number(Double(minPlayers))
        document["maxPlayers"] = .number(Double(maxPlayers))
        document["playerCount"] = .number(Double(players.count))
        self.document = document
    }

    var playerCount: Int { players.count }

    /// Whole seconds since the request arrived, at `now`.
    func secondsInQueue(now: Int64) -> Int64 { max(0, now - arrival) / 1000 }

    /// The request as expressions see it at `now`.
    func json(now: Int64) -> JSONValue {
        var document = document
        document["secondsInQueue"] = .number(Double(secondsInQueue(now: now)))
        return .object(document)
    }
}
