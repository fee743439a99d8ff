import Foundation
import GameCenterProtocol
import Testing

@testable import OpenGameKit

/// A whole save's fields travel in an HTTP header: plain ASCII, and read back by an independent JSON decoder as the
/// same fields, whatever characters the save's and device's names have.
@Suite struct SavedGameHeaderTests {
    @Test(arguments: ["slot", "Château 🏰", "日本語のセーブ", "quote \" backslash \\ tab \t newline \n", "é\u{301} combining", "🎮🎮🎮"])
    func theFieldsGoAsASCIIJSONThatDecodesToTheSameFields(name: String) throws {
        let fields = SavedGameUploadBody(
            name: name, basedOn: ["v_1", "v_2"], deviceName: "Zoë's iPhone", size: 1 << 20, sha256: String(repeating: "ab", count: 32),
            playedSeconds: 12.5, progress: nil)
        let header = try GKLocalPlayer.headerJSON(fields)
        #expect(header.utf8.allSatisfy { (0x20..<0x7F).contains($0) }, "printable ASCII only: \(header)")
        #expect(try JSONDecoder().decode(SavedGameUploadBody.self, from: Data(header.utf8)) == fields)
    }
}
