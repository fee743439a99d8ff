import Foundation
import LANTestSupport
import Testing

/// The terminal peer picker as a person uses it: two LANBattle instances in tmux, one player picks the other
/// from the list of nearby players, the other accepts, and both play the battle to the end.
@Suite(
    "Peer picker driven in tmux",
    .enabled(
        if: (TmuxServer() != nil && LoopbackMulticast.isAvailable) || lanPeersRequired,
        Comment(rawValue: "\(TmuxServer.skipMessage), or \(LoopbackMulticast.skipMessage)"))
)
struct PeerPickerTmuxTests {
    @Test(.timeLimit(.minutes(2)))
    func pickingANearbyPlayerAndAcceptingConnectsBothTerminals() async throws {
        let tmux = try #require(TmuxServer(), "GAMECENTER_REQUIRE_LAN_PEERS=1, but \(TmuxServer.skipMessage)")
        try #require(LoopbackMulticast.isAvailable, "\(LoopbackMulticast.skipMessage)")
        let battle = ChildProcess.built("LANBattle").path
        try #require(FileManager.default.isExecutableFile(atPath: battle), "LANBattle not built at \(battle); run `swift build` first")
        let session = uniqueSessionID("pick")
        try await tmux.start()
        do {
            try await play(tmux, battle: battle, session: session)
        } catch {
            await tmux.stop()
            throw error
        }
        await tmux.stop()
    }

    private func play(_ tmux: TmuxServer, battle: String, session: String) async throws {
        for name in ["Alice", "Bob"] {
            try await tmux.open(name, battle, ["--name", name, "--interface", "lo", "--session", session, "--timeout", "100"])
        }
        // Alice sees Bob in the list and types his number.
        let listed = try await tmux.waitFor("Alice") { $0.contains("Nearby players:") && $0.contains(") Bob") }
        try #require(listed.matched, "Alice's picker never listed Bob:\n\(listed.screen)")
        let number = try #require(Self.number(of: "Bob", in: listed.screen), "no number for Bob in:\n\(listed.screen)")
        try await tmux.type(number, into: "Alice")
        #expect(try await tmux.waitFor("Alice") { $0.contains("Connecting to Bob…") }.matched)

        // Bob is asked and answers yes.
        let asked = try await tmux.waitFor("Bob") { $0.contains("Alice wants to connect. Accept? [y/n]") }
        try #require(asked.matched, "Bob was never asked:\n\(asked.screen)")
        try await tmux.type("y", into: "Bob")

        // Both pickers report the connection, the creatures are exchanged and the battle runs to its end.
        let alice = try await tmux.waitFor("Alice", timeout: .seconds(60)) { $0.contains("Winner: ") }
        let bob = try await tmux.waitFor("Bob", timeout: .seconds(60)) { $0.contains("Winner: ") }
        #expect(alice.matched && bob.matched, "Alice:\n\(alice.screen)\nBob:\n\(bob.screen)")
        #expect(alice.screen.contains("Connected to Bob.") && alice.screen.contains("Battle against Bob!"), "\(alice.screen)")
        #expect(bob.screen.contains("Connected to Alice.") && bob.screen.contains("Battle against Alice!"), "\(bob.screen)")
        #expect(alice.screen.contains("The opponent sends out") && bob.screen.contains("The opponent sends out"))
        let winner = { (screen: String) in screen.split(separator: "\n").first { $0.hasPrefix("Winner: ") }.map(String.init) }
        #expect(winner(alice.screen) != nil && winner(alice.screen) == winner(bob.screen), "\(alice.screen)\n----\n\(bob.screen)")

        // Both programs end by themselves with success.
        let deadline = ContinuousClock.now + .seconds(20)
        var statuses: [Int32?] = [nil, nil]
        while statuses.contains(nil), ContinuousClock.now < deadline {
            statuses = [try await tmux.exitStatus("Alice"), try await tmux.exitStatus("Bob")]
            if statuses.contains(nil) { try await Task.sleep(for: .milliseconds(200)) }
        }
        if statuses != [0, 0] {
            let screens = [try await tmux.screen("Alice"), try await tmux.screen("Bob")]
            Issue.record("exit statuses \(statuses)\nAlice:\n\(screens[0])\n----\nBob:\n\(screens[1])")
        }
    }

    /// The number the picker shows before `name` ("  2) Bob" → "2").
    static func number(of name: String, in screen: String) -> String? {
        for line in screen.split(separator: "\n").reversed() {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if trimmed.hasSuffix(") \(name)"), let number = trimmed.split(separator: ")").first, Int(number) != nil {
                return String(number)
            }
        }
        return nil
    }
}
