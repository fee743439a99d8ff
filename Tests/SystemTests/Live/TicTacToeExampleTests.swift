import Foundation
import NetworkFaultProxy
import Testing

/// `Examples/TicTacToe`, two terminals' worth of it against a live server: both play by themselves (`--auto`, the
/// first free square), meet by auto-match, and play a turn-based match to its end. X takes 1, 3, 5 and 7 and wins
/// on the diagonal 3-5-7.
@Suite struct TicTacToeExampleTests {
    @Test func twoPlayersPlayAGameToItsEnd() async throws {
        let server = try LiveServer(engine: "sqlite")
        try await server.start()
        func player(_ account: String) throws -> ExampleRun {
            let home = FileManager.default.temporaryDirectory.appendingPathComponent("tictactoe-\(UUID().uuidString)")
            return try ExampleRun(
                "TicTacToe", ["--account", "\(account)-\(UUID().uuidString.prefix(6).lowercased())", "--auto"],
                environment: ["GAMECENTER_URL": server.url.absoluteString, "XDG_DATA_HOME": home.path, "HOME": home.path])
        }
        let x = try player("ann")
        defer { x.stop() }
        // O starts once X's match exists, so that O fills its open seat rather than both starting matches at once.
        try await waitUntil("X is in a match", within: .seconds(20)) { x.printed.contains("in match") }
        let o = try player("bob")
        defer { o.stop() }
        try await waitUntil("both games finished", within: .seconds(60)) { !x.process.isRunning && !o.process.isRunning }
        let (xText, oText) = (x.printed, o.printed)
        #expect(x.process.terminationStatus == 0 && o.process.terminationStatus == 0, "X: \(xText)\nO: \(oText)")
        #expect(xText.contains("you won"), "X: \(xText)")
        #expect(oText.contains("you lost"), "O: \(oText)")
        let matchLine = { (text: String) in text.split(separator: "\n").first { $0.hasPrefix("in match") }?.split(separator: " ")[2] }
        #expect(matchLine(xText) != nil && matchLine(xText) == matchLine(oText), "they played one match")
        #expect(xText.contains(" X | O | X") && xText.contains(" X | . | ."), "the final board: \(xText)")
        try await server.stop()
    }
}
