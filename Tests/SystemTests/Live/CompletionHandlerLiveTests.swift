import Foundation
import NetworkFaultProxy
@testable import OpenGameKit
import Testing

/// Every completion-handler twin of an async SDK call, against a real server: each calls back exactly once, with the
/// result and no error, or (on the failures tried here) with the error, in Apple's argument order.
@Suite(.serialized, .timeLimit(.minutes(3))) struct CompletionHandlerLiveTests {
    /// What a twin called back with, each call recorded.
    final class Calls<Value>: @unchecked Sendable {
        private let lock = NSLock()
        private var values: [Value] = []

        func add(_ value: Value) { lock.withLock { values.append(value) } }
        var count: Int { lock.withLock { values.count } }
        var first: Value? { lock.withLock { values.first } }
    }

    /// Every twin started so far, by name, to check at the end that none called back twice.
    final class Ledger: @unchecked Sendable {
        private let lock = NSLock()
        private var counts: [(name: String, count: @Sendable () -> Int)] = []

        /// Starts a twin with `start`, waits for its first call back and returns what it was called with.
        func once<Value>(_ name: String, as: Value.Type = Value.self, _ start: (Calls<Value>) -> Void) async throws -> Value {
            let calls = Calls<Value>()
            lock.withLock { counts.append((name, { calls.count })) }
            start(calls)
            try await waitUntil("\(name) called back") { calls.count >= 1 }
            return try #require(calls.first)
        }

        /// The twins that called back other than exactly once, after a pause for late second calls.
        func notOnce() async throws -> [String] {
            try await Task.sleep(for: .milliseconds(300))
            return lock.withLock { counts.filter { $0.count() != 1 }.map { "\($0.name): \($0.count()) calls" } }
        }
    }

    typealias Failure = (any Error)?

    static func code(_ error: Failure) -> GKError.Code? { (error as? GKError)?.code }

    @Test func everyTwinCallsBackExactlyOnce() async throws {
        let server = try LiveServer(engine: "sqlite")
        try await server.start()
        let ledger = Ledger()
        let alice = Devices.make(server), bob = Devices.make(server)
        let suffix = UUID().uuidString.prefix(8).lowercased()
        for (device, name) in [(alice, "Alice"), (bob, "Bob")] {
            let credentials = GKCredentials.signUp(account: "\(name.lowercased())-\(suffix)", password: "password-1", alias: name)
            let error = try await ledger.once("authenticate", as: Failure.self) { calls in
                device.localPlayer.authenticate(credentials) { calls.add($0) }
            }
            #expect(error == nil)
        }
        let bobID = bob.localPlayer.playerID, aliceID = alice.localPlayer.playerID

        // The local player.
        #expect(try await ledger.once("setStatus", as: Failure.self) { calls in alice.localPlayer.setStatus("Here") { calls.add($0) } } == nil)
        #expect(try await ledger.once("setAlias", as: Failure.self) { calls in alice.localPlayer.setAlias("Alicia") { calls.add($0) } } == nil)
        let badAlias = try await ledger.once("setAlias (refused)", as: Failure.self) { calls in alice.localPlayer.setAlias("") { calls.add($0) } }
        #expect(Self.code(badAlias) == .invalidParameter)
        #expect(try await ledger.once("revokeOtherSessions", as: Failure.self) { calls in alice.localPlayer.revokeOtherSessions { calls.add($0) } } == nil)

        // Friends.
        let sent = try await ledger.once("GKFriendRequest.send", as: Failure.self) { calls in
            GKFriendRequest.send(to: [bobID], message: "Play?", in: alice) { calls.add($0) }
        }
        #expect(sent == nil)
        let (pending, pendingError) = try await ledger.once("loadPending", as: ([GKFriendRequest]?, Failure).self) { calls in
            GKFriendRequest.loadPending(in: bob) { calls.add(($0, $1)) }
        }
        #expect(pendingError == nil)
        let request = try #require(pending?.first)
        #expect(try await ledger.once("accept", as: Failure.self) { calls in request.accept { calls.add($0) } } == nil)
        let replayed = try await ledger.once("decline (already answered)", as: Failure.self) { calls in request.decline { calls.add($0) } }
        #expect(Self.code(replayed) == .invalidParameter)
        let (friends, friendsError) = try await ledger.once("loadFriends", as: ([String]?, Failure).self) { calls in
            alice.localPlayer.loadFriends { calls.add(($0, $1)) }
        }
        #expect(friends == [bobID] && friendsError == nil)
        let (players, playersError) = try await ledger.once("loadPlayers", as: ([GKPlayer]?, Failure).self) { calls in
            GKPlayer.loadPlayers(forIdentifiers: [aliceID, "G:nobody"], in: bob) { calls.add(($0, $1)) }
        }
        #expect(players?.map(\.alias) == ["Alicia"] && Self.code(playersError) == .invalidPlayer)

        // Achievements.
        let first = GKAchievement(identifier: "tapper.first", in: alice)
        first.percentComplete = 100
        #expect(try await ledger.once("GKAchievement.report", as: Failure.self) { calls in first.report { calls.add($0) } } == nil)
        let secret = GKAchievement(identifier: "tapper.secret", in: alice)
        secret.percentComplete = 10
        #expect(try await ledger.once("GKAchievement.report([])", as: Failure.self) { calls in GKAchievement.report([secret]) { calls.add($0) } } == nil)
        let (achievements, achievementsError) = try await ledger.once("loadAchievements", as: ([GKAchievement]?, Failure).self) { calls in
            GKAchievement.loadAchievements(in: alice) { calls.add(($0, $1)) }
        }
        #expect(Set(achievements?.map(\.identifier) ?? []) == ["tapper.first", "tapper.secret"] && achievementsError == nil)
        let (points, pointsError) = try await ledger.once("loadPoints", as: (Int?, Failure).self) { calls in
            GKAchievement.loadPoints(in: alice) { calls.add(($0, $1)) }
        }
        #expect(points == 10 && pointsError == nil)
        let (completed, completedError) = try await ledger.once(
            "loadCompletedAchievements", as: ((achievements: [GKAchievement], points: Int)?, Failure).self
        ) { calls in GKAchievement.loadCompletedAchievements(forPlayer: aliceID, in: bob) { calls.add(($0, $1)) } }
        #expect(completed?.points == 10 && completedError == nil)
        let (descriptions, descriptionsError) = try await ledger.once("loadAchievementDescriptions", as: ([GKAchievementDescription]?, Failure).self) {
            calls in GKAchievementDescription.loadAchievementDescriptions(in: alice) { calls.add(($0, $1)) }
        }
        #expect(descriptionsError == nil)
        let withImage = try #require(descriptions?.first { $0.identifier == "tapper.first" })
        let (image, imageError) = try await ledger.once("loadImage", as: (Data?, Failure).self) { calls in withImage.loadImage { calls.add(($0, $1)) } }
        #expect(image?.prefix(4) == Data([0x89, 0x50, 0x4E, 0x47]) && imageError == nil)
        let noImage = try #require(descriptions?.first { $0.identifier == "tapper.secret" })
        let (missing, missingError) = try await ledger.once("loadImage (none)", as: (Data?, Failure).self) { calls in noImage.loadImage { calls.add(($0, $1)) }
        }
        #expect(missing == nil && Self.code(missingError) == .invalidParameter)
        #expect(try await ledger.once("resetAchievements", as: Failure.self) { calls in GKAchievement.resetAchievements(in: alice) { calls.add($0) } } == nil)

        // Leaderboards.
        let score = GKScore(in: alice)
        score.value = 7
        #expect(try await ledger.once("GKScore.report", as: Failure.self) { calls in score.report { calls.add($0) } } == nil)
        let second = GKScore(category: "tapper.sprint", in: alice)
        second.value = 900
        #expect(try await ledger.once("GKScore.report([])", as: Failure.self) { calls in GKScore.report([second]) { calls.add($0) } } == nil)
        let (scores, scoresError) = try await ledger.once("loadScores", as: ([GKScore]?, Failure).self) { calls in
            GKLeaderboard(in: alice).loadScores { calls.add(($0, $1)) }
        }
        #expect(scores?.map(\.value) == [7] && scoresError == nil)
        let (categories, titles, categoriesError) = try await ledger.once("loadCategories", as: ([String]?, [String]?, Failure).self) { calls in
            GKLeaderboard.loadCategories(in: alice) { calls.add(($0, $1, $2)) }
        }
        #expect(categories?.contains("tapper.taps") == true && titles?.count == categories?.count && categoriesError == nil)

        // Matchmaking: activity, an invitation declined, a match, players added (cancelled).
        let (activity, activityError) = try await ledger.once("queryActivity", as: (Int, Failure).self) { calls in
            alice.matchmaker.queryActivity { calls.add(($0, $1)) }
        }
        #expect(activity >= 0 && activityError == nil)
        let (groupActivity, groupError) = try await ledger.once("queryPlayerGroupActivity", as: (Int, Failure).self) { calls in
            alice.matchmaker.queryPlayerGroupActivity(3) { calls.add(($0, $1)) }
        }
        #expect(groupActivity >= 0 && groupError == nil)
        let invites = InviteInbox()
        invites.watch(bob)
        let inviting = GKMatchRequest(minPlayers: 2, maxPlayers: 2)
        inviting.playersToInvite = [bobID]
        let invitingTask = Task { try await alice.matchmaker.findMatch(for: inviting) }
        let invite = try await invites.next()
        let (hostedPlayers, hostedError) = try await ledger.once("findPlayers(for:) (a relayed invitation)", as: ([String]?, Failure).self) { calls in
            bob.matchmaker.findPlayers(for: invite) { calls.add(($0, $1)) }
        }
        #expect(hostedPlayers == nil && Self.code(hostedError) == .invalidParameter)
        #expect(try await ledger.once("GKInvite.decline", as: Failure.self) { calls in invite.decline { calls.add($0) } } == nil)
        alice.matchmaker.cancel()
        _ = await invitingTask.result

        let aliceMatch = Calls<(GKMatch?, Failure)>()
        let pair = GKMatchRequest(minPlayers: 2, maxPlayers: 2)
        alice.matchmaker.findMatch(for: pair) { aliceMatch.add(($0, $1)) }
        let (match, matchError) = try await ledger.once("findMatch", as: (GKMatch?, Failure).self) { calls in
            bob.matchmaker.findMatch(for: pair) { calls.add(($0, $1)) }
        }
        #expect(matchError == nil)
        try await waitUntil("Alice's findMatch called back") { aliceMatch.count == 1 }
        let bobsMatch = try #require(match)
        let adding = try await ledger.once("addPlayers (cancelled)", as: Failure.self) { calls in
            bob.matchmaker.addPlayers(to: bobsMatch, matchRequest: GKMatchRequest(minPlayers: 2, maxPlayers: 3)) { calls.add($0) }
            Task {
                try await waitUntil("the server has the request to add players") { bob.matchmaker.waitingRequests.sent == 1 }
                bob.matchmaker.cancel()
            }
        }
        #expect(Self.code(adding) == .cancelled)
        bobsMatch.disconnect()
        aliceMatch.first?.0?.disconnect()

        // Friendship ended, signed out, closed.
        #expect(try await ledger.once("removeFriend", as: Failure.self) { calls in GKFriendRequest.removeFriend(bobID, in: alice) { calls.add($0) } } == nil)
        let byName = try await ledger.once("GKFriendRequest.send(toAccounts:)", as: Failure.self) { calls in
            GKFriendRequest.send(toAccounts: ["bob-\(suffix)"], message: nil, in: alice) { calls.add($0) }
        }
        #expect(byName == nil)
        _ = try await ledger.once("signOut", as: Void.self) { calls in alice.localPlayer.signOut { calls.add(()) } }
        #expect(!alice.localPlayer.isAuthenticated)
        let signedOut = try await ledger.once("loadFriends (signed out)", as: ([String]?, Failure).self) { calls in
            alice.localPlayer.loadFriends { calls.add(($0, $1)) }
        }
        #expect(signedOut.0 == nil && Self.code(signedOut.1) == .notAuthenticated)
        _ = try await ledger.once("close", as: Void.self) { calls in bob.close { calls.add(()) } }

        #expect(try await ledger.notOnce() == [])
        try await server.stop()
    }
}
