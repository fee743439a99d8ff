import Foundation
import NetworkFaultProxy
import OpenGameKit
import Testing

/// The seed: only one player is signed in on a device, for all games; they stay signed in and sign out for every
/// game at once, and a running game hears it in its authenticate handler. Two games here share a device folder.
@Suite(.serialized, .timeLimit(.minutes(3))) struct OnePlayerPerDeviceLiveTests {
    static let first = "com.example.first"
    static let second = "com.example.second"

    /// A folder with the two games' manifests.
    static func games() throws -> String {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("device-games-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        for (bundleID, name) in [(first, "First"), (second, "Second")] {
            try "bundleID: \(bundleID)\nname: \(name)\n".write(to: folder.appendingPathComponent("\(name).yaml"), atomically: true, encoding: .utf8)
        }
        return folder.path
    }

    /// A game on the device whose shared folder is `device`.
    static func game(_ bundleID: String, on device: URL, _ server: LiveServer) -> GKGameCenter {
        GKGameCenter(
            server: server.url, bundleID: bundleID, storageDirectory: device.appendingPathComponent(bundleID), deviceDirectory: device)
    }

    @Test func aSecondGameStartsSignedInAndSigningOutInOneSignsOutEvery() async throws {
        let server = try LiveServer(engine: "sqlite", games: try Self.games())
        try await server.start()
        let device = FileManager.default.temporaryDirectory.appendingPathComponent("device-\(UUID().uuidString)")
        let firstGame = Self.game(Self.first, on: device, server)
        let account = "one-\(UUID().uuidString.prefix(8).lowercased())"
        try await firstGame.localPlayer.authenticate(.signUp(account: account, password: "password-1", alias: "One"))

        // Another game on the same device starts signed in as the same player, with a session of its own.
        let secondGame = Self.game(Self.second, on: device, server)
        let heard = HandlerLog()
        secondGame.localPlayer.authenticateHandler = { heard.record($0) }
        try await secondGame.localPlayer.authenticate(.stored)
        #expect(secondGame.localPlayer.isAuthenticated)
        #expect(secondGame.localPlayer.playerID == firstGame.localPlayer.playerID)
        #expect(try await secondGame.localPlayer.loadFriends() == [])
        // Another device is not signed in.
        let elsewhere = Devices.make(server, bundleID: Self.second)
        let notHere = await #expect(throws: GKError.self) { try await elsewhere.localPlayer.authenticate(.stored) }
        #expect(notHere?.code == .notAuthenticated)

        // Signing out in the first game signs out the second, which is running and hears it.
        await firstGame.localPlayer.signOut()
        try await waitUntil("the second game heard the sign-out", within: .seconds(30)) { heard.count == 2 && !secondGame.localPlayer.isAuthenticated }
        #expect(heard.codes == [nil, .notAuthenticated])
        let revoked = await #expect(throws: GKError.self) { try await GKLeaderboard.loadCategories(in: secondGame) }
        #expect(revoked?.code == .notAuthenticated)

        // Started again, neither game finds anyone signed in on the device.
        for bundleID in [Self.first, Self.second] {
            let restarted = Self.game(bundleID, on: device, server)
            let nobody = await #expect(throws: GKError.self) { try await restarted.localPlayer.authenticate(.stored) }
            #expect(nobody?.code == .notAuthenticated)
            #expect(!restarted.localPlayer.isAuthenticated)
        }
        try await server.stop()
    }

    /// A running game hears at once what another game on the device does (the seed: one player connected at a time):
    /// another player signed in there moves this game to them (the handler hears nil), and a sign-out there ends this
    /// game's session (`notAuthenticated`) without waiting for the server.
    @Test func aRunningGameFollowsAnotherGameSigningADifferentPlayerInAndSigningOut() async throws {
        let server = try LiveServer(engine: "sqlite", games: try Self.games())
        try await server.start()
        let device = FileManager.default.temporaryDirectory.appendingPathComponent("device-\(UUID().uuidString)")
        let firstGame = Self.game(Self.first, on: device, server)
        try await firstGame.localPlayer.authenticate(
            .signUp(account: "uno-\(UUID().uuidString.prefix(8).lowercased())", password: "password-1", alias: "Uno"))
        let secondGame = Self.game(Self.second, on: device, server)
        let heard = HandlerLog()
        secondGame.localPlayer.authenticateHandler = { heard.record($0) }
        try await secondGame.localPlayer.authenticate(.stored)
        #expect(secondGame.localPlayer.alias == "Uno")

        // Another player signs in in the first game: the second, running, moves to them.
        try await firstGame.localPlayer.authenticate(
            .signUp(account: "dos-\(UUID().uuidString.prefix(8).lowercased())", password: "password-1", alias: "Dos"))
        try await waitUntil("the second game moved to the first game's new player") {
            secondGame.localPlayer.alias == "Dos" && heard.count == 2
        }
        #expect(heard.codes == [nil, nil])
        #expect(secondGame.localPlayer.playerID == firstGame.localPlayer.playerID)
        #expect(try await secondGame.localPlayer.loadFriends() == [])

        // The first game signs out: the second hears it.
        await firstGame.localPlayer.signOut()
        try await waitUntil("the second game heard the sign-out") { heard.count == 3 && !secondGame.localPlayer.isAuthenticated }
        #expect(heard.codes == [nil, nil, .notAuthenticated])
        await firstGame.close()
        await secondGame.close()
        try await server.stop()
    }
}
