import SQLKit

/// A match as stored: formed by the matchmaker, the truth the relay and the status routes read.
public struct MatchRecord: Sendable, Equatable {
    /// `forming` (waiting for invitees), `started`, `failed` (never started), `ended` (every member left).
    public enum State: String, Sendable {
        case forming, started, failed, ended
    }

    public var matchID: String
    public var bundleID: String
    public var environment: String
    public var hosted: Bool
    public var state: State
    public var createdAt: Int64
    /// The node that formed the match (nil: stored before nodes were recorded).
    public var nodeID: String?
    /// The base URL of the relay its members connect to; nil: the server each member uses.
    public var relayURL: String?
    /// When it started; nil before.
    public var startedAt: Int64?

    public init(
        matchID: String, bundleID: String, environment: String, hosted: Bool, state: State, createdAt: Int64, nodeID: String? = nil,
        relayURL: String? = nil, startedAt: Int64? = nil
    ) {
        self.startedAt = startedAt
        self.matchID = matchID
        self.bundleID = bundleID
        self.environment = environment
        self.hosted = hosted
        self.state = state
        self.createdAt = createdAt
        self.nodeID = nodeID
        self.relayURL = relayURL
    }
}

/// One member of a started match.
public struct MatchMemberRecord: Sendable, Equatable {
    public var playerID: String
    /// The member's match request (or invitation acceptance) that put them in.
    public var requestID: String?
    public var joinedAt: Int64
    public var leftAt: Int64?

    public init(playerID: String, requestID: String?, joinedAt: Int64, leftAt: Int64? = nil) {
        self.playerID = playerID
        self.requestID = requestID
        self.joinedAt = joinedAt
        self.leftAt = leftAt
    }
}

/// An invitation to a forming match, kept until it is answered, cancelled or expires.
public struct InvitationRecord: Sendable, Equatable {
    /// `pending` until answered; `accepted`, `declined`, or `cancelled` (the inviter left, the match started).
    public enum State: String, Sendable {
        case pending, accepted, declined, cancelled
    }

    public var invitationID: String
    public var matchID: String
    public var bundleID: String
    public var environment: String
    public var inviter: String
    public var invitee: String
    public var hosted: Bool
    public var minPlayers: Int
    public var maxPlayers: Int
    public var message: String?
    public var state: State
    public var createdAt: Int64
    public var expiresAt: Int64
    /// When the invitee accepted it in the Game Center app; it stays `pending` (their game joins it when it starts).
    public var acceptedInAppAt: Int64?

    public init(
        invitationID: String, matchID: String, bundleID: String, environment: String, inviter: String, invitee: String,
        hosted: Bool, minPlayers: Int, maxPlayers: Int, message: String?, state: State, createdAt: Int64, expiresAt: Int64,
        acceptedInAppAt: Int64? = nil
    ) {
        self.invitationID = invitationID
        self.matchID = matchID
        self.bundleID = bundleID
        self.environment = environment
        self.inviter = inviter
        self.invitee = invitee
        self.hosted = hosted
        self.minPlayers = minPlayers
        self.maxPlayers = maxPlayers
        self.message = message
        self.state = state
        self.createdAt = createdAt
        self.expiresAt = expiresAt
        self.acceptedInAppAt = acceptedInAppAt
    }
}

extension StorageSession {
    /// Stores a new match.
    public func insertMatch(_ match: MatchRecord) async throws {
        try await sql.raw(
            """
            INSERT INTO matches (match_id, bundle_id, environment, hosted, state, created_at, node_id, relay_url)
            VALUES (\(bind: match.matchID), \(bind: match.bundleID), \(bind: match.environment), \(bind: match.hosted ? 1 : 0),
                    \(bind: match.state.rawValue), \(bind: match.createdAt), \(bind: match.nodeID), \(bind: match.relayURL))
            """
        ).run()
    }

    /// The match with this id, if any.
    public func match(id: String) async throws -> MatchRecord? {
        try await sql.raw("SELECT * FROM matches WHERE match_id = \(bind: id)").first().map { row in
            MatchRecord(
                matchID: try row.string("match_id"), bundleID: try row.string("bundle_id"),
                environment: try row.string("environment"), hosted: try row.int("hosted") != 0,
                state: MatchRecord.State(rawValue: try row.string("state")) ?? .failed, createdAt: try row.int("created_at"),
                nodeID: try row.decode(column: "node_id", as: String?.self), relayURL: try row.decode(column: "relay_url", as: String?.self),
                startedAt: try row.optionalInt("started_at"))
        }
    }

    /// Records the base URL of the relay a stored match's members connect to.
    public func setMatchRelayURL(_ matchID: String, _ relayURL: String) async throws {
        try await sql.raw("UPDATE matches SET relay_url = \(bind: relayURL) WHERE match_id = \(bind: matchID)").run()
    }

    /// Changes a match's state (`started` also records the time).
    public func setMatchState(_ matchID: String, _ state: MatchRecord.State, now: Int64) async throws {
        if state == .started {
            try await sql.raw(
                """
                UPDATE matches SET state = 'started', started_at = COALESCE(started_at, \(bind: now)) WHERE match_id = \(bind: matchID)
                """
            ).run()
        } else {
            try await sql.raw("UPDATE matches SET state = \(bind: state.rawValue) WHERE match_id = \(bind: matchID)").run()
        }
    }

    /// Adds members to a match (one statement); a player already in it is left as they are.
    public func insertMatchMembers(_ matchID: String, _ members: [MatchMemberRecord]) async throws {
        guard !members.isEmpty else { return }
        let rows = members.map { member in
            SQLQueryString("(\(bind: matchID), \(bind: member.playerID), \(bind: member.requestID), \(bind: member.joinedAt))")
        }
        try await sql.raw(
            """
            INSERT INTO match_members (match_id, player_id, request_id, joined_at)
            VALUES \(rows.joined(separator: ", ")) ON CONFLICT DO NOTHING
            """
        ).run()
    }

    /// Every member a match ever had, in the order they joined.
    public func matchMembers(_ matchID: String) async throws -> [MatchMemberRecord] {
        try await sql.raw(
            """
            SELECT * FROM match_members WHERE match_id = \(bind: matchID) ORDER BY joined_at, player_id
            """
        ).all().map { row in
            MatchMemberRecord(
                playerID: try row.string("player_id"), requestID: try row.optionalString("request_id"),
                joinedAt: try row.int("joined_at"), leftAt: try row.optionalInt("left_at"))
        }
    }

    /// The match a player's request put them in, if it did.
    public func matchID(playerID: String, requestID: String) async throws -> String? {
        try await sql.raw(
            """
            SELECT match_id FROM match_members WHERE player_id = \(bind: playerID) AND request_id = \(bind: requestID)
            """
        ).first().map { try $0.string("match_id") }
    }

    /// Marks a member as gone; returns false when they were not a member or had already left.
    public func leaveMatch(_ matchID: String, playerID: String, now: Int64) async throws -> Bool {
        try await sql.raw(
            """
            UPDATE match_members SET left_at = \(bind: now)
            WHERE match_id = \(bind: matchID) AND player_id = \(bind: playerID) AND left_at IS NULL
            RETURNING player_id
            """
        ).first() != nil
    }

    /// Stores a pending invitation.
    public func insertInvitation(_ invitation: InvitationRecord) async throws {
        try await sql.raw(
            """
            INSERT INTO invitations (invitation_id, match_id, bundle_id, environment, inviter, invitee, hosted, min_players,
                                     max_players, message, state, created_at, expires_at)
            VALUES (\(bind: invitation.invitationID), \(bind: invitation.matchID), \(bind: invitation.bundleID),
                    \(bind: invitation.environment), \(bind: invitation.inviter), \(bind: invitation.invitee),
                    \(bind: invitation.hosted ? 1 : 0), \(bind: invitation.minPlayers), \(bind: invitation.maxPlayers),
                    \(bind: invitation.message), \(bind: invitation.state.rawValue), \(bind: invitation.createdAt),
                    \(bind: invitation.expiresAt))
            """
        ).run()
    }

    /// The invitation with this id, if any.
    public func invitation(id: String) async throws -> InvitationRecord? {
        try await sql.raw("SELECT * FROM invitations WHERE invitation_id = \(bind: id)").first().map(Self.invitation(from:))
    }

    /// A player's pending, unexpired invitations in one environment, for one game (or, with `bundleID` nil, for
    /// every game), oldest first.
    public func pendingInvitations(invitee: String, bundleID: String?, environment: String, now: Int64) async throws -> [InvitationRecord] {
        let game = bundleID.map { SQLQueryString(" AND bundle_id = \(bind: $0)") } ?? ""
        return try await sql.raw(
            """
            SELECT * FROM invitations
            WHERE invitee = \(bind: invitee) AND state = 'pending'\(game)
              AND environment = \(bind: environment) AND expires_at > \(bind: now)
            ORDER BY created_at, invitation_id
            """
        ).all().map(Self.invitation(from:))
    }

    /// Records that the invitee accepted a pending, unexpired invitation in the Game Center app (the first time
    /// counts); it stays pending until their game joins or declines it. Nil when it is not (any more) answerable.
    public func acceptInvitationInApp(id: String, now: Int64) async throws -> InvitationRecord? {
        try await sql.raw(
            """
            UPDATE invitations SET accepted_in_app_at = COALESCE(accepted_in_app_at, \(bind: now))
            WHERE invitation_id = \(bind: id) AND state = 'pending' AND expires_at > \(bind: now)
            RETURNING *
            """
        ).first().map(Self.invitation(from:))
    }

    /// Answers a pending, unexpired invitation; nil when it is not (any more) answerable.
    public func answerInvitation(id: String, state: InvitationRecord.State, now: Int64) async throws -> InvitationRecord? {
        try await sql.raw(
            """
            UPDATE invitations SET state = \(bind: state.rawValue), answered_at = \(bind: now)
            WHERE invitation_id = \(bind: id) AND state = 'pending' AND expires_at > \(bind: now)
            RETURNING *
            """
        ).first().map(Self.invitation(from:))
    }

    /// Cancels a match's pending invitations (all of them, or those of `invitees`); returns the ones cancelled.
    public func cancelInvitations(matchID: String, invitees: [String]? = nil, now: Int64) async throws -> [InvitationRecord] {
        let filter = invitees.map { SQLQueryString(" AND invitee IN (\(binds: $0))") } ?? ""
        return try await sql.raw(
            """
            UPDATE invitations SET state = 'cancelled', answered_at = \(bind: now)
            WHERE match_id = \(bind: matchID) AND state = 'pending'\(filter)
            RETURNING *
            """
        ).all().map(Self.invitation(from:))
    }

    /// Forming matches whose node is gone died with it (their requests lived in its memory): marks them failed and
    /// cancels their pending invitations. A match's node is gone when it is `deadNode` (a node starting again), was
    /// not recorded, or was not seen alive after `aliveAfter`; `game` (bundle id and environment) limits it to one
    /// game's matches (a queue taken over). Returns the invitations cancelled.
    public func abandonFormingMatches(
        now: Int64, deadNode: String, aliveAfter: Int64, game: (bundleID: String, environment: String)? = nil
    ) async throws -> [InvitationRecord] {
        let scope: SQLQueryString = game.map { "AND bundle_id = \(bind: $0.bundleID) AND environment = \(bind: $0.environment)" } ?? ""
        let abandoned: SQLQueryString = """
            SELECT match_id FROM matches WHERE state = 'forming' \(scope)
            AND (node_id IS NULL OR node_id = \(bind: deadNode) OR node_id NOT IN (SELECT node_id FROM nodes WHERE last_seen > \(bind: aliveAfter)))
            """
        let cancelled = try await sql.raw(
            """
            UPDATE invitations SET state = 'cancelled', answered_at = \(bind: now)
            WHERE state = 'pending' AND match_id IN (\(abandoned))
            RETURNING *
            """
        ).all().map(Self.invitation(from:))
        try await sql.raw("UPDATE matches SET state = 'failed' WHERE match_id IN (\(abandoned))").run()
        return cancelled
    }

    static func invitation(from row: any SQLRow) throws -> InvitationRecord {
        InvitationRecord(
            invitationID: try row.string("invitation_id"), matchID: try row.string("match_id"),
            bundleID: try row.string("bundle_id"), environment: try row.string("environment"),
            inviter: try row.string("inviter"), invitee: try row.string("invitee"), hosted: try row.int("hosted") != 0,
            minPlayers: Int(try row.int("min_players")), maxPlayers: Int(try row.int("max_players")),
            message: try row.optionalString("message"),
            state: InvitationRecord.State(rawValue: try row.string("state")) ?? .cancelled,
            createdAt: try row.int("created_at"), expiresAt: try row.int("expires_at"),
            acceptedInAppAt: try row.optionalInt("accepted_in_app_at")
        )
    }
}
