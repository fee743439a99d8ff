import JMESPath
import Testing
@testable import GameCenterServer

/// A rule-based request that invites players, in the matchmaker's memory without a server: the invitees answer
/// first; then the inviter and those who accepted wait in the queue as one request (each with the properties the
/// inviter gave them), leave it together, or are released when the inviter leaves.
@Suite struct RulePartyTests {
    static let game = "com.example.game\nsandbox"

    /// A 3-player queue whose rule only checks that every player has a skill.
    static func party(properties: [String: JSONValue], recipients: [String: [String: JSONValue]]) throws -> RuleParty {
        let rules = RuleMatcherTests.ruleSet(
            3, 3, [try RuleMatcherTests.rule("Skilled", .match, "length(players[?properties.skill != `null`]) == length(players)")])
        return RuleParty(
            key: RuleQueues.Key(game: game, queue: "com.example.Q", hosted: false), ruleSet: rules, experiment: nil, minPlayers: 2, maxPlayers: 3,
            properties: properties, recipientProperties: recipients, attributes: [:])
    }

    /// Opens the inviter's forming match as the service does for a request naming a queue and inviting `invitees`.
    static func invite(
        _ inviter: String, _ requestID: String, session: String, invitees: [String], rules: RuleParty, matchID: String, in state: inout MatchmakerState
    ) -> LobbyID? {
        let id = state.makeTicketID()
        let ticket = Ticket(
            id: id, playerID: inviter, key: QueueKey(game: game, hosted: false, playerGroup: 0), minPlayers: 2, maxPlayers: rules.maxPlayers,
            fillTime: 1_000)
        state.addRequest(WaitingRequest(key: RequestKey(playerID: inviter, requestID: requestID), sessionID: session, queuedAt: 0), ticket: id)
        let forming = FormingMatch(
            matchID: matchID, bundleID: "com.example.game", environment: "sandbox", creatorPlayerID: inviter, creatorRequestID: requestID,
            invitations: Dictionary(uniqueKeysWithValues: invitees.map { ($0, ("inv_\($0)", Int64(60_000))) }), ruleParty: rules)
        let outcome = state.queue.openInvitationLobby(creator: ticket, invited: invitees, baseMembers: [], openToAutoMatch: false, now: 0)
        guard let lobby = outcome.placements.first?.lobby else { return nil }
        state.forming[lobby] = forming
        for (_, invitation) in forming.invitations { state.lobbyOfInvitation[invitation.invitationID] = lobby }
        return lobby
    }

    /// An invitee's answer, as the service records it (an acceptance waits under `requestID` on `session`).
    static func answer(
        _ invitee: String, accepted: Bool, requestID: String = "", session: String = "", lobby: LobbyID, in state: inout MatchmakerState
    ) throws -> MatchmakingDecisions {
        state.lobbyOfInvitation["inv_\(invitee)"] = nil
        if accepted { state.addAcceptedInvitee(invitee, AcceptedInvitee(requestID: requestID, sessionID: session), to: lobby) }
        let decisions = state.record(try state.queue.answer(lobby: lobby, player: invitee, accepted: accepted, now: 10), now: 10)
        state.queueReadyParties(arrival: 5_000, now: 10)
        return decisions
    }

    /// A stranger's request in the same queue.
    static func enqueueStranger(_ player: String, _ requestID: String, rules: RuleParty, in state: inout MatchmakerState) -> TicketID {
        let id = state.makeTicketID()
        state.addRequest(WaitingRequest(key: RequestKey(playerID: player, requestID: requestID), sessionID: "s-\(player)", queuedAt: 20), ticket: id)
        var stranger = rules
        stranger.properties = ["skill": 7]
        state.ruleQueues.enqueue(
            stranger.request(ticket: id, inviter: player, invitees: [], arrival: 6_000), playerID: player, key: rules.key, ruleSet: rules.ruleSet,
            experiment: nil, now: 20)
        return id
    }

    /// Runs the queue's pass and records the matches it made.
    static func pass(_ state: inout MatchmakerState) throws -> MatchmakingDecisions {
        let due = try #require(state.ruleQueues.takeDuePasses(now: 100).first)
        let result = due.matcher.pass(due.requests, now: 7_000)
        let (outcome, _) = state.ruleQueues.apply(result.matches, key: due.key, now: 7_000)
        return state.record(outcome, now: 100)
    }

    @Test func theInviterAndTheFriendsWhoAcceptedWaitAsOneRequestAndStartOneMatch() throws {
        var state = MatchmakerState(nodeID: "node-a")
        let rules = try Self.party(properties: ["skill": 10], recipients: ["bob": ["skill": 30]])
        let lobby = try #require(Self.invite("ann", "ra", session: "s-ann", invitees: ["bob", "cat"], rules: rules, matchID: "m_party", in: &state))

        // Bob accepts: the forming match waits for Cat's answer, out of the queue.
        #expect(try Self.answer("bob", accepted: true, requestID: "rb", session: "s-bob", lobby: lobby, in: &state).started.isEmpty)
        #expect(state.ruleQueues.waitingCount == 0, "the party enters the queue when every invitation is answered")
        // Cat declines: Ann and Bob enter the queue together, as one request; Bob's properties are the ones Ann gave him.
        let answered = try Self.answer("cat", accepted: false, lobby: lobby, in: &state)
        #expect(answered.started.isEmpty && answered.failed.isEmpty, "two of 2…3 players neither start nor fail: they wait for the queue")
        let ticket = try #require(state.ticketOfRequest[RequestKey(playerID: "ann", requestID: "ra")])
        let request = try #require(state.ruleQueues.request(ticket))
        #expect(request.players == [RulePlayer(playerID: "ann", properties: ["skill": 10]), RulePlayer(playerID: "bob", properties: ["skill": 30])])
        #expect(request.arrival == 5_000, "its wait starts when it enters the queue")
        #expect(state.isWaiting("bob") && state.waitingRequestID(playerID: "bob", sessionID: "s-bob") == "rb")
        #expect(state.queuedPartyTicket(playerID: "bob", requestID: "rb") == ticket)
        #expect(state.forming.isEmpty && state.queue.lobby(lobby) == nil)

        // A stranger makes the third player: one match of all three, under the party's stored match.
        _ = Self.enqueueStranger("dan", "rd", rules: rules, in: &state)
        let decisions = try Self.pass(&state)
        let started = try #require(decisions.started.first)
        #expect(decisions.started.count == 1)
        #expect(started.lobby.matchID == "m_party" && started.lobby.isStored)
        #expect(
            started.lobby.participants == [
                MatchParticipant(playerID: "ann", requestID: "ra", kind: .requested),
                MatchParticipant(playerID: "bob", requestID: "rb", kind: .invited, inviter: RequestKey(playerID: "ann", requestID: "ra")),
                MatchParticipant(playerID: "dan", requestID: "rd", kind: .requested),
            ])
        #expect(started.lobby.playerProperties?["bob"] == ["skill": 30, "gc": [:]])
        #expect(!state.isWaiting("ann") && !state.isWaiting("bob") && state.queuedParties.isEmpty)
        #expect(state.startedNotStored[RequestKey(playerID: "bob", requestID: "rb")] == "m_party")
    }

    @Test func aPartyThatFillsTheMatchAloneStartsWithoutStrangers() throws {
        var state = MatchmakerState(nodeID: "node-a")
        let rules = try Self.party(properties: ["skill": 1], recipients: [:])
        let lobby = try #require(Self.invite("ann", "ra", session: "s-ann", invitees: ["bob", "cat"], rules: rules, matchID: "m_full", in: &state))
        _ = try Self.answer("bob", accepted: true, requestID: "rb", session: "s-bob", lobby: lobby, in: &state)
        _ = try Self.answer("cat", accepted: true, requestID: "rc", session: "s-cat", lobby: lobby, in: &state)
        let started = try #require(try Self.pass(&state).started.first)
        #expect(started.lobby.participants.map(\.playerID) == ["ann", "bob", "cat"])
        #expect(started.lobby.playerProperties?["cat"] == ["skill": 1, "gc": [:]], "an invitee without recipientProperties has the inviter's")
    }

    @Test func anInviterWhoseFriendsAllDeclineWaitsInTheQueueAlone() throws {
        var state = MatchmakerState(nodeID: "node-a")
        let rules = try Self.party(properties: ["skill": 3], recipients: [:])
        let lobby = try #require(Self.invite("ann", "ra", session: "s-ann", invitees: ["bob"], rules: rules, matchID: "m_alone", in: &state))
        let decisions = try Self.answer("bob", accepted: false, lobby: lobby, in: &state)
        #expect(decisions.failed.isEmpty && decisions.started.isEmpty, "one player is too few for the match, not for the queue")
        let ticket = try #require(state.ticketOfRequest[RequestKey(playerID: "ann", requestID: "ra")])
        #expect(state.ruleQueues.request(ticket)?.players == [RulePlayer(playerID: "ann", properties: ["skill": 3])])
        _ = Self.enqueueStranger("dan", "rd", rules: rules, in: &state)
        _ = Self.enqueueStranger("eve", "re", rules: rules, in: &state)
        let started = try #require(try Self.pass(&state).started.first)
        #expect(started.lobby.participants.map(\.playerID) == ["ann", "dan", "eve"] && started.lobby.matchID == "m_alone")
    }

    @Test func twoPartiesInOneMatchKeepTheFirstPartysStoredMatchAndEndTheOther() throws {
        var state = MatchmakerState(nodeID: "node-a")
        var rules = try Self.party(properties: ["skill": 1], recipients: [:])
        rules.ruleSet = RuleMatcherTests.ruleSet(4, 4, rules.ruleSet.rules)
        rules.maxPlayers = 4
        let first = try #require(Self.invite("ann", "ra", session: "s-ann", invitees: ["bob"], rules: rules, matchID: "m_first", in: &state))
        _ = try Self.answer("bob", accepted: true, requestID: "rb", session: "s-bob", lobby: first, in: &state)
        let second = try #require(Self.invite("cat", "rc", session: "s-cat", invitees: ["dan"], rules: rules, matchID: "m_second", in: &state))
        _ = try Self.answer("dan", accepted: true, requestID: "rd", session: "s-dan", lobby: second, in: &state)
        let started = try #require(try Self.pass(&state).started.first)
        #expect(started.lobby.matchID == "m_first" && started.lobby.supersededMatchIDs == ["m_second"])
        #expect(started.lobby.participants.map(\.playerID) == ["ann", "bob", "cat", "dan"])
        // Each invitee's "connected" goes to their own inviter.
        #expect(
            started.lobby.participants.compactMap(\.inviter) == [RequestKey(playerID: "ann", requestID: "ra"), RequestKey(playerID: "cat", requestID: "rc")])
    }

    @Test func anInviteeWhoLeavesLeavesThePartyAndAnInviterWhoLeavesReleasesIt() throws {
        var state = MatchmakerState(nodeID: "node-a")
        state.channelOpened(sessionID: "s-bob")
        let rules = try Self.party(properties: ["skill": 1], recipients: [:])
        let lobby = try #require(Self.invite("ann", "ra", session: "s-ann", invitees: ["bob", "cat"], rules: rules, matchID: "m_p", in: &state))
        _ = try Self.answer("bob", accepted: true, requestID: "rb", session: "s-bob", lobby: lobby, in: &state)
        _ = try Self.answer("cat", accepted: true, requestID: "rc", session: "s-cat", lobby: lobby, in: &state)
        let ticket = try #require(state.ticketOfRequest[RequestKey(playerID: "ann", requestID: "ra")])
        _ = state.ruleQueues.takeDuePasses(now: 100)

        // Bob's device goes away: the party waits on without him, and its queue runs again.
        #expect(state.channelClosed(sessionID: "s-bob", now: 200).decisions.failed.isEmpty)
        #expect(!state.isWaiting("bob") && state.ruleQueues.request(ticket)?.players.map(\.playerID) == ["ann", "cat"])
        #expect(state.ruleQueues.takeDuePasses(now: 300).count == 1)

        // Ann cancels: Cat is released, told that the inviter left.
        let decisions = try state.remove(ticket, now: 400)
        let failed = try #require(decisions.failed.first)
        #expect(failed.reason == "the inviter left" && failed.lobby.matchID == "m_p")
        #expect(failed.lobby.participants == [MatchParticipant(playerID: "cat", requestID: "rc", kind: .invited)])
        #expect(!state.isWaiting("cat") && state.ruleQueues.waitingCount == 0 && state.queuedParties.isEmpty)
    }
}
