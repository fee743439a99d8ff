import Foundation
import NetworkFaultProxy
import OpenGameKit
import Testing

/// Challenges through the SDK against a real server process, on every engine: three devices from the invitation to
/// the winner (`tapper.beat-my-taps` in `games/tapper.yaml`: a classic board, 3 attempts), with the events each hears.
@Suite(.serialized, .timeLimit(.minutes(3))) struct ChallengesLiveTests {
    /// Every challenge event `device` hears from now on, kept in order.
    final class ChallengeLog: @unchecked Sendable {
        private let lock = NSLock()
        private var seen: [GKChallengeEvent] = []
        private var task: Task<Void, Never>?

        init(_ device: GKGameCenter) {
            let events = device.events
            task = Task { [weak self] in
                for await event in events {
                    if case .challenge(let challenge) = event { self?.lock.withLock { self?.seen.append(challenge) } }
                }
            }
        }

        deinit { task?.cancel() }

        var events: [GKChallengeEvent] { lock.withLock { seen } }

        /// Waits for an event of `kind` (by `playerID`, when given); returns it.
        @discardableResult
        func next(_ kind: GKChallengeEvent.Kind, by playerID: String? = nil) async throws -> GKChallengeEvent {
            var found: GKChallengeEvent?
            try await waitUntil("a \(kind) challenge event") {
                found = events.last { $0.kind == kind && (playerID == nil || $0.playerID == playerID) }
                return found != nil
            }
            return found!
        }
    }

    @Test(arguments: LiveServer.engines)
    func threeDevicesPlayAChallengeFromInvitationToWinner(engine: String) async throws {
        let server = try LiveServer(engine: engine)
        try await server.start(extraArguments: ["--admin-key", LeaderboardsLiveTests.adminKey, "--test-clock"])
        let (ann, _) = try await Devices.signedUp(server, alias: "Ann")
        let (bob, _) = try await Devices.signedUp(server, alias: "Bob")
        let (cleo, _) = try await Devices.signedUp(server, alias: "Cleo")
        try await MatchmakingLiveTests.befriend(ann, bob)
        let (annLog, bobLog, cleoLog) = (ChallengeLog(ann), ChallengeLog(bob), ChallengeLog(cleo))
        let start = Date().addingTimeInterval(2 * 86_400)
        try await LeaderboardsLiveTests.freezeClock(server, at: start)

        let definitions = try await GKChallengeDefinition.all(in: ann)
        let beat = try #require(definitions.first { $0.identifier == "tapper.beat-my-taps" })
        #expect(beat.title == "Beat my taps" && beat.attempts == 3 && !beat.isRepeatable && beat.leaderboard.category == "tapper.taps")
        #expect(beat.durationOptions == [3600, 86_400, 3 * 86_400, 7 * 86_400])
        #expect(definitions.first { $0.identifier == "tapper.daily-duel" }?.durationOptions.isEmpty == true)

        // Ann challenges her friend Bob for an hour; Cleo joins with the code Ann shared.
        let created = try await GKChallenge.create(beat, duration: 3600, inviting: [bob.localPlayer.playerID])
        #expect(created.endDate.timeIntervalSince(created.creationDate) == 3600 && created.state == .open)
        let invitation = try await bobLog.next(.invited)
        #expect(invitation.playerID == ann.localPlayer.playerID && invitation.challenge.challengeID == created.challengeID)
        let joined = try await invitation.challenge.join()
        #expect(joined.participants.first { $0.playerID == bob.localPlayer.playerID }?.status == .joined)
        _ = try await GKChallenge.join(code: created.code.lowercased(), in: cleo)
        try await annLog.next(.joined, by: cleo.localPlayer.playerID)

        // Scores: each counted one reaches every participant; Cleo passing Ann tells Ann she was overtaken.
        try await LeaderboardsLiveTests.report(ann, 40, "tapper.taps")
        try await cleoLog.next(.score, by: ann.localPlayer.playerID)
        try await LeaderboardsLiveTests.report(cleo, 55, "tapper.taps")
        let overtaken = try await annLog.next(.overtaken, by: cleo.localPlayer.playerID)
        #expect(overtaken.challenge.participants.map(\.alias).prefix(2) == ["Cleo", "Ann"])
        try await LeaderboardsLiveTests.report(bob, 70, "tapper.taps")
        try await annLog.next(.overtaken, by: bob.localPlayer.playerID)
        try await cleoLog.next(.overtaken, by: bob.localPlayer.playerID)
        let mine = try #require(try await GKChallenge.loadChallenges(in: bob).first)
        #expect(mine.challengeID == created.challengeID && mine.participants.map(\.rank) == [1, 2, 3])
        #expect(mine.participants[0].formattedValue == "70 taps" && mine.participants[0].attemptsLeft == 2)

        // The end: everyone hears Bob won, and a rematch invites the same players.
        try await LeaderboardsLiveTests.freezeClock(server, at: start.addingTimeInterval(3600))
        for log in [annLog, bobLog, cleoLog] {
            let ended = try await log.next(.ended)
            #expect(ended.challenge.state == .ended && ended.challenge.winners == [bob.localPlayer.playerID])
        }
        let rematch = try await mine.rematch()
        #expect(rematch.rematchOf == created.challengeID && rematch.participants.filter { $0.status == .invited }.count == 2)
        let again = try await annLog.next(.invited, by: bob.localPlayer.playerID)
        let declined = try await again.challenge.leave()
        #expect(declined.participants.first { $0.playerID == ann.localPlayer.playerID }?.status == .left)
        #expect(try await rematch.reload().participants.last?.alias == "Ann")

        // A code nobody has is a clear error.
        let error = await #expect(throws: GKError.self) { try await GKChallenge.join(code: "ZZZZ-ZZZZ", in: cleo) }
        #expect(error?.code == .challengeInvalid)
        for device in [ann, bob, cleo] { await device.close() }
        try await server.stop()
    }
}
