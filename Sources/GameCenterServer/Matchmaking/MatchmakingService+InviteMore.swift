import GameCenterProtocol
import GameCenterStorage

extension MatchmakingService {
    /// Invites more friends into the open seats of the forming match that the caller's waiting request opened (the
    /// matchmaking screen inviting while it is shown). They are invited as a request's `playersToInvite` are: the
    /// same checks, rate limits and lifetime, stored invitations and `invitationReceived` events; their answers reach
    /// the request's device. The queue decides the seats: auto-match may have taken some meanwhile.
    func invite(_ body: MatchInvitationsBody, requestID: String, device: DeviceIdentity, session: AuthenticatedSession) async throws
        -> MatchRequestStatus
    {
        let requestID = try MatchRequestRules.requestID(requestID)
        let invitees = try PlayerIDRules.list(body.playerIDs)
        guard !invitees.contains(session.playerID) else { throw APIError.inviteSelf }
        let message = try body.inviteMessage.map(FriendService.message)
        let environment = device.environment.rawValue
        try limiter.take(
            [.init(name: .invitations, subject: session.playerID, cost: invitees.count)]
                + invitees.map { .init(name: .invitationsToOnePlayer, subject: "\(session.playerID) \($0)") })
        let inviterAlias = try await database.read { storage in
            try await MatchRequestRules.checkInvitees(invitees, of: session.playerID, environment: environment, in: storage)
            return try await storage.player(id: session.playerID)?.alias ?? ""
        }
        let now = clock.nowMillis()
        let expiresAt = now + Int64(invitationSeconds(for: device.game)) * 1000
        let key = RequestKey(playerID: session.playerID, requestID: requestID)
        let (decisions, sent) = try state.withLock { state -> (MatchmakingDecisions, SentInvitations) in
            guard let ticket = state.ticketOfRequest[key], let lobby = state.queue.lobby(containing: ticket) else {
                throw state.acceptedLobby(playerID: key.playerID, requestID: key.requestID) == nil ? APIError.noSuchRequest : APIError.notHost
            }
            let outcome: MatchmakingOutcome
            do throws(MatchmakingError) {
                outcome = try state.queue.invite(invitees, by: ticket, now: queueNow)
            } catch {
                throw APIError(error, inviting: invitees.count)
            }
            var forming =
                state.forming[lobby.id]
                ?? FormingMatch(
                    matchID: Credentials.newID(prefix: "m_"), bundleID: device.game.bundleID, environment: environment,
                    creatorPlayerID: session.playerID, creatorRequestID: requestID, invitations: [:])
            // An auto-match lobby has no stored match yet: its first invitations store it as forming.
            let newMatch =
                state.forming[lobby.id] != nil
                ? nil
                : MatchRecord(
                    matchID: forming.matchID, bundleID: forming.bundleID, environment: environment, hosted: lobby.key.hosted, state: .forming, createdAt: now)
            let records = invitees.map { invitee in
                InvitationRecord(
                    invitationID: Credentials.newID(prefix: "inv_"), matchID: forming.matchID, bundleID: forming.bundleID,
                    environment: environment, inviter: session.playerID, invitee: invitee, hosted: lobby.key.hosted,
                    minPlayers: lobby.minPlayers, maxPlayers: lobby.maxPlayers, message: message,
                    state: .pending, createdAt: now, expiresAt: expiresAt)
            }
            for invitation in records {
                forming.invitations[invitation.invitee] = (invitation.invitationID, expiresAt)
                state.lobbyOfInvitation[invitation.invitationID] = lobby.id
            }
            state.forming[lobby.id] = forming
            return (state.record(outcome, now: queueNow), SentInvitations(lobby: lobby.id, records: records, newMatch: newMatch))
        }
        do {
            try await recorder.invite(sent.records, match: sent.newMatch, inviterAlias: inviterAlias)
        } catch {
            await apply(withdraw(sent))
            throw error
        }
        await apply(decisions)
        return try await status(requestID: requestID, session: session)
    }

    /// Takes back invitations that could not be stored: the queue forgets them (the players may be invited again).
    private func withdraw(_ sent: SentInvitations) -> MatchmakingDecisions {
        state.withLock { state -> MatchmakingDecisions in
            var decisions = MatchmakingDecisions()
            for invitation in sent.records where state.lobbyOfInvitation.removeValue(forKey: invitation.invitationID) != nil {
                state.forming[sent.lobby]?.invitations.removeValue(forKey: invitation.invitee)
                if let outcome = try? state.queue.withdraw(lobby: sent.lobby, player: invitation.invitee, now: queueNow) {
                    decisions.append(state.record(outcome, now: queueNow))
                }
            }
            // A match row that was not stored must be inserted when the lobby starts, as for any auto-match lobby.
            if sent.newMatch != nil { state.forming.removeValue(forKey: sent.lobby) }
            return decisions
        }
    }
}

/// Invitations placed in the queue, to store (with the forming match's row when it has none yet).
private struct SentInvitations: Sendable {
    var lobby: LobbyID
    var records: [InvitationRecord]
    var newMatch: MatchRecord?
}

extension APIError {
    static let notHost = APIError(
        .matchmakingNotHost,
        "only the request that opened the forming match can invite into it; an accepted invitation or a request auto-match placed in another player's lobby cannot"
    )

    /// The queue's refusal of invitations for `count` players.
    init(_ refusal: MatchmakingError, inviting count: Int) {
        switch refusal {
        case .notLobbyCreator: self = .notHost
        case .alreadyInLobby(let playerID):
            self.init(
                .matchmakingAlreadyInMatch,
                "\(playerID) is already in the forming match or was invited to it; invite only players who are not (nothing was sent)")
        case .noOpenSeats(let open):
            self.init(
                .matchmakingNoOpenSeats,
                "the forming match has \(open) open seat\(open == 1 ? "" : "s") (the others are taken or invited) and \(count) \(count == 1 ? "player was" : "players were") invited; nothing was sent"
            )
        case .unknownTicket, .unknownLobby, .notInvited, .alreadyAnswered, .notAnInvitedMember: self = .noSuchRequest
        }
    }
}
