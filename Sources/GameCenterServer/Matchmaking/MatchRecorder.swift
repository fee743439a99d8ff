import Foundation
import GameCenterProtocol
import JMESPath
import GameCenterStorage

/// Someone in a forming match, as the recorder stores them.
struct MatchParticipant: Sendable, Equatable {
    /// How the participant came in.
    enum Kind: Sendable, Equatable {
        /// Their own match request (auto-match, or the inviter's).
        case requested
        /// They accepted an invitation.
        case invited
        /// Already in the running match players are being added to.
        case existing
    }

    var playerID: String
    /// The request or invitation acceptance the match answers; nil for `existing` members.
    var requestID: String?
    var kind: Kind
    /// For an invitee: the inviter and their request, which hears that the invitee connected.
    var inviter: RequestKey? = nil
}

/// A forming match that is over: started with these participants, or failed.
struct ClosedLobby: Sendable {
    var matchID: String
    /// True when the match row already exists (invitations were sent, or players are added to a running match).
    var isStored: Bool
    var bundleID: String
    var environment: String
    var hosted: Bool
    /// Participants in the order they joined (existing members first).
    var participants: [MatchParticipant]
    /// The player whose request created the forming match (told about invitees).
    var creator: String
    /// Invitees who never answered (the lobby dissolved or failed first).
    var unansweredInvitees: [String]
    /// The node whose matchmaker formed the match.
    var nodeID: String
    /// The base URL of the relay every member connects to; nil: each member's own server.
    var relayURL: String?
    /// A rule-based match: each member's properties, by player id.
    var playerProperties: [String: [String: JSONValue]]? = nil
    /// Forming matches of other parties whose players this match took (a rule-based match of several parties): they
    /// end as failed, without telling anyone (their players are told of this match).
    var supersededMatchIDs: [String] = []
}

/// Stores the matchmaker's outcomes and the events they cause, one transaction each, and announces the events
/// after the commit.
struct MatchRecorder: Sendable {
    let database: Database
    let bus: any EventBus

    /// Sends invitations for a forming match: its row (`match`, when not stored yet), one invitation per invitee, and
    /// their events.
    func invite(_ invitations: [InvitationRecord], match: MatchRecord?, inviterAlias: String) async throws {
        try await database.write { storage in
            if let match { try await storage.insertMatch(match) }
            for invitation in invitations {
                try await storage.insertInvitation(invitation)
                _ = try await EventLog.append(
                    .matchInvitation, Self.info(invitation, inviterAlias: inviterAlias),
                    to: invitation.invitee, now: invitation.createdAt, in: storage)
            }
        }
        publish(invitations.map(\.invitee))
    }

    /// Tells the inviter how an invitee answered.
    func answered(_ invitation: InvitationRecord, creatorRequestID: String, state: InviteeState, now: Int64) async throws {
        let event = InviteeAnswered(
            matchID: invitation.matchID, bundleID: invitation.bundleID, requestID: creatorRequestID,
            playerID: invitation.invitee, state: state)
        try await database.write { storage in
            _ = try await EventLog.append(.inviteeAnswered, event, to: invitation.inviter, now: now, in: storage)
        }
        publish([invitation.inviter])
    }

    /// Records a started match and tells every member (existing members learn the new member list).
    func started(_ lobby: ClosedLobby, now: Int64) async throws {
        let players = lobby.participants.map(\.playerID)
        let newcomers = lobby.participants.filter { $0.kind != .existing }
        try await database.write { storage in
            if !lobby.isStored {
                try await storage.insertMatch(
                    MatchRecord(
                        matchID: lobby.matchID, bundleID: lobby.bundleID, environment: lobby.environment,
                        hosted: lobby.hosted, state: .started, createdAt: now, nodeID: lobby.nodeID, relayURL: lobby.relayURL))
            } else if let relayURL = lobby.relayURL {
                try await storage.setMatchRelayURL(lobby.matchID, relayURL)
            }
            try await storage.setMatchState(lobby.matchID, .started, now: now)
            for superseded in lobby.supersededMatchIDs where try await storage.match(id: superseded)?.state == .forming {
                try await storage.setMatchState(superseded, .failed, now: now)
            }
            try await storage.insertMatchMembers(
                lobby.matchID,
                newcomers.enumerated().map { index, participant in
                    MatchMemberRecord(playerID: participant.playerID, requestID: participant.requestID, joinedAt: now + Int64(index))
                })
            for invitation in try await storage.cancelInvitations(matchID: lobby.matchID, now: now) {
                _ = try await EventLog.append(
                    .invitationCancelled, Self.cancelled(invitation, reason: "the match started without you"),
                    to: invitation.invitee, now: now, in: storage)
            }
            // The inviter hears "connected" before the match itself, while its request still waits for it.
            for invitee in lobby.participants where invitee.kind == .invited {
                guard let inviter = invitee.inviter else { continue }
                let event = InviteeAnswered(
                    matchID: lobby.matchID, bundleID: lobby.bundleID, requestID: inviter.requestID, playerID: invitee.playerID, state: .connected)
                _ = try await EventLog.append(.inviteeAnswered, event, to: inviter.playerID, now: now, in: storage)
            }
            for participant in lobby.participants {
                let info = MatchInfo(
                    matchID: lobby.matchID, bundleID: lobby.bundleID, hosted: lobby.hosted, players: players,
                    requestID: participant.requestID, relayURL: lobby.relayURL, playerProperties: lobby.playerProperties)
                _ = try await EventLog.append(.matchFound, info, to: participant.playerID, now: now, in: storage)
            }
        }
        publish(players + lobby.unansweredInvitees)
    }

    /// Records a forming match that ended without starting: its requests fail with `reason` and its open
    /// invitations are cancelled.
    func failed(_ lobby: ClosedLobby, reason: String, now: Int64) async throws {
        let requesters = lobby.participants.filter { $0.kind != .existing && $0.requestID != nil }
        try await database.write { storage in
            if lobby.isStored, try await storage.match(id: lobby.matchID)?.state == .forming {
                try await storage.setMatchState(lobby.matchID, .failed, now: now)
            }
            for invitation in try await storage.cancelInvitations(matchID: lobby.matchID, invitees: lobby.unansweredInvitees, now: now) {
                _ = try await EventLog.append(
                    .invitationCancelled, Self.cancelled(invitation, reason: reason),
                    to: invitation.invitee, now: now, in: storage)
            }
            for participant in requesters {
                let event = MatchRequestFailed(requestID: participant.requestID ?? "", bundleID: lobby.bundleID, reason: reason)
                _ = try await EventLog.append(.matchRequestFailed, event, to: participant.playerID, now: now, in: storage)
            }
        }
        publish(requesters.map(\.playerID) + lobby.unansweredInvitees)
    }

    /// Records that a member left a started match and tells the others; the match ends with its last member (and its
    /// `match.ended` webhook event is stored with the end).
    func left(matchID: String, playerID: String, now: Int64) async throws {
        let others = try await database.write { storage -> [String] in
            guard let match = try await storage.match(id: matchID), match.state == .started,
                try await storage.leaveMatch(matchID, playerID: playerID, now: now)
            else { throw APIError.noSuchMatch }
            let members = try await storage.matchMembers(matchID)
            let remaining = members.filter { $0.leftAt == nil }.map(\.playerID)
            if remaining.isEmpty {
                try await storage.setMatchState(matchID, .ended, now: now)
                let ended = MatchEndedData(
                    matchID: matchID, players: members.map(\.playerID), startedAt: match.startedAt.map { Double($0) / 1000 },
                    endedAt: Double(now) / 1000)
                try await storage.appendGameEvent(
                    bundleID: match.bundleID, environment: match.environment, kind: WebhookEventType.matchEnded.rawValue, orderKey: matchID,
                    payload: String(decoding: try JSONEncoder().encode(ended), as: UTF8.self), now: now)
            }
            for other in remaining {
                _ = try await EventLog.append(
                    .matchPlayerLeft, MatchPlayerLeft(matchID: matchID, bundleID: match.bundleID, playerID: playerID),
                    to: other, now: now, in: storage)
            }
            return remaining
        }
        publish(others)
    }

    /// Keeps friends chosen in the Game Center app for the player's game until `expiresAt` (replacing an earlier
    /// choice) and tells the player's running devices, one of which claims them and invites them.
    func playWithFriends(
        _ friends: [String], bundleID: String, environment: String, playerID: String, now: Int64, expiresAt: Int64, turnBased: Bool = false
    ) async throws {
        try await database.write { storage in
            try await MatchRequestRules.checkInvitees(friends, of: playerID, environment: environment, in: storage)
            try await storage.savePlayWithFriends(
                PlayWithFriendsRecord(
                    playerID: playerID, bundleID: bundleID, friends: friends, createdAt: now, expiresAt: expiresAt, turnBased: turnBased))
            _ = try await EventLog.append(
                .playWithFriends, PlayWithFriends(bundleID: bundleID, playerIDs: friends, turnBased: turnBased ? true : nil),
                to: playerID, now: now, in: storage)
        }
        publish([playerID])
    }

    /// Records that the invitee accepted `invitation` in the Game Center app and, the first time, tells their
    /// running devices (their game joins it). The invitation stays pending: the inviter hears "accepted" when the
    /// invitee's game joins. Nil when it can no longer be answered.
    func acceptInApp(_ invitation: InvitationRecord, now: Int64) async throws -> InvitationRecord? {
        let accepted = try await database.write { storage -> InvitationRecord? in
            guard let accepted = try await storage.acceptInvitationInApp(id: invitation.invitationID, now: now) else { return nil }
            if invitation.acceptedInAppAt == nil {
                let alias = try await storage.player(id: accepted.inviter)?.alias ?? ""
                _ = try await EventLog.append(
                    .invitationAccepted, Self.info(accepted, inviterAlias: alias), to: accepted.invitee, now: now, in: storage)
            }
            return accepted
        }
        if accepted != nil { publish([invitation.invitee]) }
        return accepted
    }

    /// Cancels invitations left pending by forming matches whose node is gone (they lived in its memory): see
    /// ``StorageSession/abandonFormingMatches(now:deadNode:aliveAfter:game:)``. Invitees are told `reason`.
    func abandonFormingMatches(
        now: Int64, deadNode: String, aliveAfter: Int64, game: (bundleID: String, environment: String)?, reason: String
    ) async throws {
        let cancelled = try await database.write { storage in
            let cancelled = try await storage.abandonFormingMatches(now: now, deadNode: deadNode, aliveAfter: aliveAfter, game: game)
            for invitation in cancelled {
                _ = try await EventLog.append(
                    .invitationCancelled, Self.cancelled(invitation, reason: reason),
                    to: invitation.invitee, now: now, in: storage)
            }
            return cancelled
        }
        publish(cancelled.map(\.invitee))
    }

    /// The wire form of an invitation.
    static func info(_ invitation: InvitationRecord, inviterAlias: String) -> InvitationInfo {
        InvitationInfo(
            invitationID: invitation.invitationID, matchID: invitation.matchID, bundleID: invitation.bundleID,
            inviter: invitation.inviter, inviterAlias: inviterAlias, hosted: invitation.hosted,
            minPlayers: invitation.minPlayers, maxPlayers: invitation.maxPlayers, message: invitation.message,
            expiresAt: StoredTime.date(invitation.expiresAt), acceptedAt: invitation.acceptedInAppAt.map(StoredTime.date))
    }

    private static func cancelled(_ invitation: InvitationRecord, reason: String) -> InvitationCancelled {
        InvitationCancelled(invitationID: invitation.invitationID, bundleID: invitation.bundleID, reason: reason)
    }

    private func publish(_ players: [String]) {
        for player in Set(players) { bus.publish(.playerEvents(playerID: player)) }
    }
}
