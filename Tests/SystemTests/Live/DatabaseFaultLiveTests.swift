import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import NetworkFaultProxy
import Synchronization
import Testing

/// PostgreSQL behind a fault proxy that stops answering (a black hole), cuts the connections mid-query, or is stopped
/// under load: every request is answered within the stated time, `/readyz` within 2 s, and the server serves again by
/// itself once the database is back. Before, a black-holed database held requests for 40 s and more (one never got an
/// answer), `/readyz` gave none in 15 s, and a request in flight when PostgreSQL stopped was sometimes never answered.
@Suite(.serialized, .timeLimit(.minutes(3))) struct DatabaseFaultLiveTests {
    /// A request's answer and how long it took to come.
    struct Answer: Sendable {
        let status: Int
        let body: String
        let took: Duration
    }

    /// A private PostgreSQL, a fault proxy in front of it, a server that reaches the database through the proxy, and a
    /// signed-up player's token.
    struct Setup {
        let postgres: PrivatePostgres
        let proxy: FaultyTCPProxy
        let server: LiveServer
        let token: String

        /// Starts all of them, checks that the server serves, runs `body` and stops them, also when `body` throws.
        static func run(account: String, _ body: (Setup) async throws -> Void) async throws {
            let setup = try await start(account: account)
            do {
                try await body(setup)
            } catch {
                try? await setup.stop()
                throw error
            }
            try await setup.stop()
        }

        /// Starts all of them and checks that the server serves.
        private static func start(account: String) async throws -> Setup {
            let postgres = try PrivatePostgres()
            let proxy = try await FaultyTCPProxy.start(forwardingTo: "127.0.0.1", port: postgres.port)
            let server = try LiveServer(database: "postgres://postgres@127.0.0.1:\(proxy.port)/gamecenter")
            try await server.start()
            let token = try await server.signUp(account: account)
            let setup = Setup(postgres: postgres, proxy: proxy, server: server, token: token)
            #expect(try await setup.get("v1/me", token: token).status == 200)
            #expect(try await setup.get("readyz").status == 200)
            return setup
        }

        /// Stops the server and the proxy and removes the database.
        private func stop() async throws {
            try await server.stop()
            await proxy.stop()
            postgres.remove()
        }

        /// Asks for `path`, as the player `token` when given.
        func get(_ path: String, token: String? = nil) async throws -> Answer {
            var request = URLRequest(url: server.url.appendingPathComponent(path))
            if let token { request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization") }
            return try await Self.send(request)
        }

        /// Reports an achievement (a report waits for a batch of reports: group commit) as the signed-in player.
        func report(_ reportID: String) async throws -> Answer {
            var request = URLRequest(url: server.url.appendingPathComponent("v1/achievements"))
            request.httpMethod = "POST"
            request.httpBody = Data(#"{"reportID":"\#(reportID)","achievements":[{"identifier":"tapper.first","percentComplete":50}]}"#.utf8)
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
            request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization")
            return try await Self.send(request)
        }

        /// A session of its own: up to 64 requests at once go out at once (none waits in the client for a connection,
        /// so the time measured is the server's), and one unanswered after 30 s fails.
        private static let session: URLSession = {
            let configuration = URLSessionConfiguration.ephemeral
            configuration.httpMaximumConnectionsPerHost = 64
            configuration.timeoutIntervalForRequest = 30
            return URLSession(configuration: configuration)
        }()

        private static func send(_ request: URLRequest) async throws -> Answer {
            var request = request
            request.setValue("com.example.tapper", forHTTPHeaderField: "X-GameCenter-Bundle-ID")
            request.setValue("sandbox", forHTTPHeaderField: "X-GameCenter-Environment")
            let asked = ContinuousClock.now
            // Bounded here: a request the server never answers fails the test instead of holding the run (a test's
            // time limit cannot interrupt it).
            let exchange = Task { [request] in
                let (data, response) = try await session.data(for: request)
                return ((response as? HTTPURLResponse)?.statusCode ?? 0, data)
            }
            let (status, data) = try await value(of: exchange, "an answer to \(request.url?.path ?? "")")
            return Answer(status: status, body: String(decoding: data, as: UTF8.self), took: ContinuousClock.now - asked)
        }

        /// Sends requests that need the database from `loops` loops at once until `stopping` says so, and returns every
        /// answer, or the error of a request that got none.
        func load(loops: Int, until stopping: StopSignal) async -> [Result<Answer, any Error>] {
            await withTaskGroup(of: [Result<Answer, any Error>].self) { group in
                for loop in 0..<loops {
                    group.addTask {
                        var answers: [Result<Answer, any Error>] = []
                        var sent = 0
                        while !stopping.isStopped {
                            sent += 1
                            do {
                                answers.append(.success(sent % 2 == 0 ? try await get("v1/me", token: token) : try await report("load-\(loop)-\(sent)")))
                            } catch {
                                answers.append(.failure(error))
                            }
                        }
                        return answers
                    }
                }
                return await group.reduce(into: []) { $0 += $1 }
            }
        }

        /// Waits until the server serves requests that need the database again, as it must by itself.
        func waitUntilServing() async throws {
            try await waitUntil("the server serves again once the database is back", within: .seconds(90)) {
                try await get("v1/me", token: token).status == 200
            }
            #expect(try await get("readyz").status == 200)
        }
    }

    /// Tells a load's loops to send no more requests.
    final class StopSignal: Sendable {
        private let stopped = Atomic(false)

        /// Whether ``stop()`` was called.
        var isStopped: Bool { stopped.load(ordering: .relaxed) }

        /// The loops finish the requests they sent and send no more.
        func stop() { stopped.store(true, ordering: .relaxed) }
    }

    static var enabled: Bool { DatabaseOutageLiveTests.enabled }

    /// The promise is 503 within 5–6 s; the bound leaves room for a loaded 2-core machine.
    static let answerBound = Duration.seconds(12)

    /// Checks that every request of a load got an answer, 200 or 503 `server.storage_unavailable`, within
    /// ``answerBound``.
    static func expectAnswered(_ answers: [Result<Answer, any Error>]) {
        #expect(!answers.isEmpty)
        for answer in answers {
            switch answer {
            case .success(let answer):
                #expect(answer.status == 200 || answer.body.contains(#""code":"server.storage_unavailable""#), "\(answer.status) \(answer.body)")
                #expect(answer.took < answerBound, "an answer took \(answer.took)")
            case .failure(let error):
                Issue.record("a request got no answer: \(error)")
            }
        }
    }

    @Test(.enabled(if: enabled, "needs root and Debian's PostgreSQL (the test script provides both)"))
    func aDatabaseThatStopsAnsweringIsAnsweredInTimeAndTheServerRecoversByItself() async throws {
        try await Setup.run(account: "blackhole") { setup in
            setup.proxy.setBlackHole(true)
            async let read = setup.get("v1/me", token: setup.token)
            async let report = setup.report("blackhole-1")
            async let ready = setup.get("readyz")
            let (readAnswer, reportAnswer, readyAnswer) = try await (read, report, ready)
            for answer in [readAnswer, reportAnswer] {
                #expect(answer.status == 503, "\(answer.body)")
                #expect(answer.body.contains(#""code":"server.storage_unavailable""#), "\(answer.body)")
                #expect(answer.took < Self.answerBound, "the answer took \(answer.took)")
            }
            #expect(readyAnswer.status == 503, "\(readyAnswer.body)")
            // The stated bound is 2 s.
            #expect(readyAnswer.took < .seconds(4), "/readyz took \(readyAnswer.took)")
            #expect(try await setup.get("healthz").status == 200, "liveness must not depend on the database")
            // Still black-holed: the next request is answered the same way (no connection is left that answers nothing).
            let again = try await setup.get("v1/me", token: setup.token)
            #expect(again.status == 503 && again.took < Self.answerBound, "\(again.status) after \(again.took)")
            let readyAgain = try await setup.get("readyz")
            #expect(readyAgain.status == 503 && readyAgain.took < .seconds(4), "\(readyAgain.status) after \(readyAgain.took)")
            print("black hole: request \(readAnswer.took), report \(reportAnswer.took), /readyz \(readyAnswer.took), again \(again.took)")

            setup.proxy.setBlackHole(false)
            try await setup.waitUntilServing()
        }
    }

    @Test(.enabled(if: enabled, "needs root and Debian's PostgreSQL (the test script provides both)"))
    func connectionsCutMidQueryLeaveNoRequestUnanswered() async throws {
        try await Setup.run(account: "cut") { setup in
            // Slow chunks, so that queries are on the wire when the connections are cut.
            setup.proxy.setDelay(.milliseconds(50) ... .milliseconds(150))
            let stopping = StopSignal()
            async let answers = setup.load(loops: 8, until: stopping)
            for _ in 0..<5 {
                try await Task.sleep(for: .milliseconds(700))
                setup.proxy.cutAllConnections()
            }
            stopping.stop()
            let all = await answers
            Self.expectAnswered(all)
            print("cut: \(all.count) requests, slowest \(all.compactMap { try? $0.get().took }.max() ?? .zero)")
            setup.proxy.setDelay(nil)
            try await setup.waitUntilServing()
        }
    }

    @Test(.enabled(if: enabled, "needs root and Debian's PostgreSQL (the test script provides both)"))
    func requestsInFlightWhenTheDatabaseStopsAreAnswered() async throws {
        try await Setup.run(account: "stop") { setup in
            for round in 0..<3 {
                let stopping = StopSignal()
                async let answers = setup.load(loops: 8, until: stopping)
                try await Task.sleep(for: .milliseconds(500))
                try setup.postgres.stop()
                try await Task.sleep(for: .seconds(2))
                stopping.stop()
                let all = await answers
                Self.expectAnswered(all)
                print("stop \(round): \(all.count) requests, slowest \(all.compactMap { try? $0.get().took }.max() ?? .zero)")
                try setup.postgres.start()
                try await setup.waitUntilServing()
            }
        }
    }
}
