import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import OpenGameKit
import Testing

/// The SDK on leaderboards that take signed reports and on leaderboards that verify scores, against a real server:
/// the device signs without the game doing anything (fetching its key on the first refusal, signing again when reports
/// overtake each other), and a verified score comes back with its state. The verifier itself, signatures made by an
/// independent implementation and the studio's decisions are driven in `Tests/ServerAPI/test_verified_scores.py`.
@Suite(.serialized, .timeLimit(.minutes(3))) struct VerifiedScoresLiveTests {
    static let manifest = """
        bundleID: com.example.tapper
        name: Tapper
        defaultLocale: en
        leaderboards:
          - { category: tapper.taps, default: true, title: { en: Taps }, format: integer }
          - { category: tapper.signed, title: { en: Signed }, format: integer, writePolicy: signed }
          - { category: tapper.checked, title: { en: Checked }, format: integer, verification: { timeoutSeconds: 1 } }
        """

    private static func server() async throws -> LiveServer {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("verified-games-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try manifest.write(to: folder.appendingPathComponent("tapper.yaml"), atomically: true, encoding: .utf8)
        let server = try LiveServer(engine: "sqlite", games: folder.path)
        try await server.start()
        return server
    }

    @Test func theDeviceSignsItsReportsToASignedBoardEvenWhenTheyOvertakeEachOther() async throws {
        let server = try await Self.server()
        let (device, account) = try await Devices.signedUp(server, alias: "Sig")
        let first = GKScore(category: "tapper.signed", in: device)
        first.value = 10
        try await first.report()
        #expect(first.formattedValue == "10")
        // Several at once: their counters are taken in whatever order they arrive; those overtaken are signed again.
        try await withThrowingTaskGroup(of: Void.self) { group in
            for value in 11...16 {
                group.addTask {
                    let score = GKScore(category: "tapper.signed", in: device)
                    score.value = Int64(value)
                    try await score.report()
                }
            }
            try await group.waitForAll()
        }
        let board = GKLeaderboard(in: device)
        board.category = "tapper.signed"
        _ = try await board.loadScores()
        #expect(board.localPlayerScore?.value == 16)

        // The same report from another session of the player, without the SDK's signing, is refused: the board really
        // takes signed reports only.
        let token = try await RateLimitLiveTests.signIn(server, account: account, alias: "Sig")
        var request = URLRequest(url: server.url.appendingPathComponent("v1/scores"))
        request.httpMethod = "POST"
        request.setValue("com.example.tapper", forHTTPHeaderField: "X-GameCenter-Bundle-ID")
        request.setValue("sandbox", forHTTPHeaderField: "X-GameCenter-Environment")
        request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization")
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.httpBody = Data(#"{"reportID": "unsigned-report-1", "scores": [{"category": "tapper.signed", "value": 99, "context": 0}]}"#.utf8)
        let (body, response) = try await URLSession.shared.data(for: request)
        #expect((response as? HTTPURLResponse)?.statusCode == 403)
        #expect(String(decoding: body, as: UTF8.self).contains("leaderboard.signature_required"))
        try await server.stop()
    }

    @Test func aVerifiedScoreComesBackWithItsStateAndTheOthersAsBefore() async throws {
        let server = try await Self.server()
        let (device, _) = try await Devices.signedUp(server, alias: "Ver")
        let plain = GKScore(category: "tapper.taps", in: device)
        plain.value = 5
        let checked = GKScore(category: "tapper.checked", in: device)
        checked.value = 900
        checked.details = [3, 1, 4]
        checked.attachment = Data(repeating: 7, count: 10_000)
        try await GKScore.report([plain, checked])
        #expect(plain.formattedValue == "5" && plain.verification == nil)
        // The game has no verifier: the score waits for the studio, never counted silently.
        let verification = try #require(checked.verification)
        #expect(verification.state == .quarantined && verification.reason?.contains("no verifier") == true)
        #expect(checked.formattedValue == nil)
        let loaded = try await GKScore.loadVerifications(in: device)
        #expect(loaded.map(\.submissionID) == [verification.submissionID] && loaded.first?.value == 900)

        let tooMany = GKScore(category: "tapper.checked", in: device)
        tooMany.details = Array(repeating: 1, count: 65)
        let error = await #expect(throws: GKError.self) { try await tooMany.report() }
        #expect(error?.code == .invalidParameter)
        try await server.stop()
    }
}
