import GameCenterProtocol

/// The matchmaker's decisions: what a change of the queue, a cancelled request or a closed channel means for the
/// bookkeeping and what must be stored. Pure: no I/O, no clock (`now` is the queue's monotonic milliseconds), so
/// every rule is tested without a server (``MatchmakingService`` applies the decisions).
extension MatchmakerState {
    /// Takes a waiting request out of the queue.
    mutating func remove(_ ticket: TicketID, now: Int64) throws(APIError) -> MatchmakingDecisions {
        removeRequest(ticket)
        if ruleQueues.remove(ticket) || queuedParties[ticket] != nil { return dissolveParty(ticket) }
        do {
            return record(try queue.remove(ticket: ticket, now: now), now: now)
        } catch {
            throw APIError.noSuchRequest
        }
    }

    /// Takes an accepted invitee out of the forming match `lobby`.
    mutating func removeInvitee(_ playerID: String, from lobby: LobbyID, now: Int64) throws(APIError) -> MatchmakingDecisions {
        removeAcceptedInvitee(playerID, from: lobby)
        do {
            return record(try queue.removeInvited(lobby: lobby, player: playerID, now: now), now: now)
        } catch {
            throw APIError.noSuchRequest
        }
    }

    /// Takes the session's requests and accepted invitations out of the queue.
    mutating func removeWaiting(of sessionID: String, now: Int64) -> MatchmakingDecisions {
        var combined = MatchmakingDecisions()
        for (ticket, request) in requests where request.sessionID == sessionID {
            if let outcome = try? remove(ticket, now: now) { combined.append(outcome) }
        }
        for (lobby, match) in self.forming {
            for (player, invitee) in match.accepted where invitee.sessionID == sessionID {
                if let outcome = try? removeInvitee(player, from: lobby, now: now) { combined.append(outcome) }
            }
        }
        for (ticket, party) in queuedParties {
            for (player, invitee) in party.forming.accepted where invitee.sessionID == sessionID { leaveParty(player, ticket: ticket) }
        }
        return combined
    }

    // MARK: Channels

    /// A realtime channel of the session opened on this node.
    mutating func channelOpened(sessionID: String) {
        openChannels[sessionID, default: 0] += 1
    }

    /// A realtime channel of the session closed on this node; when it was the last one anywhere, the session's
    /// requests leave the queue (its device could not be told of a match). `lastHere` says whether no channel of the
    /// session is left open on this node.
    mutating func channelClosed(sessionID: String, now: Int64) -> (decisions: MatchmakingDecisions, lastHere: Bool) {
        openChannels[sessionID, default: 0] -= 1
        guard openChannels[sessionID, default: 0] <= 0 else { return (MatchmakingDecisions(), false) }
        openChannels.removeValue(forKey: sessionID)
        return (isOpen(sessionID) ? MatchmakingDecisions() : removeWaiting(of: sessionID, now: now), true)
    }

    /// A request forwarded by node `nodeID` says whether the device's realtime channel is open there.
    mutating func remoteChannel(sessionID: String, on nodeID: String, open: Bool) {
        if open {
            remoteChannels[sessionID] = nodeID
        } else if remoteChannels[sessionID] == nodeID {
            remoteChannels.removeValue(forKey: sessionID)
        }
    }

    /// Node `nodeID` says the device's last channel there closed: unless its channel is open elsewhere, its requests
    /// leave the queue.
    mutating func remoteChannelClosed(sessionID: String, on nodeID: String, now: Int64) -> MatchmakingDecisions {
        guard remoteChannels[sessionID] == nodeID else { return MatchmakingDecisions() }
        remoteChannels.removeValue(forKey: sessionID)
        return isOpen(sessionID) ? MatchmakingDecisions() : removeWaiting(of: sessionID, now: now)
    }

    /// The nodes in `alive` are the only ones alive: the sessions whose channels were on others are gone, and their
    /// requests leave the queue.
    mutating func forgetChannels(onNodesOtherThan alive: Set<String>, now: Int64) -> MatchmakingDecisions {
        var combined = MatchmakingDecisions()
        for (sessionID, node) in remoteChannels where !alive.contains(node) {
            remoteChannels.removeValue(forKey: sessionID)
            if !isOpen(sessionID) { combined.append(removeWaiting(of: sessionID, now: now)) }
        }
        return combined
    }

    // MARK: Outcomes

    /// Turns what the queue did into what must be stored, updating the bookkeeping (called under the lock, so a
    /// status query sees a started match at once).
    mutating func record(_ outcome: MatchmakingOutcome, now: Int64) -> MatchmakingDecisions {
        var decisions = MatchmakingDecisions()
        for started in outcome.started {
            var forming = self.forming.removeValue(forKey: started.lobby)
            if let closed = forming, let rules = closed.ruleParty {
                forget(closed, lobby: started.lobby)
                partyReady(closed, rules: rules, members: started.members)
                continue
            }
            // A rule-based match: each party among its requests brings the players who accepted its invitations, and
            // the first party's stored match becomes the match.
            let parties = takeParties(of: started.members)
            var members: [LobbyMember] = []
            var formingOfInvitee: [String: FormingMatch] = [:]
            for member in started.members {
                members.append(member)
                guard case .ticket(let ticket, _) = member, let party = parties.first(where: { $0.ticket == ticket }) else { continue }
                for invitee in party.invitees {
                    members.append(.invited(playerID: invitee))
                    formingOfInvitee[invitee] = party.forming
                }
            }
            forming = forming ?? parties.first?.forming
            let matchID = forming?.matchID ?? Credentials.newID(prefix: "m_")
            for case .ticket(let ticket, _) in members {
                if let request = requests[ticket] { decisions.waitMilliseconds.append(now - request.queuedAt) }
            }
            // Members whose devices came through other nodes connect to this node's relay; else each to its own server.
            let sessions = members.compactMap { member -> String? in
                switch member {
                case .ticket(let ticket, _): requests[ticket]?.sessionID
                case .invited(let playerID): (formingOfInvitee[playerID] ?? forming)?.accepted[playerID]?.sessionID
                case .base: nil
                }
            }
            let relayURL = sessions.contains { remoteChannels[$0] != nil } ? self.relayURL : nil
            let participants = members.map { participant($0, forming: formingOfInvitee[$0.playerID] ?? forming) }
            for participant in participants where participant.kind != .existing {
                if let requestID = participant.requestID {
                    startedNotStored[RequestKey(playerID: participant.playerID, requestID: requestID)] = matchID
                }
            }
            forget(forming, lobby: started.lobby)
            let (bundleID, environment) = Self.split(started.key.game)
            let lobby = ClosedLobby(
                matchID: matchID, isStored: forming != nil, bundleID: bundleID, environment: environment,
                hosted: started.hosted, participants: participants,
                creator: forming?.creatorPlayerID ?? participants.first?.playerID ?? "", unansweredInvitees: [],
                nodeID: nodeID, relayURL: relayURL, playerProperties: started.playerProperties,
                supersededMatchIDs: parties.dropFirst().map(\.forming.matchID))
            decisions.started.append(StartDecision(lobby: lobby))
        }
        for failed in outcome.failed {
            let forming = self.forming.removeValue(forKey: failed.lobby)
            if let closed = forming, let rules = closed.ruleParty {
                forget(closed, lobby: failed.lobby)
                partyReady(closed, rules: rules, members: failed.members)
                continue
            }
            let participants = failed.members.map { participant($0, forming: forming) }
            forget(forming, lobby: failed.lobby)
            if let lobby = closedLobby(forming, participants: participants, unanswered: []) {
                decisions.failed.append(FailDecision(lobby: lobby, reason: "too few players accepted to start the match"))
            }
        }
        for dissolved in outcome.dissolved {
            let forming = self.forming.removeValue(forKey: dissolved.lobby)
            let participants = dissolved.releasedInvitees.map { participant(.invited(playerID: $0), forming: forming) }
            forget(forming, lobby: dissolved.lobby)
            if let lobby = closedLobby(forming, participants: participants, unanswered: dissolved.cancelledInvitations) {
                decisions.failed.append(FailDecision(lobby: lobby, reason: "the inviter left"))
            }
        }
        return decisions
    }

    /// A lobby member as stored; a ticket member's request leaves the waiting list.
    private mutating func participant(_ member: LobbyMember, forming: FormingMatch?) -> MatchParticipant {
        switch member {
        case .ticket(let ticket, let playerID):
            let requestID = requests[ticket]?.key.requestID
            removeRequest(ticket)
            return MatchParticipant(playerID: playerID, requestID: requestID, kind: .requested)
        case .invited(let playerID):
            return MatchParticipant(
                playerID: playerID, requestID: forming?.accepted[playerID]?.requestID, kind: .invited,
                inviter: forming.map { RequestKey(playerID: $0.creatorPlayerID, requestID: $0.creatorRequestID) })
        case .base(let playerID):
            return MatchParticipant(playerID: playerID, requestID: nil, kind: .existing)
        }
    }

    private func closedLobby(_ forming: FormingMatch?, participants: [MatchParticipant], unanswered: [String]) -> ClosedLobby? {
        guard let forming else { return nil }
        return ClosedLobby(
            matchID: forming.matchID, isStored: true, bundleID: forming.bundleID, environment: forming.environment,
            hosted: false, participants: participants, creator: forming.creatorPlayerID, unansweredInvitees: unanswered,
            nodeID: nodeID, relayURL: nil)
    }

    /// A queue's game key split into the game's bundle id and environment (``MatchmakingService/gameKey(_:)``).
    static func split(_ gameKey: String) -> (bundleID: String, environment: String) {
        let parts = gameKey.split(separator: "\n", maxSplits: 1).map(String.init)
        return (parts.first ?? "", parts.count > 1 ? parts[1] : "")
    }
}

/// A match to store as started.
struct StartDecision: Sendable {
    var lobby: ClosedLobby
}

/// A forming match to store as failed.
struct FailDecision: Sendable {
    var lobby: ClosedLobby
    var reason: String
}

/// What the matchmaker must store after one change of the queue.
struct MatchmakingDecisions: Sendable {
    var started: [StartDecision] = []
    var failed: [FailDecision] = []
    /// How long each request of the started matches waited in the queue (for the wait-time metric).
    var waitMilliseconds: [Int64] = []

    /// Adds another change's decisions after these.
    mutating func append(_ other: MatchmakingDecisions) {
        started += other.started
        failed += other.failed
        waitMilliseconds += other.waitMilliseconds
    }
}
