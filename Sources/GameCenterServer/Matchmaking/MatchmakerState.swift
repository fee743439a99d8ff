import GameCenterProtocol
import GameCenterStorage

/// Names a player's request: request ids are chosen by devices, so they are unique per player only.
struct RequestKey: Hashable, Sendable {
    var playerID: String
    var requestID: String
}

/// A request waiting in the queue (a ticket) and the device session it waits on.
struct WaitingRequest: Sendable {
    var key: RequestKey
    var sessionID: String
    /// When it entered the queue (``MatchmakingService/queueNow``), for the wait-time metric.
    var queuedAt: Int64
    /// The game and environment it waits in (bundle id, a line break, the environment), for the console's queues.
    var game = ""
}

/// An invited player who accepted and waits in the forming match.
struct AcceptedInvitee: Sendable {
    var requestID: String
    var sessionID: String
}

/// What the server knows about a forming match beyond the queue: its stored id and invitations.
struct FormingMatch: Sendable {
    var matchID: String
    var bundleID: String
    var environment: String
    /// The creator's player and request ids (the inviter hears invitees' answers under the request id).
    var creatorPlayerID: String
    var creatorRequestID: String
    /// Invitations by invitee: id and expiry (server clock, ms).
    var invitations: [String: (invitationID: String, expiresAt: Int64)]
    var accepted: [String: AcceptedInvitee] = [:]
    /// Set when the request names a queue: once every invitation is answered, its players enter the queue together.
    var ruleParty: RuleParty?
}

/// The matchmaker's memory: the queue, who waits on which open channel, and the forming matches' bookkeeping.
/// Lives inside one lock, so a channel closing and a request arriving can never interleave. Its decisions are in
/// `MatchmakerState+Decisions.swift`.
struct MatchmakerState: Sendable {
    /// This node's id, stored with the matches it forms.
    let nodeID: String
    /// The base URL devices reach this node's relay at, once it listens (nil when not known): given to matches whose
    /// members came through other nodes.
    var relayURL: String?
    var queue = MatchmakingQueue(activityWindow: Int64(Limits.matchmakingActivityWindowSeconds) * 1000)
    /// Requests that name a queue of Apple's rules.
    var ruleQueues = RuleQueues()
    private var nextTicket: UInt64 = 1
    var requests: [TicketID: WaitingRequest] = [:]
    var ticketOfRequest: [RequestKey: TicketID] = [:]
    /// A player waits with one request at a time, so that two of their devices are never matched together.
    var ticketOfPlayer: [String: TicketID] = [:]
    var openChannels: [String: Int] = [:]
    /// Several nodes: sessions whose realtime channel is open on another node (by node id), as the requests that node
    /// forwarded said.
    var remoteChannels: [String: String] = [:]
    var forming: [LobbyID: FormingMatch] = [:]
    var lobbyOfInvitation: [String: LobbyID] = [:]
    /// The forming match each accepted invitee waits in (so lookups by player need no scan of the forming matches).
    private var lobbyOfAcceptedInvitee: [String: LobbyID] = [:]
    /// Rule-based requests waiting in their queue with the players who accepted their invitations, by the inviter's
    /// ticket (`Rules/RuleParty.swift`).
    var queuedParties: [TicketID: QueuedParty] = [:]
    /// The queued party each of its accepted invitees waits in.
    var partyOfInvitee: [String: TicketID] = [:]
    /// Parties whose invitations were all answered, not yet in their queue.
    var readyParties: [TicketID] = []
    /// Requests whose match started but is not stored yet (status answers from here until it is).
    var startedNotStored: [RequestKey: String] = [:]

    /// The empty memory of node `nodeID`.
    init(nodeID: String) {
        self.nodeID = nodeID
    }

    mutating func makeTicketID() -> TicketID {
        defer { nextTicket += 1 }
        return TicketID(nextTicket)
    }

    /// Whether the session's device can be told of a match: its realtime channel is open here or on another node.
    func isOpen(_ sessionID: String) -> Bool { openChannels[sessionID, default: 0] > 0 || remoteChannels[sessionID] != nil }

    /// The id of the request `playerID` waits with on `sessionID` (a queued request, or an accepted invitation).
    func waitingRequestID(playerID: String, sessionID: String) -> String? {
        if let ticket = ticketOfPlayer[playerID], let request = requests[ticket], request.sessionID == sessionID { return request.key.requestID }
        if let lobby = lobbyOfAcceptedInvitee[playerID], let invitee = forming[lobby]?.accepted[playerID], invitee.sessionID == sessionID {
            return invitee.requestID
        }
        if let ticket = partyOfInvitee[playerID], let invitee = queuedParties[ticket]?.forming.accepted[playerID], invitee.sessionID == sessionID {
            return invitee.requestID
        }
        return nil
    }

    /// The request `playerID` waits with in `game`'s queues (a ``MatchmakingService`` game key): their own request,
    /// or their acceptance of an invitation to a match forming here or a party queued here. Nil when they wait with
    /// none, or wait in another game's queue.
    func waitingRequest(playerID: String, game: String) -> RequestKey? {
        if let ticket = ticketOfPlayer[playerID], let request = requests[ticket] {
            return request.game == game ? request.key : nil
        }
        let accepted =
            lobbyOfAcceptedInvitee[playerID].flatMap { forming[$0] } ?? partyOfInvitee[playerID].flatMap { queuedParties[$0]?.forming }
        guard let accepted, let invitee = accepted.accepted[playerID],
            MatchmakingService.gameKey(bundleID: accepted.bundleID, environment: accepted.environment) == game
        else { return nil }
        return RequestKey(playerID: playerID, requestID: invitee.requestID)
    }

    /// Whether a player already waits (with a request, or as an accepted invitee).
    func isWaiting(_ playerID: String) -> Bool {
        ticketOfPlayer[playerID] != nil || lobbyOfAcceptedInvitee[playerID] != nil || partyOfInvitee[playerID] != nil
    }

    mutating func addRequest(_ request: WaitingRequest, ticket: TicketID) {
        requests[ticket] = request
        ticketOfRequest[request.key] = ticket
        ticketOfPlayer[request.key.playerID] = ticket
    }

    mutating func removeRequest(_ ticket: TicketID) {
        guard let request = requests.removeValue(forKey: ticket) else { return }
        ticketOfRequest.removeValue(forKey: request.key)
        if ticketOfPlayer[request.key.playerID] == ticket { ticketOfPlayer.removeValue(forKey: request.key.playerID) }
    }

    /// The forming match an accepted invitee waits in, by their acceptance's request id.
    func acceptedLobby(playerID: String, requestID: String) -> LobbyID? {
        guard let lobby = lobbyOfAcceptedInvitee[playerID], forming[lobby]?.accepted[playerID]?.requestID == requestID else { return nil }
        return lobby
    }

    /// An invitee accepted and now waits in `lobby`.
    mutating func addAcceptedInvitee(_ playerID: String, _ invitee: AcceptedInvitee, to lobby: LobbyID) {
        forming[lobby]?.accepted[playerID] = invitee
        lobbyOfAcceptedInvitee[playerID] = lobby
    }

    /// An accepted invitee no longer waits in `lobby`.
    mutating func removeAcceptedInvitee(_ playerID: String, from lobby: LobbyID) {
        forming[lobby]?.accepted.removeValue(forKey: playerID)
        if lobbyOfAcceptedInvitee[playerID] == lobby { lobbyOfAcceptedInvitee.removeValue(forKey: playerID) }
    }

    /// Drops the indexes of a forming match that left the queue (started, failed or dissolved).
    mutating func forget(_ closed: FormingMatch?, lobby: LobbyID) {
        guard let closed else { return }
        for invitation in closed.invitations.values { lobbyOfInvitation.removeValue(forKey: invitation.invitationID) }
        for player in closed.accepted.keys where lobbyOfAcceptedInvitee[player] == lobby {
            lobbyOfAcceptedInvitee.removeValue(forKey: player)
        }
    }
}
