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
        func player(_ account: String) throws -> (Process, TextBuffer) {
            let home = FileManager.default.temporaryDirectory.appendingPathComponent("tictactoe-\(UUID().uuidString)")
            let process = Process()
            process.executableURL = URL(fileURLWithPath: LiveServer.binary).deletingLastPathComponent().appendingPathComponent("TicTacToe")
            process.arguments = ["--account", "\(account)-\(UUID().uuidString.prefix(6).lowercased())", "--auto"]
            process.environment = ["GAMECENTER_URL": server.url.absoluteString, "XDG_DATA_HOME": home.path, "HOME": home.path]
            let output = TextBuffer(), pipe = Pipe()
            process.standardOutput = pipe
            process.standardError = pipe
            pipe.fileHandleForReading.readabilityHandler = { handle in
                let data = handle.availableData
                output.text.withLock { $0 += String(decoding: data, as: UTF8.self) }
            }
            try process.run()
            return (process, output)
        }
        let (x, xOutput) = try player("ann")
        defer { if x.isRunning { x.terminate() } }
        // O starts once X's match exists, so that O fills its open seat rather than both starting matches at once.
        try await waitUntil("X is in a match", within: .seconds(20)) { xOutput.text.withLock { $0.contains("in match") } }
        let (o, oOutput) = try player("bob")
        defer { if o.isRunning { o.terminate() } }
        try await waitUntil("both games finished", within: .seconds(60)) { !x.isRunning && !o.isRunning }
        let (xText, oText) = (xOutput.text.withLock { $0 }, oOutput.text.withLock { $0 })
        #expect(x.terminationStatus == 0 && o.terminationStatus == 0, "X: \(xText)\nO: \(oText)")
        #expect(xText.contains("you won"), "X: \(xText)")
        #expect(oText.contains("you lost"), "O: \(oText)")
        let matchLine = { (text: String) in text.split(separator: "\n").first { $0.hasPrefix("in match") }?.split(separator: " ")[2] }
        #expect(matchLine(xText) != nil && matchLine(xText) == matchLine(oText), "they played one match")
        #expect(xText.contains(" X | O | X") && xText.contains(" X | . | ."), "the final board: \(xText)")
        try await server.stop()
    }
}
