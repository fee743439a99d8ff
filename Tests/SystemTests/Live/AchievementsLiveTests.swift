import Foundation
import NetworkFaultProxy
import OpenGameKit
import Testing

/// Achievements through the SDK against real server processes, on every engine.
@Suite(.serialized, .timeLimit(.minutes(3))) struct AchievementsLiveTests {
    @Test(arguments: LiveServer.engines)
    func reportingFiftyThenThirtyKeepsFifty(engine: String) async throws {
        let server = try LiveServer(engine: engine)
        try await server.start()
        let (device, _) = try await Devices.signedUp(server, alias: "Ach")
        let achievement = GKAchievement(identifier: "tapper.first", in: device)
        achievement.percentComplete = 50
        try await achievement.report()
        achievement.percentComplete = 30
        try await achievement.report()
        #expect(achievement.percentComplete == 50, "after a report the object holds what the server stored")
        let loaded = try await GKAchievement.loadAchievements(in: device)
        #expect(loaded.map(\.identifier) == ["tapper.first"])
        #expect(loaded[0].percentComplete == 50)
        #expect(!loaded[0].isCompleted)
        #expect(loaded[0].lastReportedDate != nil)

        let bad = GKAchievement(identifier: "tapper.first", in: device)
        bad.percentComplete = .nan
        let error = await #expect(throws: GKError.self) { try await bad.report() }
        #expect(error?.code == .invalidParameter)
        let unknown = GKAchievement(identifier: "tapper.nope", in: device)
        let unknownError = await #expect(throws: GKError.self) { try await unknown.report() }
        #expect(unknownError?.code == .invalidParameter)
        #expect(unknownError?.message.contains("tapper.nope") == true)
        #expect(unknownError?.queued == false)
        try await server.stop()
    }

    @Test(arguments: LiveServer.engines)
    func hiddenIsRevealedAtZeroAndResetHidesItAgain(engine: String) async throws {
        let server = try LiveServer(engine: engine)
        try await server.start()
        let (device, _) = try await Devices.signedUp(server, alias: "Hid")
        func secret() async throws -> GKAchievementDescription? {
            try await GKAchievementDescription.loadAchievementDescriptions(in: device).first { $0.identifier == "tapper.secret" }
        }
        #expect(try await secret()?.title == "")
        #expect(try await secret()?.isHidden == true)
        let achievement = GKAchievement(identifier: "tapper.secret", in: device)
        achievement.percentComplete = 0
        try await achievement.report()
        #expect(try await secret()?.title == "Secret")
        #expect(try await secret()?.maximumPoints == 50)
        try await GKAchievement.resetAchievements(in: device)
        #expect(try await secret()?.title == "")
        #expect(try await GKAchievement.loadAchievements(in: device).isEmpty)
        try await server.stop()
    }

    @Test(arguments: LiveServer.engines)
    func completingPushesAnEventToThePlayersOtherDevice(engine: String) async throws {
        let server = try LiveServer(engine: engine)
        try await server.start()
        let (phone, account) = try await Devices.signedUp(server, alias: "Two")
        let tablet = Devices.make(server)
        try await tablet.localPlayer.authenticate(.signIn(account: account, password: "password-Two"))
        let events = tablet.events
        let achievement = GKAchievement(identifier: "tapper.first", in: phone)
        achievement.percentComplete = 100
        try await achievement.report()
        #expect(achievement.isCompleted)
        #expect(achievement.completedDate != nil)
        let identifier = try await nextEvent(events) { event -> String? in
            if case .achievementCompleted(let identifier) = event { return identifier }
            return nil
        }
        #expect(identifier == "tapper.first")
        #expect(try await GKAchievement.loadPoints(in: tablet) == 10)

        let descriptions = try await GKAchievementDescription.loadAchievementDescriptions(in: tablet)
        let first = try #require(descriptions.first { $0.identifier == "tapper.first" })
        let image = try await first.loadImage()
        #expect(image.prefix(4) == Data([0x89, 0x50, 0x4E, 0x47]))
        #expect(first.image == image)
        #expect(GKAchievementDescription.incompleteAchievementImage.prefix(4) == Data([0x89, 0x50, 0x4E, 0x47]))
        #expect(GKAchievementDescription.placeholderCompletedAchievementImage.prefix(4) == Data([0x89, 0x50, 0x4E, 0x47]))
        #expect(GKAchievementDescription.incompleteAchievementImage != GKAchievementDescription.placeholderCompletedAchievementImage)
        try await server.stop()
    }

    @Test(arguments: LiveServer.engines)
    func aReportMadeWhileTheServerIsDownArrivesExactlyOnceAfterRestarts(engine: String) async throws {
        let server = try LiveServer(engine: engine)
        try await server.start()
        let storage = FileManager.default.temporaryDirectory.appendingPathComponent("device-\(UUID().uuidString)")
        let device = Devices.make(server, storage: storage)
        let account = "out-\(UUID().uuidString.prefix(8))"
        try await device.localPlayer.authenticate(.signUp(account: account, password: "password-1", alias: "Out"))
        try await server.stop()

        let achievement = GKAchievement(identifier: "tapper.first", in: device)
        achievement.percentComplete = 100
        let error = await #expect(throws: GKError.self) { try await achievement.report() }
        #expect(error?.code == .communicationsFailure)
        #expect(error?.queued == true)
        await device.close()

        // The server comes back; the game is started again and resumes its session: the outbox is sent.
        try await server.start()
        let watcher = Devices.make(server)
        try await watcher.localPlayer.authenticate(.signIn(account: account, password: "password-1"))
        let watcherEvents = watcher.events
        let restarted = Devices.make(server, storage: storage)
        try await restarted.localPlayer.authenticate(.stored)
        let completed = try await nextEvent(watcherEvents, within: 15) { event -> String? in
            if case .achievementCompleted(let identifier) = event { return identifier }
            return nil
        }
        #expect(completed == "tapper.first")
        try await waitUntil("the outbox is empty") {
            ((try? FileManager.default.contentsOfDirectory(atPath: storage.appendingPathComponent("outbox").path)) ?? []).isEmpty
        }
        let loaded = try await GKAchievement.loadAchievements(in: restarted)
        #expect(loaded.map(\.percentComplete) == [100])
        // Exactly once: no second completion event comes.
        let second = try? await nextEvent(watcherEvents, within: 2) { event -> String? in
            if case .achievementCompleted(let identifier) = event { return identifier }
            return nil
        }
        #expect(second == nil)
        try await server.stop()
    }

    @Test func achievementsArchiveAndRestore() throws {
        let device = GKGameCenter(
            server: URL(string: "http://127.0.0.1:1")!, bundleID: "com.example.tapper",
            storageDirectory: FileManager.default.temporaryDirectory.appendingPathComponent("arch-\(UUID().uuidString)"))
        let achievement = GKAchievement(identifier: "tapper.first", in: device)
        achievement.percentComplete = 42.5
        let data = try JSONEncoder().encode(achievement)
        let decoder = JSONDecoder()
        decoder.userInfo[GKGameCenter.codingUserInfoKey] = device
        let restored = try decoder.decode(GKAchievement.self, from: data)
        #expect(restored.identifier == "tapper.first")
        #expect(restored.percentComplete == 42.5)
        #expect(!restored.isCompleted)
    }
}
