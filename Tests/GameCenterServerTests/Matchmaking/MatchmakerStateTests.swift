import Testing
@testable import GameCenterServer

/// The matchmaker's decisions on its own, without a server, storage or clock: what a filled match, a cancelled
/// request and a closed channel (here or on another node) do to the queue and what they leave to store.
struct MatchmakerStateTests {
    /// Puts `playerID`'s request `requestID` in the queue as the service does, on a device channel `sessionID`.
    static func enqueue(
        _ playerID: String, _ requestID: String, session sessionID: String, players: ClosedRange<Int> = 2...2, now: Int64,
        in state: inout MatchmakerState
    ) -> MatchmakingDecisions {
        let id = state.makeTicketID()
        let ticket = Ticket(
            id: id, playerID: playerID, key: QueueKey(game: "com.example.game\nsandbox", hosted: false, playerGroup: 0),
            minPlayers: players.lowerBound, maxPlayers: players.upperBound, fillTime: 1_000)
        state.addRequest(WaitingRequest(key: RequestKey(playerID: playerID, requestID: requestID), sessionID: sessionID, queuedAt: now), ticket: id)
        return state.record(state.queue.enqueue(ticket, now: now), now: now)
    }

    @Test func aFilledMatchStartsAndItsRequestsLeaveTheQueue() throws {
        var state = MatchmakerState(nodeID: "node-a")
        state.channelOpened(sessionID: "s1")
        state.channelOpened(sessionID: "s2")
        #expect(Self.enqueue("p1", "r1", session: "s1", now: 100, in: &state).started.isEmpty)
        #expect(state.waitingRequestID(playerID: "p1", sessionID: "s1") == "r1")
        let decisions = Self.enqueue("p2", "r2", session: "s2", now: 350, in: &state)

        let started = try #require(decisions.started.first)
        #expect(decisions.started.count == 1 && decisions.failed.isEmpty)
        #expect(Set(started.lobby.participants.map(\.playerID)) == ["p1", "p2"])
        #expect(Set(started.lobby.participants.compactMap(\.requestID)) == ["r1", "r2"])
        #expect(started.lobby.bundleID == "com.example.game" && started.lobby.environment == "sandbox")
        #expect(started.lobby.nodeID == "node-a")
        #expect(started.lobby.relayURL == nil, "every member came through this node: each uses its own server's relay")
        #expect(decisions.waitMilliseconds.sorted() == [0, 250])
        #expect(state.requests.isEmpty && !state.isWaiting("p1") && !state.isWaiting("p2"))
        #expect(state.waitingRequestID(playerID: "p1", sessionID: "s1") == nil)
        // Until the match is stored, a status query finds it in memory.
        #expect(state.startedNotStored[RequestKey(playerID: "p1", requestID: "r1")] == started.lobby.matchID)
    }

    @Test func aRequestLeavesWhenItsDevicesLastChannelCloses() {
        var state = MatchmakerState(nodeID: "node-a")
        state.channelOpened(sessionID: "s1")
        state.channelOpened(sessionID: "s1")
        state.channelOpened(sessionID: "s2")
        _ = Self.enqueue("p1", "r1", session: "s1", players: 3...3, now: 0, in: &state)
        _ = Self.enqueue("p2", "r2", session: "s2", players: 3...3, now: 0, in: &state)

        let first = state.channelClosed(sessionID: "s1", now: 10)
        #expect(!first.lastHere && state.isWaiting("p1"), "another channel of the session is still open")
        let last = state.channelClosed(sessionID: "s1", now: 20)
        #expect(last.lastHere)
        #expect(!state.isWaiting("p1"), "its device can no longer be told of a match")
        #expect(state.isWaiting("p2"), "another session's request stays")
        #expect(last.decisions.started.isEmpty)
    }

    @Test func aChannelOpenOnAnotherNodeKeepsTheRequestUntilThatNodeIsGone() {
        var state = MatchmakerState(nodeID: "node-a")
        state.channelOpened(sessionID: "s1")
        state.remoteChannel(sessionID: "s1", on: "node-b", open: true)
        _ = Self.enqueue("p1", "r1", session: "s1", players: 3...3, now: 0, in: &state)

        #expect(state.channelClosed(sessionID: "s1", now: 10).lastHere)
        #expect(state.isWaiting("p1"), "the device still listens through node-b")
        // A close notice from a node the session is not on changes nothing.
        _ = state.remoteChannelClosed(sessionID: "s1", on: "node-c", now: 20)
        #expect(state.isWaiting("p1"))
        _ = state.forgetChannels(onNodesOtherThan: ["node-a", "node-b"], now: 30)
        #expect(state.isWaiting("p1"), "node-b is alive")
        _ = state.forgetChannels(onNodesOtherThan: ["node-a"], now: 40)
        #expect(!state.isWaiting("p1"), "node-b died with the device's channel")
        #expect(state.remoteChannels.isEmpty)
    }

    @Test func aMatchWithAMemberFromAnotherNodeIsRelayedByThisNode() throws {
        var state = MatchmakerState(nodeID: "node-a")
        state.relayURL = "http://node-a.example:8080"
        state.channelOpened(sessionID: "s1")
        state.remoteChannel(sessionID: "s2", on: "node-b", open: true)
        _ = Self.enqueue("p1", "r1", session: "s1", now: 0, in: &state)
        let started = try #require(Self.enqueue("p2", "r2", session: "s2", now: 5, in: &state).started.first)
        #expect(started.lobby.relayURL == "http://node-a.example:8080")
    }

    @Test func cancellingTakesTheRequestOutOnce() throws {
        var state = MatchmakerState(nodeID: "node-a")
        state.channelOpened(sessionID: "s1")
        _ = Self.enqueue("p1", "r1", session: "s1", players: 3...3, now: 0, in: &state)
        let ticket = try #require(state.ticketOfRequest[RequestKey(playerID: "p1", requestID: "r1")])
        _ = try state.remove(ticket, now: 10)
        #expect(!state.isWaiting("p1") && state.waitingRequestID(playerID: "p1", sessionID: "s1") == nil)
        let again = #expect(throws: APIError.self) { _ = try state.remove(ticket, now: 20) }
        #expect(again?.code == APIError.noSuchRequest.code)
    }
}
