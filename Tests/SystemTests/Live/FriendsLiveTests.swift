import Foundation
import OpenGameKit
import Testing

/// Friends over a real server: requests pushed on the realtime channel, answers, restarts, partial loads.
@Suite(.serialized, .timeLimit(.minutes(3))) struct FriendsLiveTests {
    /// Friends by name, as people know each other: the account name reaches the player; a name nobody has is a clear
    /// `invalidPlayer`.
    @Test func aFriendRequestSentByAccountNameReachesThePlayer() async throws {
        let server = try LiveServer(engine: "sqlite")
        try await server.start()
        let (alice, _) = try await Devices.signedUp(server, alias: "Alice")
        let (bob, bobAccount) = try await Devices.signedUp(server, alias: "Bob")
        let bobEvents = bob.events
        try await GKFriendRequest.send(toAccounts: [bobAccount], message: "By name", in: alice)
        let request = try await nextEvent(bobEvents) { event -> GKFriendRequest? in
            if case .friendRequestReceived(let request) = event { return request }
            return nil
        }
        #expect(request.from == alice.localPlayer.playerID && request.message == "By name")
        let unknown = await #expect(throws: GKError.self) { try await GKFriendRequest.send(toAccounts: ["\(bobAccount)-nobody"], message: nil, in: alice) }
        #expect(unknown?.code == .invalidPlayer)
        #expect(unknown?.message.contains("\(bobAccount)-nobody") == true)
        let none = await #expect(throws: GKError.self) { try await GKFriendRequest.send(toAccounts: [], message: nil, in: alice) }
        #expect(none?.code == .invalidParameter)
        try await server.stop()
    }

    @Test(arguments: LiveServer.engines)
    func aFriendRequestRoundTripsOverTheRealtimeChannel(engine: String) async throws {
        let server = try LiveServer(engine: engine)
        try await server.start()
        let (alice, _) = try await Devices.signedUp(server, alias: "Alice")
        let (bob, _) = try await Devices.signedUp(server, alias: "Bob")
        let bobEvents = bob.events, aliceEvents = alice.events

        try await GKFriendRequest.send(to: [bob.localPlayer.playerID], message: "Rematch?", in: alice)
        let request = try await nextEvent(bobEvents) { event -> GKFriendRequest? in
            if case .friendRequestReceived(let request) = event { return request }
            return nil
        }
        #expect(request.from == alice.localPlayer.playerID)
        #expect(request.fromAlias == "Alice")
        #expect(request.message == "Rematch?")

        try await request.accept()
        let accepted = try await nextEvent(aliceEvents) { event -> String? in
            if case .friendRequestAccepted(let playerID) = event { return playerID }
            return nil
        }
        #expect(accepted == bob.localPlayer.playerID)
        #expect(try await alice.localPlayer.loadFriends() == [bob.localPlayer.playerID])
        #expect(try await bob.localPlayer.loadFriends() == [alice.localPlayer.playerID])
        #expect(alice.localPlayer.friends == [bob.localPlayer.playerID])

        // A replayed accept is refused with a clear error.
        let replay = await #expect(throws: GKError.self) { try await request.accept() }
        #expect(replay?.code == .invalidParameter)
        #expect(replay?.message.contains("already accepted") == true)

        // Friends see each other's status; the friends list follows removals as they are pushed.
        try await alice.localPlayer.setStatus("Back at noon")
        let seen = try await GKPlayer.loadPlayers(forIdentifiers: [alice.localPlayer.playerID], in: bob)
        #expect(seen.first?.isFriend == true)
        #expect(seen.first?.status == "Back at noon")
        #expect(seen.first?.recentGames == [])  // the sandbox does not share which games friends play
        try await GKFriendRequest.removeFriend(alice.localPlayer.playerID, in: bob)
        let removed = try await nextEvent(aliceEvents) { event -> String? in
            if case .friendRemoved(let playerID) = event { return playerID }
            return nil
        }
        #expect(removed == bob.localPlayer.playerID)
        #expect(alice.localPlayer.friends == [])
        try await server.stop()
    }

    @Test(arguments: LiveServer.engines)
    func eventsMissedWhileTheGameWasClosedArriveWhenItReturns(engine: String) async throws {
        let server = try LiveServer(engine: engine)
        try await server.start()
        let (alice, _) = try await Devices.signedUp(server, alias: "Alice")
        let storage = FileManager.default.temporaryDirectory.appendingPathComponent("device-\(UUID().uuidString)")
        var bob: GKGameCenter? = Devices.make(server, storage: storage)
        try await bob!.localPlayer.authenticate(.signUp(account: "bob-\(UUID().uuidString.prefix(6))", password: "password-1", alias: "Bob"))
        let bobID = bob!.localPlayer.playerID
        // Bob's game ends: its realtime channel closes with it.
        await bob!.close()
        bob = nil

        try await GKFriendRequest.send(to: [bobID], message: "While you were away", in: alice)

        let reopened = Devices.make(server, storage: storage)
        let events = reopened.events
        try await reopened.localPlayer.authenticate(.stored)
        let request = try await nextEvent(events) { event -> GKFriendRequest? in
            if case .friendRequestReceived(let request) = event { return request }
            return nil
        }
        #expect(request.message == "While you were away")
        // Delivered once: a second reopening does not replay it.
        await reopened.close()
        let third = Devices.make(server, storage: storage)
        let thirdEvents = third.events
        try await third.localPlayer.authenticate(.stored)
        let next = try await nextEvent(thirdEvents) { event -> String? in
            switch event {
            case .friendRequestReceived(let request): return "request \(request.requestID)"
            case .connected: return "connected"
            default: return nil
            }
        }
        #expect(next == "connected")
        try await server.stop()
    }

    @Test(arguments: LiveServer.engines)
    func aServerRestartInTheMiddleLosesNothing(engine: String) async throws {
        let server = try LiveServer(engine: engine)
        try await server.start()
        let (alice, _) = try await Devices.signedUp(server, alias: "Alice")
        let (bob, _) = try await Devices.signedUp(server, alias: "Bob")
        try await alice.localPlayer.setStatus("Before the restart")
        let bobEvents = bob.events
        try await GKFriendRequest.send(to: [bob.localPlayer.playerID], message: "one", in: alice)
        _ = try await nextEvent(bobEvents) { event -> Bool? in
            if case .friendRequestReceived = event { return true }
            return nil
        }

        #expect(try await server.stop() == 0, "SIGTERM stops the server cleanly")
        try await server.start()

        // Both devices keep their sessions; the accepted request and the status survived.
        let pending = try await GKFriendRequest.loadPending(in: bob)
        #expect(pending.map(\.message) == ["one"])
        let aliceEvents = alice.events
        try await pending[0].accept()
        _ = try await nextEvent(aliceEvents, within: 15) { event -> Bool? in
            if case .friendRequestAccepted = event { return true }
            return nil
        }
        let seen = try await GKPlayer.loadPlayers(forIdentifiers: [alice.localPlayer.playerID], in: bob)
        #expect(seen.first?.status == "Before the restart")
        try await server.stop()
    }

    @Test(arguments: LiveServer.engines)
    func unknownIDsFailWithInvalidPlayerAndKeepTheFoundPlayers(engine: String) async throws {
        let server = try LiveServer(engine: engine)
        try await server.start()
        let (alice, _) = try await Devices.signedUp(server, alias: "Alice")
        let (bob, _) = try await Devices.signedUp(server, alias: "Bob")
        let ids = [bob.localPlayer.playerID, "G:does-not-exist", alice.localPlayer.playerID]
        let error = await #expect(throws: GKError.self) { try await GKPlayer.loadPlayers(forIdentifiers: ids, in: alice) }
        #expect(error?.code == .invalidPlayer)
        #expect(error?.message.contains("G:does-not-exist") == true)
        let partial = try #require(error?.partialResult(as: [GKPlayer].self))
        #expect(partial.map(\.alias) == ["Bob", "Alice"])
        #expect(partial.allSatisfy { !$0.isFriend })

        // The completion-handler form passes both, as the seed's does.
        let (players, handlerError): ([GKPlayer]?, (any Error)?) = await withCheckedContinuation { continuation in
            GKPlayer.loadPlayers(forIdentifiers: ids, in: alice) { continuation.resume(returning: ($0, $1)) }
        }
        #expect(players?.count == 2)
        #expect((handlerError as? GKError)?.code == .invalidPlayer)
        try await server.stop()
    }

    @Test(arguments: LiveServer.engines)
    func underagePlayersCannotSendFriendRequests(engine: String) async throws {
        let server = try LiveServer(engine: engine)
        try await server.start()
        let (kid, _) = try await Devices.signedUp(server, alias: "Kid", underage: true)
        let (adult, _) = try await Devices.signedUp(server, alias: "Adult")
        #expect(kid.localPlayer.isUnderage)
        let error = await #expect(throws: GKError.self) { try await GKFriendRequest.send(to: [adult.localPlayer.playerID], message: nil, in: kid) }
        #expect(error?.code == .underage)
        let toKid = await #expect(throws: GKError.self) { try await GKFriendRequest.send(to: [kid.localPlayer.playerID], message: nil, in: adult) }
        #expect(toKid?.code == .underage)
        let status = await #expect(throws: GKError.self) { try await adult.localPlayer.setStatus(String(repeating: "x", count: 141)) }
        #expect(status?.code == .playerStatusExceedsMaximumLength)
        try await server.stop()
    }
}
