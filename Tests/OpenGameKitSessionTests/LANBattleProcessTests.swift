import Foundation
import LANTestSupport
import Testing

@Suite("LANBattle example", .enabled(if: LoopbackMulticast.isAvailable, Comment(rawValue: LoopbackMulticast.skipMessage)))
struct LANBattleProcessTests {
    /// The LANBattle executable, built next to the test bundle by `swift build` / `swift test`.
    static var executable: URL { ChildProcess.built("LANBattle") }

    @Test(.timeLimit(.minutes(1)))
    func twoAutoPlayersAgreeOnTheWinner() async throws {
        let path = Self.executable.path
        try #require(FileManager.default.isExecutableFile(atPath: path), "LANBattle not built at \(path); run `swift build` first")
        let session = uniqueSessionID("battle")
        async let alice = run(["--name", "Alice", "--auto", "--interface", "lo", "--session", session, "--timeout", "40"])
        async let bob = run(["--name", "Bob", "--auto", "--interface", "lo", "--session", session, "--timeout", "40"])
        let (a, b) = try await (alice, bob)
        #expect(a.status == 0, "\(a.output)")
        #expect(b.status == 0, "\(b.output)")
        let winnerA = a.output.split(separator: "\n").first { $0.hasPrefix("Winner: ") }
        let winnerB = b.output.split(separator: "\n").first { $0.hasPrefix("Winner: ") }
        #expect(winnerA != nil && winnerA == winnerB, "\(a.output)\n----\n\(b.output)")
        #expect(winnerA == "Winner: Bob")  // Bob's Drake outlasts Alice's Kappa
        let turnsA = a.output.split(separator: "\n").filter { $0.hasPrefix("Turn ") }
        let turnsB = b.output.split(separator: "\n").filter { $0.hasPrefix("Turn ") }
        #expect(!turnsA.isEmpty && turnsA == turnsB)
    }

    private func run(_ arguments: [String]) async throws -> (status: Int32, output: String) {
        try await ChildProcess.run(Self.executable.path, arguments, timeout: .seconds(55))
    }
}
