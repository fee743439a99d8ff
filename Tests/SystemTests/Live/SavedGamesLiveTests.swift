import Foundation
import NetworkFaultProxy
import OpenGameKit
import Synchronization
import Testing

/// Saved games through the SDK against real server processes, on every engine: two devices of one player saving the
/// same save (a conflict kept, told once, resolved in one step), a large save byte for byte, and the limits.
@Suite(.serialized, .timeLimit(.minutes(4))) struct SavedGamesLiveTests {
    /// Records the GameKit listener calls.
    final class Listener: GKSavedGameListener, @unchecked Sendable {
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

        // The phone saves on; the tablet, which saw only the first version, saves too: no silent last-writer-wins.
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

        // The tablet's next save is based on what it heard: no conflict.
        _ = try await tablet.localPlayer.saveGameData(Data("level 3".utf8), withName: "slot")
        #expect(try await phone.localPlayer.fetchSavedGames().count == 1)

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
}
