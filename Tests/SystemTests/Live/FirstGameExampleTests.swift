import Foundation
import OpenGameKit
import Testing

/// The README's "Your first game" (`Examples/FirstGame`) run as a new user would, against a live server, with a test
/// device as the second player: it must sign up, report, find a match, say hello and accept a friend request.
@Suite struct FirstGameExampleTests {
    @Test func theReadmeExampleRunsAgainstALiveServer() async throws {
        let server = try LiveServer(engine: "sqlite")
        try await server.start()
        let home = FileManager.default.temporaryDirectory.appendingPathComponent("first-game-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: home) }

        let example = try ExampleRun(
            "FirstGame", environment: ["GAMECENTER_URL": server.url.absoluteString, "XDG_DATA_HOME": home.path, "HOME": home.path])
        defer { example.stop() }

        // The second player: finds the same kind of match, hears Ann's hello, then asks to be her friend.
        let (bob, _) = try await Devices.signedUp(server, alias: "Bob")
        let bobEvents = bob.events
        let match = try await bob.matchmaker.findMatch(for: GKMatchRequest(minPlayers: 2, maxPlayers: 4))
        // Ann's reliable hello was sent as soon as her match existed: delivered once both are on the relay.
        let (hello, ann) = try await nextEvent(match.events, within: 20) { event -> (Data, String)? in
            if case .data(let data, let from) = event { return (data, from) }
            return nil
        }
        #expect(String(decoding: hello, as: UTF8.self) == "hello")
        try await GKFriendRequest.send(to: [ann], message: "good game", in: bob)
        let accepted = try await nextEvent(bobEvents, within: 20) { event -> String? in
            if case .friendRequestAccepted(let playerID) = event { return playerID }
            return nil
        }
        #expect(accepted == ann)

        for _ in 0..<400 where example.process.isRunning { try await Task.sleep(for: .milliseconds(50)) }
        let printed = example.printed
        #expect(!example.process.isRunning, "the example did not finish: \(printed)")
        #expect(example.process.terminationStatus == 0, "\(printed)")
        for line in ["signed in as Ann", "you: 1 of 1", "in a match with", "friends with Bob"] {
            #expect(printed.contains(line), "missing '\(line)' in: \(printed)")
        }
        try await server.stop()
    }
}
