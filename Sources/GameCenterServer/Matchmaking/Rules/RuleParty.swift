import JMESPath

/// What a rule-based request that invites players needs to enter its queue once every invitation is answered: the
/// queue, the rule sets and the properties each player brings (an invitee's from the inviter's `recipientProperties`,
/// else the inviter's own, as Apple's GameKit does).
struct RuleParty: Sendable {
    var key: RuleQueues.Key
    var ruleSet: MatchmakingRuleSet
    var experiment: MatchmakingRuleSet?
    var minPlayers: Int
    var maxPlayers: Int
    /// The inviter's properties.
    var properties: [String: JSONValue]
    /// Invitees' properties, by player id.
    var recipientProperties: [String: [String: JSONValue]]
    /// `appVersion`, `bundleId`, `platform`, `locale` as rules see them.
    var attributes: [String: JSONValue]

    /// The party's request for the inviter's `ticket` and the invitees who accepted (in the order they did), arrived
    /// at `arrival` on the server's clock.
    func request(ticket: TicketID, inviter: String, invitees: [String], arrival: Int64) -> RuleRequest {
        let players =
            [RulePlayer(playerID: inviter, properties: properties)]
            + invitees.map { RulePlayer(playerID: $0, properties: recipientProperties[$0] ?? properties) }
        return RuleRequest(
            ticket: ticket, requestName: "\(ticket)", players: players, minPlayers: minPlayers, maxPlayers: maxPlayers, ruleSet: ruleSet,
            attributes: attributes, arrival: arrival)
    }
}

/// A rule-based request that brings the players who accepted its invitations: one request in its queue, whose match
/// takes them all (``MatchmakerState/queuedParties``).
struct QueuedParty: Sendable {
    /// The invitations' forming match (its stored id and the accepted invitees' requests).
    var forming: FormingMatch
    var rules: RuleParty
    /// The inviter's ticket: the party's request in the queue.
    var ticket: TicketID
    /// Accepted invitees still in the party, in the order they accepted.
    var invitees: [String]
    /// When the party entered the queue, on the server's clock (nil until it has).
    var arrival: Int64?

    /// The party's request as the queue holds it.
    var request: RuleRequest? {
        arrival.map { rules.request(ticket: ticket, inviter: forming.creatorPlayerID, invitees: invitees, arrival: $0) }
    }
}

extension MatchmakerState {
    /// A forming match of a rule-based request closed (its invitations all answered, however many accepted): its
    /// players become one request of the queue at the next ``queueReadyParties(arrival:now:)``.
    mutating func partyReady(_ forming: FormingMatch, rules: RuleParty, members: [LobbyMember]) {
        guard case .ticket(let ticket, _)? = members.first(where: { if case .ticket = $0 { true } else { false } }) else { return }
        let invitees = members.compactMap { if case .invited(let player) = $0 { player } else { nil } }
        for invitee in invitees { partyOfInvitee[invitee] = ticket }
        queuedParties[ticket] = QueuedParty(forming: forming, rules: rules, ticket: ticket, invitees: invitees)
        readyParties.append(ticket)
    }

    /// Puts the parties made ready since the last call into their queues, as arrived at `arrival` (server clock);
    /// `now` is the queue's clock.
    mutating func queueReadyParties(arrival: Int64, now: Int64) {
        for ticket in readyParties {
            guard var party = queuedParties[ticket] else { continue }
            party.arrival = arrival
            queuedParties[ticket] = party
            guard let request = party.request else { continue }
            ruleQueues.enqueue(
                request, playerID: party.forming.creatorPlayerID, key: party.rules.key, ruleSet: party.rules.ruleSet,
                experiment: party.rules.experiment, now: now)
        }
        readyParties = []
    }

    /// The queued party `playerID` is an accepted invitee of, when `requestID` is their acceptance's.
    func queuedPartyTicket(playerID: String, requestID: String) -> TicketID? {
        guard let ticket = partyOfInvitee[playerID], queuedParties[ticket]?.forming.accepted[playerID]?.requestID == requestID else { return nil }
        return ticket
    }

    /// An accepted invitee leaves the queued party `ticket`: the party waits on without them, as it arrived.
    mutating func leaveParty(_ playerID: String, ticket: TicketID) {
        guard partyOfInvitee[playerID] == ticket, var party = queuedParties[ticket] else { return }
        partyOfInvitee.removeValue(forKey: playerID)
        party.invitees.removeAll { $0 == playerID }
        party.forming.accepted.removeValue(forKey: playerID)
        queuedParties[ticket] = party
        if let request = party.request { ruleQueues.replace(request) }
    }

    /// The inviter's request `ticket` left its queue: its party's invitees are released (told the inviter left).
    mutating func dissolveParty(_ ticket: TicketID) -> MatchmakingDecisions {
        var decisions = MatchmakingDecisions()
        guard let party = queuedParties.removeValue(forKey: ticket) else { return decisions }
        for invitee in party.invitees where partyOfInvitee[invitee] == ticket { partyOfInvitee.removeValue(forKey: invitee) }
        let participants = party.invitees.map {
            MatchParticipant(playerID: $0, requestID: party.forming.accepted[$0]?.requestID, kind: .invited)
        }
        let forming = party.forming
        decisions.failed.append(
            FailDecision(
                lobby: ClosedLobby(
                    matchID: forming.matchID, isStored: true, bundleID: forming.bundleID, environment: forming.environment,
                    hosted: party.rules.key.hosted, participants: participants, creator: forming.creatorPlayerID, unansweredInvitees: [],
                    nodeID: nodeID, relayURL: nil),
                reason: "the inviter left"))
        return decisions
    }

    /// The parties among a rule-based match's requests leave the queue with it: each brings its invitees.
    mutating func takeParties(of members: [LobbyMember]) -> [QueuedParty] {
        members.compactMap { member -> QueuedParty? in
            guard case .ticket(let ticket, _) = member, let party = queuedParties.removeValue(forKey: ticket) else { return nil }
            for invitee in party.invitees where partyOfInvitee[invitee] == ticket { partyOfInvitee.removeValue(forKey: invitee) }
            return party
        }
    }
}
