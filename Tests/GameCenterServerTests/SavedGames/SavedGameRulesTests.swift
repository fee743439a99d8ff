import Foundation
import GameCenterProtocol
import GameCenterStorage
import Testing

@testable import GameCenterServer

/// The saved-game rules without I/O: how each conflict policy settles, and what an upload is checked for.
@Suite struct SavedGameRulesTests {
    static func version(_ id: String, at time: Int64, played: Double? = nil, progress: Double? = nil) -> SavedGameVersionRecord {
        SavedGameVersionRecord(
            versionID: id, playerID: "G:1", bundleID: "com.example", environment: "sandbox", name: "slot", deviceName: "phone", size: 1,
            sha256: String(repeating: "0", count: 64), playedSeconds: played, progress: progress, createdAt: time, current: true)
    }

    @Test func eachPolicySettlesAConflictTheSameWayWhateverTheOrder() {
        let versions = [
            Self.version("a", at: 100, played: 50, progress: 0.9), Self.version("b", at: 300, played: 10, progress: 0.2),
            Self.version("c", at: 200, played: 70, progress: 0.5),
        ]
        let expected: [SavedGameSettings.ConflictPolicy: [String]] = [
            .manual: ["a", "b", "c"], .mostRecent: ["b"], .longestPlayed: ["c"], .highestProgress: ["a"],
        ]
        for (policy, winners) in expected {
            for order in [versions, versions.reversed(), [versions[1], versions[2], versions[0]]] {
                #expect(Set(SavedGameService.settle(order, policy: policy).map(\.versionID)) == Set(winners), "\(policy)")
            }
        }
        // Ties go to the later save, then the greater id.
        let tied = [Self.version("x", at: 5, played: 1), Self.version("y", at: 9, played: 1), Self.version("z", at: 9, played: 1)]
        #expect(SavedGameService.settle(tied, policy: .longestPlayed).map(\.versionID) == ["z"])
        #expect(SavedGameService.settle([Self.version("only", at: 1)], policy: .mostRecent).map(\.versionID) == ["only"])
    }

    @Test func theDigestIsSHA256InLowercaseHex() {
        // FIPS 180-2's test vector, as `sha256sum` prints it.
        #expect(SavedGameDigest.sha256(Data("abc".utf8)) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(SavedGameDigest.sha256(Data()) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
    }

    @Test func anUploadIsCheckedAgainstTheGamesLimitsWithTheirNumbers() throws {
        var settings = SavedGameSettings()
        settings.saveBytes = 4096
        settings.nameLength = 8
        let good = SavedGameUploadBody(name: "slot", basedOn: [], deviceName: "phone", size: 4096, sha256: String(repeating: "a", count: 64))
        try SavedGameService.check(good, settings: settings)
        var body = good
        body.size = 4097
        #expect(throws: APIError.self) { try SavedGameService.check(body, settings: settings) }
        do {
            try SavedGameService.check(body, settings: settings)
        } catch let error as APIError {
            #expect(error.code == .saveTooLarge && error.message.contains("4096") && error.message.contains("4097"))
        }
        for bad in [
            { (b: inout SavedGameUploadBody) in b.name = "" }, { $0.name = "ninechars" }, { $0.name = "a\u{7}b" },
            { $0.sha256 = String(repeating: "A", count: 64) }, { $0.sha256 = "abc" }, { $0.size = -1 }, { $0.playedSeconds = .nan },
            { $0.progress = -1 }, { $0.basedOn = Array(repeating: "v", count: 65) }, { $0.deviceName = String(repeating: "d", count: 101) },
        ] {
            var body = good
            bad(&body)
            #expect(throws: APIError.self) { try SavedGameService.check(body, settings: settings) }
        }
    }
}
