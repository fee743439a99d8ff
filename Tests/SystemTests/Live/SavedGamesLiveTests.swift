import Foundation
import FoundationNetworking
import NetworkFaultProxy
import OpenGameKit
import Synchronization
import Testing

/// Saved games through the SDK against real server processes, on every engine: two devices of one player saving the
/// same save (a conflict kept, told once, resolved in one step), a large save byte for byte, and the limits.
@Suite(.serialized, .timeLimit(.minutes(4))) struct SavedGamesLiveTests {
    /// Records the GameKit listener calls; a `GKLocalPlayerListener`, as games adopt it (one registration for saves and
    /// turn-based events).
    final class Listener: GKLocalPlayerListener, @unchecked Sendable {
        private let lock = NSLock()
        private var calls: [String] = []

        var log: [String] { lock.withLock { calls } }

        func player(_ playerID: String, didModifySavedGame savedGame: GKSavedGame) {
            lock.withLock { calls.append("modified \(savedGame.name ?? "?") \(savedGame.versionID)") }
        }
        func player(_ playerID: String, hasConflictingSavedGames savedGames: [GKSavedGame]) {
            lock.withLock { calls.append("conflict \(savedGames.map(\.versionID).sorted().joined(separator: ","))") }
        }
    }

    /// The phone and the tablet of one player.
    static func twoDevices(_ server: LiveServer) async throws -> (GKGameCenter, GKGameCenter) {
        let (phone, account) = try await Devices.signedUp(server, alias: "Sam")
        let tablet = Devices.make(server)
        try await tablet.localPlayer.authenticate(.signIn(account: account, password: "password-Sam"))
        return (phone, tablet)
    }

    @Test(arguments: LiveServer.engines)
    func twoDevicesSavingTheSameSaveKeepBothAndResolveInOneStep(engine: String) async throws {
        let server = try LiveServer(engine: engine)
        try await server.start()
        let (phone, tablet) = try await Self.twoDevices(server)
        let (phoneHears, tabletHears) = (Listener(), Listener())
        phone.localPlayer.register(phoneHears)
        tablet.localPlayer.register(tabletHears)

        let first = try await phone.localPlayer.saveGameData(Data("level 1".utf8), withName: "slot")
        #expect(first.name == "slot" && first.size == 7)
        try await waitUntil("the tablet heard of the phone's save") { tabletHears.log == ["modified slot \(first.versionID)"] }
        let seen = try await tablet.localPlayer.fetchSavedGames()
        #expect(seen.map(\.versionID) == [first.versionID])
        #expect(try await seen[0].loadData() == Data("level 1".utf8))

        // The phone saves on; the tablet, which loaded only the first version (hearing of the second is not loading
        // it), saves too: no silent last-writer-wins.
        let phones = try await phone.localPlayer.saveGameData(Data("level 2 on the phone".utf8), withName: "slot")
        let tablets = try await tablet.localPlayer.saveGameData(Data("level 2 on the tablet".utf8), withName: "slot")
        let conflict = try await phone.localPlayer.fetchSavedGames()
        #expect(Set(conflict.map(\.versionID)) == [phones.versionID, tablets.versionID], "both versions kept")
        #expect(Set(try await conflict.asyncMap { try await $0.loadData() }) == [Data("level 2 on the phone".utf8), Data("level 2 on the tablet".utf8)])
        let both = "conflict \([phones.versionID, tablets.versionID].sorted().joined(separator: ","))"
        try await waitUntil("each device heard of the conflict") { phoneHears.log.contains(both) && tabletHears.log.contains(both) }
        #expect(phoneHears.log.filter { $0 == both }.count == 1 && tabletHears.log.filter { $0 == both }.count == 1, "told once")

        // One step ends it, on every device; resolving again with the old list (play-games-plugin-for-unity #1204's
        // loop) does not bring the conflict back.
        let resolved = try await phone.localPlayer.resolveConflictingSavedGames(conflict, with: Data("level 2, merged".utf8))
        #expect(resolved.count == 1)
        #expect(try await resolved[0].loadData() == Data("level 2, merged".utf8))
        try await waitUntil("the tablet heard the resolution") { tabletHears.log.last == "modified slot \(resolved[0].versionID)" }
        let again = try await phone.localPlayer.resolveConflictingSavedGames(conflict, with: Data("level 2, merged".utf8))
        #expect(again.count == 1)
        let onTablet = try await tablet.localPlayer.fetchSavedGames()
        #expect(onTablet.count == 1 && onTablet[0].versionID == again[0].versionID)
        #expect(try await onTablet[0].loadData() == Data("level 2, merged".utf8))

        // The tablet's next save is based on what it fetched: no conflict.
        _ = try await tablet.localPlayer.saveGameData(Data("level 3".utf8), withName: "slot")
        #expect(try await tablet.localPlayer.fetchSavedGames().count == 1)
        // The phone heard of it but saves without loading it: a conflict, not an overwrite.
        try await waitUntil("the phone heard of the tablet's save") { phoneHears.log.last?.hasPrefix("modified slot") == true }
        _ = try await phone.localPlayer.saveGameData(Data("level 3, unaware".utf8), withName: "slot")
        #expect(try await tablet.localPlayer.fetchSavedGames().count == 2)

        try await phone.localPlayer.deleteSavedGames(withName: "slot")
        #expect(try await tablet.localPlayer.fetchSavedGames().isEmpty)
        let gone = await #expect(throws: GKError.self) { try await phone.localPlayer.deleteSavedGames(withName: "slot") }
        #expect(gone?.code == .invalidParameter)
        await phone.close()
        await tablet.close()
        _ = try await server.stop()
    }

    /// How many requests the server answered on its upload routes (start, chunk, finish), from its `/metrics`.
    static func uploadRequests(on server: LiveServer) async throws -> Int {
        var request = URLRequest(url: server.url.appendingPathComponent("metrics"))
        request.setValue("Bearer \(LeaderboardsLiveTests.adminKey)", forHTTPHeaderField: "Authorization")
        let text = String(decoding: try await URLSession.shared.data(for: request).0, as: UTF8.self)
        return text.split(separator: "\n").filter { $0.hasPrefix("http_request_duration_seconds_count{") && $0.contains("saved-games/uploads") }
            .reduce(0) { $0 + Int(Double($1.split(separator: " ").last ?? "") ?? 0) }
    }

    @Test(arguments: LiveServer.engines)
    func aLargeSaveRoundTripsByteForByteAndTheLimitsAreRefusedWithTheirNumbers(engine: String) async throws {
        let server = try LiveServer(engine: engine)
        try await server.start(extraArguments: ["--admin-key", LeaderboardsLiveTests.adminKey])
        let (phone, tablet) = try await Self.twoDevices(server)
        // 32 MiB, the default most, in 32 chunks; every byte position distinct modulo 251.
        let large = Data((0..<(32 << 20)).map { UInt8(truncatingIfNeeded: $0 % 251) })
        let saved = try await phone.localPlayer.saveGameData(large, withName: "world")
        #expect(saved.size == Int64(large.count))
        let fetched = try #require(try await tablet.localPlayer.fetchSavedGames().first)
        #expect(try await fetched.loadData() == large)
        // Up to 1 MiB a save goes whole in one request, its fields (this name beyond ASCII) in a header.
        let oneMiB = Data((0..<(1 << 20)).map { UInt8(truncatingIfNeeded: $0 % 241) })
        let requestsBefore = try await Self.uploadRequests(on: server)
        #expect(requestsBefore >= 34, "the 32 MiB save went up in chunks: start, 32 chunks, finish")
        let castle = try await phone.localPlayer.saveGameData(oneMiB, withName: "Château 🏰")
        #expect(try await Self.uploadRequests(on: server) == requestsBefore + 1, "one request")
        let fetchedCastle = try #require(try await tablet.localPlayer.fetchSavedGames().first { $0.name == "Château 🏰" })
        #expect(fetchedCastle.versionID == castle.versionID)
        #expect(try await fetchedCastle.loadData() == oneMiB)

        let tooLarge = await #expect(throws: GKError.self) {
            try await phone.localPlayer.saveGameData(large + Data([0]), withName: "bigger")
        }
        #expect(tooLarge?.code == .invalidParameter && tooLarge?.message.contains("33554432") == true)
        let longName = await #expect(throws: GKError.self) {
            try await phone.localPlayer.saveGameData(Data("x".utf8), withName: String(repeating: "n", count: 256))
        }
        #expect(longName?.code == .invalidParameter && longName?.message.contains("255") == true)
        #expect(Set(try await phone.localPlayer.fetchSavedGames().map(\.versionID)) == [saved.versionID, castle.versionID], "nothing else was saved")
        await phone.close()
        await tablet.close()
        _ = try await server.stop()
    }

    @Test(arguments: LiveServer.engines)
    func anUploadCutAtRandomPointsResumesAndAServerKilledMidUploadKeepsTheOldVersionUntilTheKeptSaveGoesUp(engine: String) async throws {
        let server = try LiveServer(engine: engine)
        try await server.start()
        let (phone, account) = try await Devices.signedUp(server, alias: "Sam")
        let old = try await phone.localPlayer.saveGameData(Data("the old version".utf8), withName: "slot")

        // The tablet's connections are cut after every 200 KB to 2.5 MB: each cut chunk is sent again, the rest kept.
        let proxy = try await FaultyTCPProxy.start(forwardingTo: "127.0.0.1", port: server.port, seed: 0x5A7E)
        proxy.setCutAfterBytes(200_000...2_500_000)
        let tablet = GKGameCenter(
            server: URL(string: "http://127.0.0.1:\(proxy.port)")!, bundleID: "com.example.tapper", environment: .sandbox,
            storageDirectory: FileManager.default.temporaryDirectory.appendingPathComponent("device-\(UUID().uuidString)"))
        try await tablet.localPlayer.authenticate(.signIn(account: account, password: "password-Sam"))
        _ = try await tablet.localPlayer.fetchSavedGames()
        let large = Data((0..<(8 << 20)).map { UInt8(truncatingIfNeeded: $0 % 239) })
        let saved = try await tablet.localPlayer.saveGameData(large, withName: "slot")
        proxy.setCutAfterBytes(nil)
        #expect(proxy.cutConnections > 0, "the upload was cut")
        let current = try await phone.localPlayer.fetchSavedGames()
        #expect(current.map(\.versionID) == [saved.versionID], "based on the old version: no conflict")
        #expect(try await current[0].loadData() == large)

        // Killed while the tablet uploads a new version, each chunk's round trip slowed so that the upload is still
        // going when the server dies: the version before stays current, whole, and the new one waits on the tablet.
        proxy.setDelay(.milliseconds(40)...(.milliseconds(60)))
        let upload = Task { try await tablet.localPlayer.saveGameData(Data(count: 24 << 20), withName: "slot") }
        try await Task.sleep(for: .milliseconds(400))
        try await server.crash()
        let pending = try await upload.value
        #expect(pending.syncState == .pending && pending.size == 24 << 20)
        // The game quits before the server is back.
        await tablet.close()
        try await server.start()
        let after = try await phone.localPlayer.fetchSavedGames()
        #expect(after.map(\.versionID) == [saved.versionID])
        #expect(try await after[0].loadData() == large)
        #expect(old.versionID != saved.versionID)

        // Launched again, the tablet finishes the upload it had started (from the chunks the server kept): based on
        // the version it had, so it is the only current one.
        proxy.setDelay(nil)
        let relaunched = GKGameCenter(
            server: URL(string: "http://127.0.0.1:\(proxy.port)")!, bundleID: "com.example.tapper", environment: .sandbox,
            storageDirectory: tablet.storageDirectory)
        try await relaunched.localPlayer.authenticate(.stored)
        try await waitUntil("the relaunched tablet delivered its pending save", within: .seconds(60)) {
            (try await phone.localPlayer.fetchSavedGames()).map(\.size) == [24 << 20]
        }
        let delivered = try await phone.localPlayer.fetchSavedGames()
        #expect(delivered.count == 1 && delivered[0].syncState == .synced)
        #expect(try await delivered[0].loadData() == Data(count: 24 << 20))
        await proxy.stop()
        await phone.close()
        await relaunched.close()
        _ = try await server.stop()
    }

    @Test func aSaveWrittenOnOneNodeIsListedOnTheOtherAndItsConflictHeardThere() async throws {
        guard LiveServer.engines.contains("postgres") else { return }
        let nodeA = try LiveServer(engine: "postgres")
        try await nodeA.start()
        let nodeB = try LiveServer(database: nodeA.database)
        try await nodeB.start()
        let (phone, account) = try await Devices.signedUp(nodeA, alias: "Sam")
        let tablet = Devices.make(nodeB)
        try await tablet.localPlayer.authenticate(.signIn(account: account, password: "password-Sam"))
        let tabletHears = Listener()
        tablet.localPlayer.register(tabletHears)

        let onA = try await phone.localPlayer.saveGameData(Data("from node A".utf8), withName: "slot")
        let listed = try await tablet.localPlayer.fetchSavedGames()
        #expect(listed.map(\.versionID) == [onA.versionID])
        #expect(try await listed[0].loadData() == Data("from node A".utf8))
        // Both save on from the same version at once, one on each node: both kept, the tablet told on node B.
        async let fromA = phone.localPlayer.saveGameData(Data("A again".utf8), withName: "slot")
        async let fromB = tablet.localPlayer.saveGameData(Data("B again".utf8), withName: "slot")
        let (a, b) = try await (fromA, fromB)
        #expect(Set(try await phone.localPlayer.fetchSavedGames().map(\.versionID)) == [a.versionID, b.versionID])
        let both = "conflict \([a.versionID, b.versionID].sorted().joined(separator: ","))"
        try await waitUntil("the tablet heard of the conflict") { tabletHears.log.contains(both) }
        await phone.close()
        await tablet.close()
        _ = try await nodeB.stop()
        _ = try await nodeA.stop()
    }

    @Test(arguments: LiveServer.engines)
    func anOlderVersionRestoredInTheAppIsHeardAgainByADeviceThatSavedSince(engine: String) async throws {
        let server = try LiveServer(engine: engine)
        try await server.start()
        let (phone, account) = try await Devices.signedUp(server, alias: "Sam")
        let tablet = Devices.make(server)
        try await tablet.localPlayer.authenticate(.signIn(account: account, password: "password-Sam"))
        let tabletHears = Listener()
        tablet.localPlayer.register(tabletHears)
        let first = try await phone.localPlayer.saveGameData(Data("level 1".utf8), withName: "slot")
        try await waitUntil("the tablet heard of the phone's save") { tabletHears.log == ["modified slot \(first.versionID)"] }
        // The tablet loads it and saves on itself: its own save is no news to it.
        _ = try await tablet.localPlayer.fetchSavedGames()
        _ = try await tablet.localPlayer.saveGameData(Data("level 2".utf8), withName: "slot")
        // The player restores the first version in the Game Center app: the tablet hears of it again.
        var browser = try await WebAppBrowser.signedIn(to: server.url, account: account, password: "password-Sam")
        let restored = try await browser.submit("/saves/restore", on: "/saves", [("version", first.versionID)])
        #expect(restored.status == 303)
        try await waitUntil("the tablet heard of the restored version") {
            tabletHears.log.count >= 2
        }
        #expect(tabletHears.log == ["modified slot \(first.versionID)", "modified slot \(first.versionID)"])
        await phone.close()
        await tablet.close()
        _ = try await server.stop()
    }

    // MARK: Saves made offline

    /// The GKGameCenter a game makes at launch on `storage`, its listener registered before it signs in.
    static func launch(_ server: LiveServer, storage: URL, hearing listener: Listener) -> GKGameCenter {
        let device = Devices.make(server, storage: storage)
        device.localPlayer.register(listener)
        return device
    }

    @Test(arguments: LiveServer.engines)
    func aSaveMadeWhileTheServerIsDownIsKeptAcrossARestartAndDeliveredByteForByteWhenItIsBack(engine: String) async throws {
        let server = try LiveServer(engine: engine)
        try await server.start()
        let storage = FileManager.default.temporaryDirectory.appendingPathComponent("device-\(UUID().uuidString)")
        let phone = Self.launch(server, storage: storage, hearing: Listener())
        let account = "sam-\(UUID().uuidString.prefix(8).lowercased())"
        try await phone.localPlayer.authenticate(.signUp(account: account, password: "password-Sam", alias: "Sam"))
        let tablet = Devices.make(server)
        try await tablet.localPlayer.authenticate(.signIn(account: account, password: "password-Sam"))
        let first = try await phone.localPlayer.saveGameData(Data("level 1".utf8), withName: "slot")
        #expect(first.syncState == .synced)

        // The server goes down; the game saves on: 3 MiB and a bit (chunks, read back from the device's file).
        try await server.stop()
        let data = Data((0..<(3 << 20) + 12_345).map { UInt8(truncatingIfNeeded: $0 % 241) })
        let pending = try await phone.localPlayer.saveGameData(data, withName: "slot")
        #expect(pending.syncState == .pending && pending.versionID.hasPrefix("local-") && pending.size == Int64(data.count))
        #expect(try await pending.loadData() == data, "a pending save loads from the device")
        let offline = await #expect(throws: GKError.self) { try await phone.localPlayer.fetchSavedGames() }
        #expect(offline?.code == .communicationsFailure)
        #expect(offline?.partialResult(as: [GKSavedGame].self)?.map(\.versionID) == [pending.versionID])

        // The game quits while the server is still down, and is launched again once it is back.
        await phone.close()
        try await server.start()
        let hears = Listener()
        let relaunched = Self.launch(server, storage: storage, hearing: hears)
        try await relaunched.localPlayer.authenticate(.stored)
        try await waitUntil("the relaunched game heard its save delivered", within: .seconds(30)) {
            hears.log.contains { $0.hasPrefix("modified slot v_") }
        }
        let delivered = try #require(hears.log.first { $0.hasPrefix("modified slot v_") }?.split(separator: " ").last.map(String.init))
        let onTablet = try await tablet.localPlayer.fetchSavedGames()
        #expect(onTablet.map(\.versionID) == [delivered], "based on the version the phone had loaded: no conflict")
        #expect(onTablet.first?.syncState == .synced)
        #expect(try await onTablet[0].loadData() == data)
        #expect(hears.log.filter { $0.hasPrefix("modified slot") }.count == 1, "told once")
        let listed = try await relaunched.localPlayer.fetchSavedGames()
        #expect(listed.map(\.versionID) == [delivered] && listed.allSatisfy { $0.syncState == .synced })
        let outbox = try FileManager.default.contentsOfDirectory(atPath: storage.appendingPathComponent("saved-game-outbox").path)
        #expect(outbox.filter { !$0.hasSuffix(".lock") }.isEmpty, "nothing left waiting: \(outbox)")
        await relaunched.close()
        await tablet.close()
        _ = try await server.stop()
    }

    @Test(arguments: LiveServer.engines)
    func aSaveDeletedWhileItsOfflineVersionWaitsStaysDeleted(engine: String) async throws {
        let server = try LiveServer(engine: engine)
        try await server.start()
        let storage = FileManager.default.temporaryDirectory.appendingPathComponent("device-\(UUID().uuidString)")
        let phone = Self.launch(server, storage: storage, hearing: Listener())
        try await phone.localPlayer.authenticate(.signUp(account: "sam-\(UUID().uuidString.prefix(8).lowercased())", password: "password-Sam", alias: "Sam"))
        _ = try await phone.localPlayer.saveGameData(Data("level 1".utf8), withName: "slot")
        try await server.stop()
        let pending = try await phone.localPlayer.saveGameData(Data("level 2, offline".utf8), withName: "slot")
        #expect(pending.syncState == .pending)
        let offline = await #expect(throws: GKError.self) { try await phone.localPlayer.deleteSavedGames(withName: "slot") }
        #expect(offline?.code == .communicationsFailure, "a deletion needs the server")

        // The server is back: the game deletes the save before (or while) its waiting version goes up.
        try await server.start()
        try await phone.localPlayer.deleteSavedGames(withName: "slot")
        try await Task.sleep(for: .seconds(3))
        #expect(try await phone.localPlayer.fetchSavedGames().isEmpty, "neither the server's versions nor the waiting one come back")
        let outbox = try FileManager.default.contentsOfDirectory(atPath: storage.appendingPathComponent("saved-game-outbox").path)
        #expect(outbox.filter { !$0.hasSuffix(".lock") }.isEmpty, "nothing left waiting: \(outbox)")
        await phone.close()
        _ = try await server.stop()
    }

    @Test(arguments: LiveServer.engines)
    func aDeviceOfflineWhileAnotherSavedMakesAConflictOnDeliveryAndOnlyItsNewestPendingSaveGoesUp(engine: String) async throws {
        let server = try LiveServer(engine: engine)
        try await server.start()
        let (phone, account) = try await Devices.signedUp(server, alias: "Sam")
        // The tablet reaches the server through a proxy that can refuse it: offline while the phone is not.
        let proxy = try await FaultyTCPProxy.start(forwardingTo: "127.0.0.1", port: server.port, seed: 0x0FF1)
        let tablet = GKGameCenter(
            server: URL(string: "http://127.0.0.1:\(proxy.port)")!, bundleID: "com.example.tapper", environment: .sandbox,
            storageDirectory: FileManager.default.temporaryDirectory.appendingPathComponent("device-\(UUID().uuidString)"))
        try await tablet.localPlayer.authenticate(.signIn(account: account, password: "password-Sam"))
        let tabletHears = Listener()
        tablet.localPlayer.register(tabletHears)
        let first = try await phone.localPlayer.saveGameData(Data("level 1".utf8), withName: "slot")
        #expect(try await tablet.localPlayer.fetchSavedGames().map(\.versionID) == [first.versionID])

        proxy.setRefusing(true)
        proxy.cutAllConnections()
        let older = try await tablet.localPlayer.saveGameData(Data("tablet, offline, first".utf8), withName: "slot")
        let newer = try await tablet.localPlayer.saveGameData(Data("tablet, offline, second".utf8), withName: "slot")
        #expect(older.syncState == .pending && newer.syncState == .pending && older.versionID != newer.versionID)
        let replaced = await #expect(throws: GKError.self) { try await older.loadData() }
        #expect(replaced?.code == .invalidParameter && replaced?.message.contains("replaced by a newer save") == true)
        #expect(try await newer.loadData() == Data("tablet, offline, second".utf8))
        let listedOffline = await #expect(throws: GKError.self) { try await tablet.localPlayer.fetchSavedGames() }
        #expect(listedOffline?.partialResult(as: [GKSavedGame].self)?.map(\.versionID) == [newer.versionID], "the newer replaced the older")

        // Meanwhile the phone saves on, from the version both had.
        let phones = try await phone.localPlayer.saveGameData(Data("phone, online".utf8), withName: "slot")
        #expect(phones.syncState == .synced)

        // The tablet is back: its save goes up based on the version it had loaded, so both are kept.
        proxy.setRefusing(false)
        try await waitUntil("the tablet heard of the conflict its delivered save made", within: .seconds(40)) {
            tabletHears.log.contains { $0.hasPrefix("conflict ") && $0.contains(phones.versionID) }
        }
        let versions = try await phone.localPlayer.fetchSavedGames()
        #expect(versions.count == 2 && versions.allSatisfy { $0.syncState == .conflicted })
        #expect(versions.contains { $0.versionID == phones.versionID })
        #expect(
            Set(try await versions.asyncMap { try await $0.loadData() }) == [Data("phone, online".utf8), Data("tablet, offline, second".utf8)],
            "never an overwrite, and only the newest pending save went up")
        let onTablet = try await tablet.localPlayer.fetchSavedGames()
        #expect(Set(onTablet.map(\.versionID)) == Set(versions.map(\.versionID)))
        #expect(try await newer.loadData() == Data("tablet, offline, second".utf8), "a kept pending save loads the version it became")

        // Resolved while offline again: kept, then based on both versions once it goes up, so the conflict ends.
        proxy.setRefusing(true)
        proxy.cutAllConnections()
        let resolved = try await tablet.localPlayer.resolveConflictingSavedGames(onTablet, with: Data("merged".utf8))
        #expect(resolved.count == 1 && resolved[0].syncState == .pending)
        proxy.setRefusing(false)
        try await waitUntil("the offline resolution went up and ended the conflict", within: .seconds(40)) {
            (try await phone.localPlayer.fetchSavedGames()).map(\.size) == [Int64("merged".utf8.count)]
        }
        let merged = try await phone.localPlayer.fetchSavedGames()
        #expect(merged[0].syncState == .synced)
        #expect(try await merged[0].loadData() == Data("merged".utf8))
        await proxy.stop()
        await phone.close()
        await tablet.close()
        _ = try await server.stop()
    }

    @Test(arguments: LiveServer.engines)
    func aPendingSaveTheServerRefusesForGoodIsDroppedAndReportedAndTheOthersStillGoUp(engine: String) async throws {
        let server = try LiveServer(engine: engine)
        try await server.start()
        let (phone, _) = try await Devices.signedUp(server, alias: "Sam")
        let events = phone.events
        try await server.stop()
        // The device cannot know the game's name limit (255) while offline: both are kept.
        let tooLong = String(repeating: "n", count: 256)
        let refused = try await phone.localPlayer.saveGameData(Data("x".utf8), withName: tooLong)
        let fine = try await phone.localPlayer.saveGameData(Data("fine".utf8), withName: "slot")
        #expect(refused.syncState == .pending && fine.syncState == .pending)

        try await server.start()
        let (name, error) = try await nextEvent(events, within: 40) { event -> (String, GKError)? in
            if case .savedGameRefused(let name, let error) = event { return (name, error) }
            return nil
        }
        #expect(name == tooLong)
        #expect(error.code == .invalidParameter && error.message.contains("255"), "\(error)")
        try await waitUntil("the other pending save went up", within: .seconds(30)) {
            (try? await phone.localPlayer.fetchSavedGames())?.map { "\($0.name ?? "?") \($0.syncState)" } == ["slot synced"]
        }
        let saves = try await phone.localPlayer.fetchSavedGames()
        #expect(try await saves[0].loadData() == Data("fine".utf8))
        let gone = await #expect(throws: GKError.self) { try await refused.loadData() }
        #expect(gone?.code == .invalidParameter, "the refused save was dropped from the device")
        await phone.close()
        _ = try await server.stop()
    }
}
