import Foundation
import NetworkFaultProxy
import OpenGameKit
import Testing

/// A load that fails after an earlier success keeps the last good data: the error carries it in `partialResult`, and
/// the completion-handler form passes it with the error (as loads of players and scores do).
@Suite(.serialized, .timeLimit(.minutes(3))) struct PartialResultLiveTests {
    /// Calls `start` with a handler and waits for its first call.
    static func firstCall<Value: Sendable>(_ what: String, _ start: (@escaping @Sendable (Value) -> Void) -> Void) async throws -> Value {
        let received = LockedValue<Value?>(nil)
        start { value in received.set(value) }
        try await waitUntil("\(what) called back") { received.get() != nil }
        return try #require(received.get())
    }

    @Test func achievementsDescriptionsFriendsPlayersAndCategoriesKeepTheLastGoodLoad() async throws {
        let server = try LiveServer(engine: "sqlite")
        try await server.start()
        let (alice, _) = try await Devices.signedUp(server, alias: "Alice")
        let (bob, _) = try await Devices.signedUp(server, alias: "Bob")
        try await GKFriendRequest.send(to: [bob.localPlayer.playerID], message: nil, in: alice)
        try await #require(try await GKFriendRequest.loadPending(in: bob).first).accept()
        let achievement = GKAchievement(identifier: "tapper.first", in: alice)
        achievement.percentComplete = 40
        try await achievement.report()

        let achievements = try await GKAchievement.loadAchievements(in: alice)
        let descriptions = try await GKAchievementDescription.loadAchievementDescriptions(in: alice)
        let friends = try await alice.localPlayer.loadFriends()
        let categories = try await GKLeaderboard.loadCategories(in: alice)
        let bobID = bob.localPlayer.playerID, aliceID = alice.localPlayer.playerID
        #expect(try await GKPlayer.loadPlayers(forIdentifiers: [bobID], in: alice).map(\.alias) == ["Bob"])
        #expect(achievements.map(\.percentComplete) == [40])
        #expect(friends == [bob.localPlayer.playerID])
        #expect(categories.categories.contains("tapper.taps"))
        try await server.stop()

        let achievementsError = await #expect(throws: GKError.self) { try await GKAchievement.loadAchievements(in: alice) }
        #expect(achievementsError?.code == .communicationsFailure)
        #expect(achievementsError?.partialResult(as: [GKAchievement].self)?.map(\.identifier) == ["tapper.first"])
        #expect(achievementsError?.partialResult(as: [GKAchievement].self)?.map(\.percentComplete) == [40])

        let descriptionsError = await #expect(throws: GKError.self) { try await GKAchievementDescription.loadAchievementDescriptions(in: alice) }
        #expect(descriptionsError?.code == .communicationsFailure)
        #expect(descriptionsError?.partialResult(as: [GKAchievementDescription].self)?.map(\.identifier) == descriptions.map(\.identifier))

        let friendsError = await #expect(throws: GKError.self) { try await alice.localPlayer.loadFriends() }
        #expect(friendsError?.code == .communicationsFailure)
        #expect(friendsError?.partialResult(as: [String].self) == friends)

        let categoriesError = await #expect(throws: GKError.self) { try await GKLeaderboard.loadCategories(in: alice) }
        #expect(categoriesError?.code == .communicationsFailure)
        let keptCategories = categoriesError?.partialResult(as: (categories: [String], titles: [String]).self)
        #expect(keptCategories?.categories == categories.categories && keptCategories?.titles == categories.titles)

        // Players: those this device loaded for Alice, as she saw them (Bob a friend), in the order asked; Alice herself
        // was never loaded by id here, so she is left out — the seed's partial array.
        let playersError = await #expect(throws: GKError.self) { try await GKPlayer.loadPlayers(forIdentifiers: [aliceID, bobID], in: alice) }
        #expect(playersError?.code == .communicationsFailure)
        let keptPlayers = playersError?.partialResult(as: [GKPlayer].self)
        #expect(keptPlayers?.map(\.playerID) == [bobID] && keptPlayers?.first?.alias == "Bob" && keptPlayers?.first?.isFriend == true)

        // The completion-handler forms pass the kept data with the error.
        let (twinAchievements, twinAchievementsError) = try await Self.firstCall("loadAchievements") {
            (handler: @escaping @Sendable (([GKAchievement]?, GKError?)) -> Void) in
            GKAchievement.loadAchievements(in: alice) { handler(($0, $1 as? GKError)) }
        }
        #expect(twinAchievements?.map(\.identifier) == ["tapper.first"] && twinAchievementsError?.code == .communicationsFailure)
        let (twinDescriptions, twinDescriptionsError) = try await Self.firstCall("loadAchievementDescriptions") {
            (handler: @escaping @Sendable (([GKAchievementDescription]?, GKError?)) -> Void) in
            GKAchievementDescription.loadAchievementDescriptions(in: alice) { handler(($0, $1 as? GKError)) }
        }
        #expect(twinDescriptions?.count == descriptions.count && twinDescriptionsError?.code == .communicationsFailure)
        let (twinFriends, twinFriendsError) = try await Self.firstCall("loadFriends") { (handler: @escaping @Sendable (([String]?, GKError?)) -> Void) in
            alice.localPlayer.loadFriends { handler(($0, $1 as? GKError)) }
        }
        #expect(twinFriends == friends && twinFriendsError?.code == .communicationsFailure)
        let (twinPlayers, twinPlayersError) = try await Self.firstCall("loadPlayers") { (handler: @escaping @Sendable (([GKPlayer]?, GKError?)) -> Void) in
            GKPlayer.loadPlayers(forIdentifiers: [bobID], in: alice) { handler(($0, $1 as? GKError)) }
        }
        #expect(twinPlayers?.map(\.alias) == ["Bob"] && twinPlayersError?.code == .communicationsFailure)
        let (twinCategories, twinTitles, twinCategoriesError) = try await Self.firstCall("loadCategories") {
            (handler: @escaping @Sendable (([String]?, [String]?, GKError?)) -> Void) in
            GKLeaderboard.loadCategories(in: alice) { handler(($0, $1, $2 as? GKError)) }
        }
        #expect(twinCategories == categories.categories && twinTitles == categories.titles && twinCategoriesError?.code == .communicationsFailure)

        // Another player on a device that never loaded has nothing kept.
        let neverLoaded = await #expect(throws: GKError.self) { try await GKAchievement.loadAchievements(in: bob) }
        #expect(neverLoaded?.code == .communicationsFailure)
        #expect(neverLoaded?.partialResult == nil)
        let noPlayers = await #expect(throws: GKError.self) { try await GKPlayer.loadPlayers(forIdentifiers: [aliceID], in: bob) }
        #expect(noPlayers?.code == .communicationsFailure && noPlayers?.partialResult == nil)
    }
}

/// A value behind a lock, for handlers called from other tasks.
final class LockedValue<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value

    init(_ value: Value) { self.value = value }
    func get() -> Value { lock.withLock { value } }
    func set(_ newValue: Value) { lock.withLock { value = newValue } }
}
