import Foundation
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

    @Test(arguments: LiveServer.engines)
    func aLargeSaveRoundTripsByteForByteAndTheLimitsAreRefusedWithTheirNumbers(engine: String) async throws {
        let server = try LiveServer(engine: engine)
        try await server.start()
        let (phone, tablet) = try await Self.twoDevices(server)
        // 32 MiB, the default most, in 32 chunks; every byte position distinct modulo 251.
        let large = Data((0..<(32 << 20)).map { UInt8(truncatingIfNeeded: $0 % 251) })
        let saved = try await phone.localPlayer.saveGameData(large, withName: "world")
        #expect(saved.size == Int64(large.count))
        let fetched = try #require(try await tablet.localPlayer.fetchSavedGames().first)
        #expect(try await fetched.loadData() == large)

        let tooLarge = await #expect(throws: GKError.self) {
            try await phone.localPlayer.saveGameData(large + Data([0]), withName: "bigger")
        }
        #expect(tooLarge?.code == .invalidParameter && tooLarge?.message.contains("33554432") == true)
        let longName = await #expect(throws: GKError.self) {
            try await phone.localPlayer.saveGameData(Data("x".utf8), withName: String(repeating: "n", count: 256))
        }
        #expect(longName?.code == .invalidParameter && longName?.message.contains("255") == true)
        #expect(try await phone.localPlayer.fetchSavedGames().map(\.versionID) == [saved.versionID], "nothing else was saved")
        await phone.close()
        await tablet.close()
        _ = try await server.stop()
    }

    @Test(arguments: LiveServer.engines)
    func anUploadCutAtRandomPointsResumesAndAServerKilledMidUploadKeepsTheOldVersion(engine: String) async throws {
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
        // going when the server dies: the version before stays current, whole.
        proxy.setDelay(.milliseconds(40)...(.milliseconds(60)))
        let upload = Task { try await tablet.localPlayer.saveGameData(Data(count: 24 << 20), withName: "slot") }
        try await Task.sleep(for: .milliseconds(400))
        try await server.crash()
        let failed = await #expect(throws: GKError.self) { try await upload.value }
        #expect(failed?.code == .communicationsFailure)
        try await server.start()
        let after = try await phone.localPlayer.fetchSavedGames()
        #expect(after.map(\.versionID) == [saved.versionID])
        #expect(try await after[0].loadData() == large)
        #expect(old.versionID != saved.versionID)
        await proxy.stop()
        await phone.close()
        await tablet.close()
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
}
