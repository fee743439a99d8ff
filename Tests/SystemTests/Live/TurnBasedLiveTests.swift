import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import NetworkFaultProxy
import OpenGameKit
import Synchronization
import Testing

/// Turn-based matches through the SDK against real server processes, on every engine: matches played to the end
/// with exchanges, stale writes, timeouts on the server's clock, invitations, and a device that was away for days.
@Suite(.serialized, .timeLimit(.minutes(4))) struct TurnBasedLiveTests {
    static let adminKey = LeaderboardsLiveTests.adminKey

    /// Every turn-based event `device` hears from now on, kept in order.
    final class TurnLog: @unchecked Sendable {
        private let lock = NSLock()
        private var seen: [GKTurnBasedMatchEvent] = []
        private var task: Task<Void, Never>?

        init(_ device: GKGameCenter) {
            let events = device.events
            task = Task { [weak self] in
                for await event in events {
                    if case .turnBased(let turn) = event { self?.lock.withLock { self?.seen.append(turn) } }
                }
            }
        }

        deinit { task?.cancel() }

        var events: [GKTurnBasedMatchEvent] { lock.withLock { seen } }

        /// Waits for an event of `kind` about `matchID` after the first `after` events; returns it.
        @discardableResult
        func next(_ kind: GKTurnBasedMatchEvent.Kind, _ matchID: String, becameActive: Bool? = nil) async throws -> GKTurnBasedMatchEvent {
            var found: GKTurnBasedMatchEvent?
            try await waitUntil("a \(kind) event of match \(matchID)") {
                found = events.first { $0.kind == kind && $0.matchID == matchID && (becameActive == nil || $0.didBecomeActive == becameActive) }
                return found != nil
            }
            return found!
        }
    }

    /// Records the GameKit listener calls.
    final class Listener: GKTurnBasedEventListener, @unchecked Sendable {
        private let lock = NSLock()
        private var calls: [String] = []

        var log: [String] { lock.withLock { calls } }
        private func record(_ call: String) { lock.withLock { calls.append(call) } }

        func player(_ playerID: String, receivedTurnEventFor match: GKTurnBasedMatch, didBecomeActive: Bool) {
            record("turn \(match.matchID) active=\(didBecomeActive)")
        }
        func player(_ playerID: String, matchEnded match: GKTurnBasedMatch) { record("ended \(match.matchID)") }
        func player(_ playerID: String, receivedExchangeRequest exchange: GKTurnBasedExchange, for match: GKTurnBasedMatch) {
            record("exchange \(exchange.exchangeID)")
        }
        func player(
            _ playerID: String, receivedExchangeReplies replies: [GKTurnBasedExchangeReply], forCompletedExchange exchange: GKTurnBasedExchange,
            for match: GKTurnBasedMatch
        ) {
            record("replies \(exchange.exchangeID) \(replies.count)")
        }
        func player(_ playerID: String, wantsToQuitMatch match: GKTurnBasedMatch) { record("quit \(match.matchID)") }
        func player(_ playerID: String, didRequestMatchWithOtherPlayers playerIDsToInvite: [String]) {
            record("requested \(playerIDsToInvite.joined(separator: ","))")
        }
    }

    static func request(_ players: Int) -> GKMatchRequest {
        GKMatchRequest(minPlayers: 2, maxPlayers: players)
    }

    /// `devices` ask in order for a match of `devices.count` seats: the first starts it, the others fill its seats.
    /// Returns the first device's view right after it started the match.
    static func matched(_ devices: [GKGameCenter]) async throws -> GKTurnBasedMatch {
        let match = try await GKTurnBasedMatch.find(for: request(devices.count), in: devices[0])
        for device in devices.dropFirst() {
            let joined = try await GKTurnBasedMatch.find(for: request(devices.count), in: device)
            #expect(joined.matchID == match.matchID, "auto-match fills the open seats")
        }
        return match
    }

    static func participant(_ match: GKTurnBasedMatch, _ device: GKGameCenter) throws -> GKTurnBasedParticipant {
        try #require(match.participants.first { $0.playerID == device.localPlayer.playerID })
    }

    @Test(arguments: LiveServer.engines)
    func threePlayersPlayAMatchToTheEndWithAnExchangeMerged(engine: String) async throws {
        let server = try LiveServer(engine: engine)
        try await server.start()
        let (a, _) = try await Devices.signedUp(server, alias: "Ann")
        let (b, _) = try await Devices.signedUp(server, alias: "Bob")
        let (c, _) = try await Devices.signedUp(server, alias: "Cat")
        let (logA, logB, logC) = (TurnLog(a), TurnLog(b), TurnLog(c))
        let listener = Listener()
        b.localPlayer.register(listener)

        let matchA = try await GKTurnBasedMatch.find(for: Self.request(3), in: a)
        #expect(matchA.status == .open && matchA.currentParticipant?.playerID == a.localPlayer.playerID)
        #expect(matchA.participants.map(\.status) == [.active, .matching, .matching])
        #expect(matchA.matchDataMaximumSize == 1 << 20 && matchA.exchangeDataMaximumSize == 64 << 10)
        let matchB = try await GKTurnBasedMatch.find(for: Self.request(3), in: b)
        let matchC = try await GKTurnBasedMatch.find(for: Self.request(3), in: c)
        #expect(matchB.matchID == matchA.matchID && matchC.matchID == matchA.matchID, "auto-match fills the open seats")
        try await logA.next(.joined, matchA.matchID)

        // Ann's turn: to Bob. Her first view of the match predates the joins, so it is stale now.
        let stale = await #expect(throws: GKError.self) {
            try await matchA.endTurn(withNextParticipants: [matchA.participants[1]], turnTimeout: 0, match: Data("?".utf8))
        }
        #expect(stale?.code == .turnBasedInvalidTurn)
        let annsTurn = try await GKTurnBasedMatch.load(withID: matchA.matchID, in: a)
        #expect(try await annsTurn.loadMatchData() == nil)
        annsTurn.setLocalizableMessageWithKey("%@ moved", arguments: ["Ann"])
        try await annsTurn.endTurn(
            withNextParticipants: [try Self.participant(annsTurn, b), try Self.participant(annsTurn, c)], turnTimeout: GKTurnTimeoutDefault,
            match: Data("A".utf8))
        let bobsTurn = try await logB.next(.turnPassed, matchA.matchID)
        #expect(bobsTurn.didBecomeActive && bobsTurn.match.message == "Ann moved")
        #expect(bobsTurn.match.currentParticipant?.timeoutDate != nil)
        let c1 = try await logC.next(.turnPassed, matchA.matchID)
        #expect(!c1.didBecomeActive)
        try await waitUntil("Bob's listener heard the turn") { listener.log.contains("turn \(matchA.matchID) active=true") }

        // Bob trades with Cat outside the turn order; Cat replies; Bob (sender, and the current player) merges it.
        let turnB = bobsTurn.match
        #expect(try await turnB.loadMatchData() == Data("A".utf8))
        let sent = try await turnB.sendExchange(
            to: [try Self.participant(turnB, c)], data: Data("trade?".utf8), localizableMessageKey: "trade", arguments: [],
            timeout: GKExchangeTimeoutDefault)
        let request = try await logC.next(.exchangeRequest, matchA.matchID)
        let exchange = try #require(request.exchange)
        #expect(exchange.exchangeID == sent.exchangeID && exchange.data == Data("trade?".utf8) && exchange.sender?.playerID == b.localPlayer.playerID)
        try await exchange.reply(withLocalizableMessageKey: "ok", arguments: [], data: Data("yes".utf8))
        let completed = try await logB.next(.exchangeCompleted, matchA.matchID)
        #expect(completed.exchange?.replies?.first?.data == Data("yes".utf8))
        try await waitUntil("Bob's listener heard the replies") { listener.log.contains("replies \(sent.exchangeID) 1") }
        let current = try await GKTurnBasedMatch.load(withID: matchA.matchID, in: b)
        #expect(current.completedExchanges?.map(\.exchangeID) == [sent.exchangeID])
        let unmerged = await #expect(throws: GKError.self) {
            try await current.endTurn(withNextParticipants: [try Self.participant(current, c)], turnTimeout: 0, match: Data("AB".utf8))
        }
        #expect(unmerged?.code == .turnBasedInvalidState)
        try await current.saveMergedMatchData(Data("AB+trade".utf8), withResolvedExchanges: current.completedExchanges ?? [])
        #expect(current.exchanges == nil)
        try await current.endTurn(withNextParticipants: [try Self.participant(current, c)], turnTimeout: 0, match: Data("AB".utf8))

        // Cat plays, then Ann ends the match with everyone's outcome.
        let catsTurn = try await logC.next(.turnPassed, matchA.matchID, becameActive: true)
        let turnC = try await GKTurnBasedMatch.load(withID: catsTurn.matchID, in: c)
        #expect(turnC.currentParticipant?.playerID == c.localPlayer.playerID)
        try await turnC.endTurn(withNextParticipants: [try Self.participant(turnC, a)], turnTimeout: 0, match: Data("ABC".utf8))
        try await waitUntil("it is Ann's turn again") {
            try await GKTurnBasedMatch.load(withID: matchA.matchID, in: a).currentParticipant?.playerID == a.localPlayer.playerID
        }
        let last = try await GKTurnBasedMatch.load(withID: matchA.matchID, in: a)
        for (participant, outcome) in zip(last.participants, [GKTurnBasedMatch.Outcome.won, .second, .third]) { participant.matchOutcome = outcome }
        try await last.endMatchInTurn(withMatch: Data("final".utf8))
        #expect(last.status == .ended)
        for log in [logB, logC] { try await log.next(.matchEnded, matchA.matchID) }
        try await waitUntil("Bob's listener heard the end") { listener.log.contains("ended \(matchA.matchID)") }
        let ended = try await GKTurnBasedMatch.load(withID: matchA.matchID, in: c)
        #expect(ended.participants.map(\.matchOutcome) == [.won, .second, .third])
        #expect(try await ended.loadMatchData() == Data("final".utf8))

        // Every device saw the match's changes in order, each once.
        for log in [logA, logB, logC] {
            let versions = log.events.filter { $0.matchID == matchA.matchID }.map(\.match.version)
            #expect(versions == versions.sorted() && !versions.isEmpty, "events out of order: \(versions)")
        }
        for device in [a, b, c] {
            try await GKTurnBasedMatch.load(withID: matchA.matchID, in: device).remove()
            #expect(try await GKTurnBasedMatch.loadMatches(in: device).isEmpty)
        }
        try await server.stop()
    }

    @Test(arguments: LiveServer.engines)
    func aStaleWriteIsRefusedAndOverwritesNothing(engine: String) async throws {
        let server = try LiveServer(engine: engine)
        try await server.start()
        let (a, _) = try await Devices.signedUp(server, alias: "Ann")
        let (b, _) = try await Devices.signedUp(server, alias: "Bob")
        let match = try await Self.matched([a, b])
        let first = try await GKTurnBasedMatch.load(withID: match.matchID, in: a)
        let second = try await GKTurnBasedMatch.load(withID: match.matchID, in: a)
        try await first.saveCurrentTurn(withMatch: Data("kept".utf8))
        let stale = await #expect(throws: GKError.self) { try await second.saveCurrentTurn(withMatch: Data("lost".utf8)) }
        #expect(stale?.code == .turnBasedInvalidTurn && stale?.serverCode == "turn.stale_version")
        #expect(try await GKTurnBasedMatch.load(withID: match.matchID, in: b).loadMatchData() == Data("kept".utf8))

        let notYours = await #expect(throws: GKError.self) {
            let theirs = try await GKTurnBasedMatch.load(withID: match.matchID, in: b)
            try await theirs.saveCurrentTurn(withMatch: Data("x".utf8))
        }
        #expect(notYours?.code == .turnBasedInvalidTurn)
        let tooLarge = await #expect(throws: GKError.self) {
            try await first.saveCurrentTurn(withMatch: Data(count: first.matchDataMaximumSize + 1))
        }
        #expect(tooLarge?.code == .turnBasedMatchDataTooLarge)
        let stranger = await #expect(throws: GKError.self) {
            let (c, _) = try await Devices.signedUp(server, alias: "Cat")
            _ = try await GKTurnBasedMatch.load(withID: match.matchID, in: c)
        }
        #expect(stranger?.serverCode == "turn.no_such_match")

        // A body whose declared length is over the game's limit is answered before a byte of it is sent.
        let token = try await server.signUp(account: "raw-\(UUID().uuidString.prefix(8).lowercased())")
        var find = URLRequest(url: server.url.appendingPathComponent("v1/turn-matches"))
        find.httpMethod = "POST"
        for (name, value) in [
            ("Content-Type", "application/json"), ("X-GameCenter-Bundle-ID", "com.example.tapper"), ("X-GameCenter-Environment", "sandbox"),
            ("Authorization", "Bearer \(token)"),
        ] { find.setValue(value, forHTTPHeaderField: name) }
        find.httpBody = Data(#"{"minPlayers": 2, "maxPlayers": 4, "playerGroup": 7, "playersToInvite": []}"#.utf8)
        let (found, _) = try await URLSession.shared.data(for: find)
        let matchID = try #require((try JSONSerialization.jsonObject(with: found) as? [String: Any])?["matchID"] as? String)
        let connection = try RawTCPConnection(port: server.port)
        defer { connection.close() }
        #expect(
            connection.send(
                "POST /v1/turn-matches/\(matchID)/turn HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                    + "X-GameCenter-Bundle-ID: com.example.tapper\r\nX-GameCenter-Environment: sandbox\r\nAuthorization: Bearer \(token)\r\n"
                    + "Content-Length: \(8 << 20)\r\n\r\n"))
        let answer = connection.readUntilClosed(within: .seconds(10), orUntil: "turn.match_data_too_large")
        #expect(RawTCPConnection.status(answer.text) == 413, "\(answer.text)")
        try await server.stop()
    }

    @Test(arguments: LiveServer.engines)
    func aTurnThatTimesOutOnTheServersClockPassesToTheNext(engine: String) async throws {
        let server = try LiveServer(engine: engine)
        try await server.start(extraArguments: ["--admin-key", Self.adminKey, "--test-clock"])
        let (a, _) = try await Devices.signedUp(server, alias: "Ann")
        let (b, _) = try await Devices.signedUp(server, alias: "Bob")
        let (c, _) = try await Devices.signedUp(server, alias: "Cat")
        let logC = TurnLog(c)
        let match = try await Self.matched([a, b, c])
        let loaded = try await GKTurnBasedMatch.load(withID: match.matchID, in: a)
        try await loaded.endTurn(
            withNextParticipants: [try Self.participant(loaded, b), try Self.participant(loaded, c)], turnTimeout: 3600, match: Data("A".utf8))
        let deadline = try #require(try await GKTurnBasedMatch.load(withID: match.matchID, in: b).currentParticipant?.timeoutDate)
        #expect(abs(deadline.timeIntervalSince(Date()) - 3600) < 120)
        try await LeaderboardsLiveTests.advanceClock(server, hours: 2)
        let timedOut = try await logC.next(.timedOut, match.matchID)
        #expect(timedOut.didBecomeActive && timedOut.match.currentParticipant?.playerID == c.localPlayer.playerID)
        let bob = try #require(timedOut.match.participants.first { $0.playerID == b.localPlayer.playerID })
        #expect(bob.status == .done && bob.matchOutcome == .timeExpired)
        try await server.stop()
    }

    @Test(arguments: LiveServer.engines)
    func aDeclinedInvitationsSeatIsMatchedAgainAndPlayersQuitInAndOutOfTurn(engine: String) async throws {
        let server = try LiveServer(engine: engine)
        try await server.start()
        let (a, _) = try await Devices.signedUp(server, alias: "Ann")
        let (b, _) = try await Devices.signedUp(server, alias: "Bob")
        let (c, _) = try await Devices.signedUp(server, alias: "Cat")
        let (d, _) = try await Devices.signedUp(server, alias: "Dan")
        try await MatchmakingLiveTests.befriend(a, b)
        let (logA, logB) = (TurnLog(a), TurnLog(b))
        let request = Self.request(3)
        request.playersToInvite = [b.localPlayer.playerID]
        request.inviteMessage = "a game?"
        let match = try await GKTurnBasedMatch.find(for: request, in: a)
        #expect(match.participants.map(\.status) == [.active, .invited, .matching])
        #expect(try await GKTurnBasedMatch.loadMatches(in: b).isEmpty, "the invitation goes out with the first turn")
        try await match.endTurn(withNextParticipants: [match.participants[1], match.participants[2]], turnTimeout: 0, match: Data("A".utf8))
        let invited = try await logB.next(.invited, match.matchID)
        #expect(invited.message == "a game?")
        try await invited.match.declineInvite()
        try await logA.next(.declined, match.matchID)

        // The declined seat and the last one go to auto-match; the first filled is the one whose turn it is.
        let joined = try await GKTurnBasedMatch.find(for: Self.request(3), in: c)
        #expect(joined.matchID == match.matchID && joined.currentParticipant?.playerID == c.localPlayer.playerID)
        _ = try await GKTurnBasedMatch.find(for: Self.request(3), in: d)
        let catsTurn = try await GKTurnBasedMatch.load(withID: match.matchID, in: c)
        let outOfTurn = await #expect(throws: GKError.self) { try await catsTurn.participantQuitOutOfTurn(with: .quit) }
        #expect(outOfTurn?.code == .turnBasedInvalidState)
        try await catsTurn.participantQuitInTurn(
            with: .quit, nextParticipants: [try Self.participant(catsTurn, d)], turnTimeout: 0, match: Data("AC".utf8))
        let dansTurn = try await GKTurnBasedMatch.load(withID: match.matchID, in: d)
        #expect(dansTurn.currentParticipant?.playerID == d.localPlayer.playerID)
        let annView = try await GKTurnBasedMatch.load(withID: match.matchID, in: a)
        try await annView.participantQuitOutOfTurn(with: .lost)
        // Dan is the last one playing: the match is his to end; the others can remove it already.
        try await annView.remove()
        let cat = try await GKTurnBasedMatch.load(withID: match.matchID, in: c)
        try await cat.remove()
        let last = try await GKTurnBasedMatch.load(withID: match.matchID, in: d)
        for participant in last.participants where participant.playerID == d.localPlayer.playerID { participant.matchOutcome = .won }
        try await last.endMatchInTurn(withMatch: Data("end".utf8))
        try await last.remove()
        for device in [a, c, d] { #expect(try await GKTurnBasedMatch.loadMatches(in: device).isEmpty) }
        try await server.stop()
    }

    /// GameKit's `wantsToQuitMatch`: a player leaves a match on the Game Center app's turns page; their game hears it
    /// (the listener and a typed event) and quits with its outcome, and the others hear the quit.
    @Test(arguments: LiveServer.engines)
    func aPlayerWhoLeavesInTheGameCenterAppIsQuitByTheirGame(engine: String) async throws {
        let server = try LiveServer(engine: engine)
        try await server.start()
        let (a, _) = try await Devices.signedUp(server, alias: "Ann")
        let (b, bobAccount) = try await Devices.signedUp(server, alias: "Bob")
        let (logA, logB) = (TurnLog(a), TurnLog(b))
        let listener = Listener()
        b.localPlayer.register(listener)
        let match = try await Self.matched([a, b])

        var browser = try await WebAppBrowser.signedIn(to: server.url, account: bobAccount, password: "password-Bob")
        #expect(try await browser.get("/turns").html.contains("Leave the match of Tapper"))
        let left = try await browser.submit("/turns/quit", on: "/turns", [("match", match.matchID)])
        #expect(left.status == 303 && left.location == "/turns?done=quit", "\(left.html)")
        let asked = try await logB.next(.quitRequested, match.matchID)
        #expect(asked.actor?.playerID == b.localPlayer.playerID)
        try await waitUntil("Bob's listener hears wantsToQuitMatch") { listener.log.contains("quit \(match.matchID)") }
        #expect(try await GKTurnBasedMatch.load(withID: match.matchID, in: a).participants.map(\.status) == [.active, .active], "nothing changed yet")

        // Bob's game quits with the outcome it chooses; Ann hears it. Leaving again is refused on the page.
        try await asked.match.participantQuitOutOfTurn(with: .quit)
        try await logA.next(.participantQuit, match.matchID)
        let again = try await browser.submit("/turns/quit", on: "/turns", [("match", match.matchID)])
        #expect(again.status == 409 && again.html.contains("only a player still playing"))
        try await server.stop()
    }

    /// GameKit's `didRequestMatchWithOtherPlayers`: friends chosen on the Game Center app's play page for a turn-based
    /// match reach the game's turn-based listener once (kept until one is registered), and the game invites them.
    @Test(arguments: LiveServer.engines)
    func friendsChosenForATurnBasedMatchReachTheTurnBasedListener(engine: String) async throws {
        let server = try LiveServer(engine: engine)
        try await server.start()
        let (a, annAccount) = try await Devices.signedUp(server, alias: "Ann")
        let (b, _) = try await Devices.signedUp(server, alias: "Bob")
        try await MatchmakingLiveTests.befriend(a, b)
        let logB = TurnLog(b)

        var browser = try await WebAppBrowser.signedIn(to: server.url, account: annAccount, password: "password-Ann")
        let play = "/games/com.example.tapper/play"
        #expect(try await browser.get(play).html.contains("Start a turn-based match with them"))
        let chosen = try await browser.submit(play, on: play, [("friend", b.localPlayer.playerID), ("kind", "turnBased")])
        #expect(chosen.status == 303, "\(chosen.html)")
        // Ann's game has no listener yet: the choice waits for the first one.
        try await waitUntil("the choice is claimed by Ann's game") { !(try await browser.get(play).html.contains("Waiting for Tapper to start")) }
        // The server has handed the choice out; the device may still be reading the answer.
        let listener = Listener()
        a.localPlayer.register(listener)
        try await waitUntil("Ann's listener hears the choice") { !listener.log.isEmpty }
        #expect(listener.log == ["requested \(b.localPlayer.playerID)"])

        let request = Self.request(2)
        request.playersToInvite = [b.localPlayer.playerID]
        let match = try await GKTurnBasedMatch.find(for: request, in: a)
        try await match.endTurn(withNextParticipants: [match.participants[1]], turnTimeout: 0, match: Data("A".utf8))
        try await logB.next(.invited, match.matchID)
        let second = Listener()
        a.localPlayer.register(second)
        #expect(second.log.isEmpty, "a choice is handed out once")
        try await server.stop()
    }

    @Test(arguments: LiveServer.engines)
    func scoresAndAchievementsAreStoredWithTheMatchsEndOrNotAtAll(engine: String) async throws {
        let server = try LiveServer(engine: engine)
        try await server.start()
        let (a, _) = try await Devices.signedUp(server, alias: "Ann")
        let (b, _) = try await Devices.signedUp(server, alias: "Bob")
        let match = try await Self.matched([a, b])
        let last = try await GKTurnBasedMatch.load(withID: match.matchID, in: a)
        last.participants[0].matchOutcome = .won
        last.participants[1].matchOutcome = .lost
        let mine = GKScore(category: "tapper.taps", in: a)
        mine.value = 30
        let bobs = GKScore(category: "tapper.taps", playerID: b.localPlayer.playerID, in: a)
        bobs.value = 12
        let achievement = GKAchievement(identifier: "tapper.first", in: a)
        achievement.percentComplete = 100

        // One bad score: nothing is stored and the match goes on.
        let bad = GKScore(category: "tapper.nope", in: a)
        bad.value = 1
        let refused = await #expect(throws: GKError.self) {
            try await last.endMatchInTurn(withMatch: Data("end".utf8), scores: [mine, bad], achievements: [achievement])
        }
        #expect(refused?.serverCode == "leaderboard.unknown_category")
        #expect(try await GKTurnBasedMatch.load(withID: match.matchID, in: a).status == .open)
        #expect(try await GKAchievement.loadAchievements(in: a).isEmpty)
        let stranger = GKScore(category: "tapper.taps", playerID: "G:nobody", in: a)
        let notAParticipant = await #expect(throws: GKError.self) {
            try await last.endMatchInTurn(withMatch: Data("end".utf8), scores: [mine, stranger], achievements: [])
        }
        #expect(notAParticipant?.code == .turnBasedInvalidParticipant)
        #expect(try await GKTurnBasedMatch.load(withID: match.matchID, in: a).status == .open)

        try await last.endMatchInTurn(withMatch: Data("end".utf8), scores: [mine, bobs], achievements: [achievement])
        #expect(last.status == .ended)
        let board = GKLeaderboard(in: b)
        board.category = "tapper.taps"
        let entries = try await board.loadScores()
        #expect(entries.map(\.value) == [30, 12] && entries.map(\.playerID) == [a.localPlayer.playerID, b.localPlayer.playerID])
        #expect(try await GKAchievement.loadAchievements(in: a).first?.isCompleted == true)
        try await server.stop()
    }

    @Test(arguments: LiveServer.engines)
    func aDeviceAwayForDaysCatchesUpOnEveryTurnInOrderOnce(engine: String) async throws {
        let server = try LiveServer(engine: engine)
        try await server.start(extraArguments: ["--admin-key", Self.adminKey, "--test-clock"])
        let (a, _) = try await Devices.signedUp(server, alias: "Ann")
        let storage = FileManager.default.temporaryDirectory.appendingPathComponent("device-\(UUID().uuidString)")
        let b = Devices.make(server, storage: storage)
        try await b.localPlayer.authenticate(.signUp(account: "bob-\(UUID().uuidString.prefix(8).lowercased())", password: "password-B", alias: "Bob"))
        let bobID = b.localPlayer.playerID
        let match = try await GKTurnBasedMatch.find(for: Self.request(2), in: a)
        let joinedVersion = try await GKTurnBasedMatch.find(for: Self.request(2), in: b).version
        await b.close()

        // While Bob's device is off for three days, Ann saves her turn each day, then passes it to Bob, whose turn
        // times out on the server's clock and comes back to her.
        var current = try await GKTurnBasedMatch.load(withID: match.matchID, in: a)
        for day in 1...3 {
            try await current.saveCurrentTurn(withMatch: Data("day \(day)".utf8))
            try await LeaderboardsLiveTests.advanceClock(server, hours: 24)
        }
        try await current.endTurn(withNextParticipants: [current.participants[1]], turnTimeout: 3600, match: Data("to Bob".utf8))
        try await LeaderboardsLiveTests.advanceClock(server, hours: 2)
        try await waitUntil("Bob's turn timed out back to Ann") {
            current = try await GKTurnBasedMatch.load(withID: match.matchID, in: a)
            return current.currentParticipant?.playerID == a.localPlayer.playerID
        }
        let whileAway = Array((joinedVersion + 1)...current.version)

        // Bob's device comes back: every change arrives, in order, once, and agrees with loadMatches.
        let back = Devices.make(server, storage: storage)
        let log = TurnLog(back)
        try await back.localPlayer.authenticate()
        #expect(back.localPlayer.playerID == bobID)
        try await waitUntil("Bob's device caught up to version \(current.version)") {
            log.events.contains { $0.matchID == match.matchID && $0.match.version == current.version }
        }
        let versions = log.events.filter { $0.matchID == match.matchID }.map(\.match.version)
        #expect(versions.filter { $0 > joinedVersion } == whileAway && Set(versions).count == versions.count, "versions \(versions)")
        #expect(log.events.map(\.kind).suffix(2) == [.turnPassed, .timedOut])
        let listed = try #require(try await GKTurnBasedMatch.loadMatches(in: back).first { $0.matchID == match.matchID })
        #expect(listed.version == current.version && listed.participants[1].matchOutcome == .timeExpired)
        await back.close()
        try await server.stop()
    }

    /// Two nodes on one PostgreSQL: players on different nodes play one match; a turn ended on one node reaches the
    /// device on the other, and two writes of the same version on the two nodes at once leave one winner.
    @Test func playersOnTwoNodesPlayOneMatchAndConcurrentWritesLeaveOneWinner() async throws {
        guard LiveServer.engines.contains("postgres") else { return }
        let nodeA = try LiveServer(engine: "postgres")
        try await nodeA.start()
        let nodeB = try LiveServer(database: nodeA.database)
        try await nodeB.start()
        let (ann, _) = try await Devices.signedUp(nodeA, alias: "Ann")
        let (bob, bobAccount) = try await Devices.signedUp(nodeB, alias: "Bob")
        let bobLog = TurnLog(bob)
        let match = try await GKTurnBasedMatch.find(for: Self.request(2), in: ann)
        let joined = try await GKTurnBasedMatch.find(for: Self.request(2), in: bob)
        #expect(joined.matchID == match.matchID, "auto-match finds the match another node started")

        let annOnA = try await GKTurnBasedMatch.load(withID: match.matchID, in: ann)
        try await annOnA.endTurn(withNextParticipants: [annOnA.participants[1]], turnTimeout: 0, match: Data("A".utf8))
        let passed = try await bobLog.next(.turnPassed, match.matchID, becameActive: true)
        #expect(try await passed.match.loadMatchData() == Data("A".utf8))

        // Bob's second device, on node A, reads the same version; both of his devices write at once.
        let bobElsewhere = Devices.make(nodeA)
        try await bobElsewhere.localPlayer.authenticate(.signIn(account: bobAccount, password: "password-Bob"))
        let onB = try await GKTurnBasedMatch.load(withID: match.matchID, in: bob)
        let onA = try await GKTurnBasedMatch.load(withID: match.matchID, in: bobElsewhere)
        let read = onA.version
        #expect(onB.version == read)
        let writes = [
            Task { try await onB.saveCurrentTurn(withMatch: Data("from B".utf8)) }, Task { try await onA.saveCurrentTurn(withMatch: Data("from A".utf8)) },
        ]
        var refused: [GKError.Code?] = []
        for write in writes {
            if case .failure(let error) = await write.result { refused.append((error as? GKError)?.code) }
        }
        #expect(refused == [.turnBasedInvalidTurn], "exactly one write of version \(read) wins")
        let stored = try await GKTurnBasedMatch.load(withID: match.matchID, in: ann)
        #expect(stored.version == read + 1)
        let data = try await stored.loadMatchData()
        #expect(data == Data("from B".utf8) || data == Data("from A".utf8))
        for device in [ann, bob, bobElsewhere] { await device.close() }
        try await nodeB.stop()
        try await nodeA.stop()
    }

    /// A participant's connection is cut at random points while the others play: pushes are lost in flight, the
    /// device reconnects again and again, and once the network heals it has every change, in order, once.
    @Test func aDeviceWhosePushesAreCutAtRandomStillConverges() async throws {
        let server = try LiveServer(engine: "sqlite")
        try await server.start()
        let proxy = try await FaultyTCPProxy.start(forwardingTo: "127.0.0.1", port: server.port, seed: 0x7EB5)
        let (a, _) = try await Devices.signedUp(server, alias: "Ann")
        let (c, _) = try await Devices.signedUp(server, alias: "Cat")
        let b = GKGameCenter(
            server: URL(string: "http://127.0.0.1:\(proxy.port)")!, bundleID: "com.example.tapper", environment: .sandbox,
            storageDirectory: FileManager.default.temporaryDirectory.appendingPathComponent("device-\(UUID().uuidString)"))
        let log = TurnLog(b)
        try await b.localPlayer.authenticate(.signUp(account: "bob-\(UUID().uuidString.prefix(8).lowercased())", password: "password-B", alias: "Bob"))
        let match = try await Self.matched([a, b, c])
        try await log.next(.joined, match.matchID)

        // Ann and Cat take twenty turns while Bob's connection is cut after every 150 to 1,200 bytes.
        proxy.setCutAfterBytes(150...1200)
        let acceptedBefore = proxy.acceptedConnections
        proxy.cutAllConnections()  // the limit applies to new connections: Bob's channel reconnects under it
        let cutBefore = proxy.cutConnections
        try await waitUntil("Bob's channel reconnected under the cuts", within: .seconds(30)) { proxy.acceptedConnections > acceptedBefore }
        var players = [a, c]
        for turn in 0..<20 {
            let current = try await GKTurnBasedMatch.load(withID: match.matchID, in: players[0])
            let next = try #require(current.participants.first { $0.playerID == players[1].localPlayer.playerID })
            try await current.endTurn(withNextParticipants: [next], turnTimeout: 0, match: Data("turn \(turn)".utf8))
            players.swapAt(0, 1)
        }
        let final = try await GKTurnBasedMatch.load(withID: match.matchID, in: a).version
        print("turn-based pushes under cuts: \(proxy.cutConnections - cutBefore) connections of Bob's cut during 20 turns")
        #expect(proxy.cutConnections > cutBefore, "the faults cut nothing while the turns were played")
        proxy.setCutAfterBytes(nil)
        proxy.cutAllConnections()
        try await waitUntil("Bob's device has version \(final)", within: .seconds(30)) {
            log.events.contains { $0.matchID == match.matchID && $0.match.version == final }
        }
        let versions = log.events.filter { $0.matchID == match.matchID }.map(\.match.version)
        #expect(versions == versions.sorted() && Set(versions).count == versions.count, "out of order or twice: \(versions)")
        #expect(Set(versions).isSuperset(of: (versions[0])...final), "a change is missing: \(versions)")
        #expect(try await GKTurnBasedMatch.loadMatches(in: b).first { $0.matchID == match.matchID }?.version == final)
        for device in [a, b, c] { await device.close() }
        await proxy.stop()
        try await server.stop()
    }

    /// Records what a turn-based matchmaking screen told its delegate.
    final class ScreenChoices: GKTurnBasedMatchmakerViewControllerDelegate, @unchecked Sendable {
        private let lock = NSLock()
        private var calls: [String] = []

        var log: [String] { lock.withLock { calls } }
        private func record(_ call: String) { lock.withLock { calls.append(call) } }

        func turnBasedMatchmakerViewController(_ viewController: GKTurnBasedMatchmakerViewController, didFind match: GKTurnBasedMatch) {
            record("found \(match.matchID)")
        }
        func turnBasedMatchmakerViewControllerWasCancelled(_ viewController: GKTurnBasedMatchmakerViewController) { record("cancelled") }
        func turnBasedMatchmakerViewController(_ viewController: GKTurnBasedMatchmakerViewController, didFailWithError error: any Error) {
            record("failed \((error as? GKError)?.code.rawValue ?? 0)")
        }
    }

    @Test func theMatchmakerScreenListsMatchesStartsOneAndPresentsTheTurnsPage() async throws {
        let server = try LiveServer(engine: "sqlite")
        try await server.start()
        let (a, _) = try await Devices.signedUp(server, alias: "Ann")
        let (b, _) = try await Devices.signedUp(server, alias: "Bob")
        let choices = ScreenChoices()
        let screen = GKTurnBasedMatchmakerViewController(matchRequest: Self.request(2), in: a)
        screen.turnBasedMatchmakerDelegate = choices
        #expect(screen.showExistingMatches)
        #expect(try await screen.loadExistingMatches().isEmpty)

        // A new match: Ann starts it from the screen, Bob's screen fills its open seat.
        await screen.startNewMatch()
        let started = try #require(try await GKTurnBasedMatch.loadMatches(in: a).first)
        #expect(choices.log == ["found \(started.matchID)"])
        let bobs = GKTurnBasedMatchmakerViewController(matchRequest: Self.request(2), in: b)
        bobs.turnBasedMatchmakerDelegate = choices
        await bobs.startNewMatch()
        #expect(choices.log.last == "found \(started.matchID)")

        // Existing matches: Ann's turn first; choosing one hands it to the game; without the list, none.
        let listed = try await screen.loadExistingMatches()
        #expect(listed.map(\.matchID) == [started.matchID] && listed[0].currentParticipant?.playerID == a.localPlayer.playerID)
        screen.choose(listed[0])
        #expect(choices.log.last == "found \(started.matchID)")
        screen.showExistingMatches = false
        #expect(try await screen.loadExistingMatches().isEmpty)

        // A request the SDK refuses: the delegate hears the failure.
        let wrong = GKTurnBasedMatchmakerViewController(matchRequest: GKMatchRequest(minPlayers: 2, maxPlayers: 17), in: a)
        wrong.turnBasedMatchmakerDelegate = choices
        await wrong.startNewMatch()
        #expect(choices.log.last == "failed \(GKError.Code.matchRequestInvalid.rawValue)")

        // Presented: the turns page, signed in as Ann; Done there cancels the screen.
        var browser = WebAppBrowser(server: server.url)
        let opened = try await browser.get(try await screen.presentationURL().path)
        #expect(opened.status == 303)
        let page = try await browser.get(try #require(opened.location))
        #expect(page.status == 200 && page.html.contains("With Bob and you"), "\(page.html)")
        let done = try await browser.post("/screen/done", [("csrf", try #require(page.field("csrf")))])
        #expect(done.status == 200)
        try await waitUntil("the delegate heard Done") { choices.log.last == "cancelled" }
        for device in [a, b] { await device.close() }
        try await server.stop()
    }
}
