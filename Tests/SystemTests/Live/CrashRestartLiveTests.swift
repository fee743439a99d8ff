import Foundation
import GameCenterProtocol
import NetworkFaultProxy
import Synchronization
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `kill -9` during concurrent reports, on each engine: after a restart on the same database, every score and
/// achievement report the server answered is there.
@Suite(.serialized, .timeLimit(.minutes(3))) struct CrashRestartLiveTests {
    static let players = 8

    /// One player's reports and what the server answered.
    final class Reporter: Sendable {
        let playerID: String
        let token: String
        /// The highest score and achievement progress the server answered 200 for.
        let answered = Mutex<(score: Int64, percent: Double)>((0, 0))

        init(playerID: String, token: String) {
            self.playerID = playerID
            self.token = token
        }
    }

    static func request(_ server: LiveServer, _ method: String, _ path: String, token: String?, body: some Encodable) throws -> URLRequest {
        var request = URLRequest(url: server.url.appendingPathComponent(path))
        request.httpMethod = method
        request.timeoutInterval = 10
        request.setValue("com.example.tapper", forHTTPHeaderField: DeviceHeader.bundleID)
        request.setValue("sandbox", forHTTPHeaderField: DeviceHeader.environment)
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        if let token { request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization") }
        request.httpBody = try WireCoding.makeEncoder().encode(body)
        return request
    }

    static func send(_ request: URLRequest) async throws -> (status: Int, data: Data) {
        let (data, response) = try await URLSession.shared.data(for: request)
        return ((response as? HTTPURLResponse)?.statusCode ?? 0, data)
    }

    /// Reports a growing score and progress, one report at a time, until the server stops answering.
    static func report(_ server: LiveServer, as reporter: Reporter) async {
        var value: Int64 = 0
        while true {
            value += 1
            let percent = Double(min(value, 100))
            do {
                let scores = ScoreReportBatch(reportID: UUID().uuidString, scores: [ScoreReport(category: "tapper.taps", value: value, context: 0)])
                guard try await send(request(server, "POST", "v1/scores", token: reporter.token, body: scores)).status == 200 else { return }
                reporter.answered.withLock { $0.score = value }
                let progress = AchievementReportBatch(
                    reportID: UUID().uuidString, achievements: [.init(identifier: "tapper.first", percentComplete: percent)])
                guard try await send(request(server, "POST", "v1/achievements", token: reporter.token, body: progress)).status == 200 else { return }
                reporter.answered.withLock { $0.percent = percent }
            } catch {
                return  // the server is gone
            }
        }
    }

    @Test(arguments: LiveServer.engines)
    func aKillDuringConcurrentReportsLosesNothingAnswered(engine: String) async throws {
        let server = try LiveServer(engine: engine)
        try await server.start(extraArguments: ["--rate-limit", "reports=0/1"])
        var signedUp: [Reporter] = []
        for n in 0..<Self.players {
            let signUp = SignUpRequest(account: "crash-\(n)-\(UUID().uuidString.prefix(6).lowercased())", password: "password-1", alias: "C\(n)")
            let (status, data) = try await Self.send(Self.request(server, "POST", "v1/accounts", token: nil, body: signUp))
            #expect(status == 201)
            let session = try WireCoding.makeDecoder().decode(SessionResponse.self, from: data)
            signedUp.append(Reporter(playerID: session.player.playerID, token: session.token))
        }
        let reporters = signedUp
        let running = reporters.map { reporter in Task { await Self.report(server, as: reporter) } }
        // Kill it in the middle: once every player has had several reports answered.
        try await waitUntil("every player has reports answered", within: .seconds(30)) {
            reporters.allSatisfy { $0.answered.withLock { $0.score >= 5 && $0.percent >= 4 } }
        }
        try await server.crash()
        for task in running { try await value(of: task, "a reporter noticing the server is gone") }

        try await server.start(extraArguments: ["--rate-limit", "reports=0/1"])
        for reporter in reporters {
            let answered = reporter.answered.withLock { $0 }
            let query = LeaderboardQuery(
                category: "tapper.taps", playerScope: .global, timeScope: .allTime, rangeStart: 1, rangeLength: 1,
                playerIDs: [reporter.playerID])
            let (status, data) = try await Self.send(Self.request(server, "POST", "v1/leaderboards/query", token: reporter.token, body: query))
            #expect(status == 200)
            let best = try WireCoding.makeDecoder().decode(LeaderboardPage.self, from: data).scores.first?.value ?? 0
            // A report sent but not answered may be stored too (answered is what was promised).
            #expect(best >= answered.score, "player \(reporter.playerID): answered \(answered.score), stored best \(best)")

            var progressRequest = URLRequest(url: server.url.appendingPathComponent("v1/achievements"))
            progressRequest.setValue("com.example.tapper", forHTTPHeaderField: DeviceHeader.bundleID)
            progressRequest.setValue("sandbox", forHTTPHeaderField: DeviceHeader.environment)
            progressRequest.setValue("Bearer \(reporter.token)", forHTTPHeaderField: "Authorization")
            let (progressStatus, progressData) = try await Self.send(progressRequest)
            #expect(progressStatus == 200)
            let stored =
                try WireCoding.makeDecoder().decode(AchievementList.self, from: progressData)
                .achievements.first { $0.identifier == "tapper.first" }?.percentComplete ?? 0
            #expect(stored >= answered.percent, "player \(reporter.playerID): answered \(answered.percent) %, stored \(stored) %")
        }
        try await server.stop()
    }
}
