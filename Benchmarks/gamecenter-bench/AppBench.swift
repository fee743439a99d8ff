import ArgumentParser
import AsyncHTTPClient
import Foundation
import GameCenterProtocol
import GameCenterStorage
import Logging
import NIOCore
import NIOHTTP1

/// `gamecenter-bench app`: the Game Center app's pages against the JSON API calls that carry the same data, on one
/// server (its own process) in one run: the leaderboard page at the player's own rank on a board of `--players`
/// entries against `POST /v1/leaderboards/query` for the same 25 ranks, and the player's own page ("me": alias,
/// status, points, recent games) against `POST /v1/players/lookup` for the player. Goal: a page within 2× the API's cost,
/// the server process's CPU time per request.
struct AppBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "app", abstract: "Game Center app pages/s and p99 (leaderboard on a large board, the player's own page) vs the JSON API."
    )

    @Option(help: "Entries on the leaderboard.") var players = 1_000_000
    @Option(help: "Seconds to measure each target.") var seconds = 5.0
    @Option(help: "Requests in flight at once.") var concurrency = 16
    @Option(help: "The gamecenter executable (default: the one beside this one).") var gamecenter: String?

    func run() async throws {
        var logger = Logger(label: "bench") { StreamLogHandler.standardError(label: $0) }
        logger.logLevel = .warning
        let here = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        let executable = gamecenter ?? here.deletingLastPathComponent().appendingPathComponent("gamecenter").path
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("gamecenter-bench-app-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let bundleID = "com.example.app"
        let database = "sqlite:\(folder.path)/app.sqlite"
        let filling = ContinuousClock.now
        try await Database.withDatabase(url: database, logger: logger) { db in
            try await db.fillLeaderboard(
                bundleID: bundleID, category: "points", playerPrefix: "B:", count: players, now: Int64(Date().timeIntervalSince1970 * 1000))
        }
        let manifest = folder.appendingPathComponent("app.yaml")
        try """
        bundleID: \(bundleID)
        name: App bench
        leaderboards:
          - { category: points, default: true, title: { en: Points }, format: integer, suffix: { en: { one: " point", other: " points" } } }
        achievements:
          - { identifier: first, title: { en: First }, unachievedDescription: { en: Not yet }, achievedDescription: { en: Done }, points: 10 }

        """.write(to: manifest, atomically: true, encoding: .utf8)
        let filled = secondsSince(filling)
        let server = try ChildServer(
            executable: executable,
            arguments: [
                "serve", "--port", "0", "--udp-port", "0", "--database", database, "--games", manifest.path, "--log-level", "warning",
                "--rate-limit", "sign-ins=0/1", "--rate-limit", "sign-ups=0/1", "--rate-limit", "reports=0/1",
            ])
        defer { server.stop() }
        print(
            String(
                format: "gamecenter-bench app — a board of %d entries (filled in %.0f s), %d requests in flight, %.0f s each, %d cores",
                players, filled, concurrency, seconds, ProcessInfo.processInfo.activeProcessorCount))
        var clientConfiguration = HTTPClient.Configuration()
        clientConfiguration.connectionPool.concurrentHTTP1ConnectionsPerHostSoftLimit = concurrency
        clientConfiguration.redirectConfiguration = .disallow
        let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: clientConfiguration)
        do {
            try await measure(client: client, server: server, bundleID: bundleID)
        } catch {
            try? await client.shutdown()
            throw error
        }
        try await client.shutdown()
    }

    private func measure(client: HTTPClient, server: ChildServer, bundleID: String) async throws {
        let base = "http://127.0.0.1:\(server.port)"
        // A player of the game, ranked in the middle of the board, with a status and an achievement.
        let device = [(DeviceHeader.bundleID, bundleID), (DeviceHeader.environment, "sandbox")]
        let account = "app-\(UUID().uuidString.prefix(8).lowercased())", password = "bench-password"
        let session = try await Self.json(
            client, .POST, "\(base)/v1/accounts", device, SignUpRequest(account: account, password: password, alias: "Bench player"),
            as: SessionResponse.self)
        let bearer = device + [("Authorization", "Bearer \(session.token)")]
        let scores = ScoreReportBatch(reportID: UUID().uuidString, scores: [ScoreReport(category: nil, value: 500_000, context: 0)])
        _ = try await Self.json(client, .POST, "\(base)/v1/scores", bearer, scores, as: ScoreReportResult.self)
        let progress = AchievementReportBatch(reportID: UUID().uuidString, achievements: [.init(identifier: "first", percentComplete: 100)])
        _ = try await Self.json(client, .POST, "\(base)/v1/achievements", bearer, progress, as: AchievementReportResult.self)
        let query = LeaderboardQuery(category: nil, playerScope: .global, timeScope: .allTime, rangeStart: 1, rangeLength: 1)
        let mine = try await Self.json(client, .POST, "\(base)/v1/leaderboards/query", bearer, query, as: LeaderboardPage.self)
        guard let rank = mine.localPlayerScore?.rank else { throw BenchError("the bench player has no rank") }
        let pageStart = (rank - 1) / 25 * 25 + 1
        let cookie = [("Cookie", "gc_session=\(try await Self.signIn(client, base: base, account: account, password: password))")]
        print("the player's rank: \(rank) of \(mine.maxRange); their page starts at \(pageStart)")

        let ownPage = Array(
            try WireCoding.makeEncoder().encode(
                LeaderboardQuery(category: nil, playerScope: .global, timeScope: .allTime, rangeStart: pageStart, rangeLength: 25)))
        let lookup = Array(try WireCoding.makeEncoder().encode(PlayerLookupRequest(playerIDs: [session.player.playerID])))
        let targets: [(name: String, request: LeanLoad.Request)] = [
            (
                "leaderboard page (HTML, the player's own page of 25)",
                LeanLoad.Request(port: server.port, path: "/games/\(bundleID)/leaderboards?start=\(pageStart)", headers: cookie)
            ),
            (
                "anchor: POST /v1/leaderboards/query, the same 25 ranks",
                LeanLoad.Request(port: server.port, path: "/v1/leaderboards/query", headers: bearer, body: { _, _ in ownPage })
            ),
            ("profile page (HTML: alias, status, points, recent games)", LeanLoad.Request(port: server.port, path: "/", headers: cookie)),
            (
                "anchor: POST /v1/players/lookup for the player",
                LeanLoad.Request(port: server.port, path: "/v1/players/lookup", headers: bearer, body: { _, _ in lookup })
            ),
        ]
        // The cost of a request is the server's CPU time for it over the measured seconds (requests/s also moves with
        // what the load generator, on the same cores, spends reading the larger HTML answers).
        var results: [(result: LoadRun.Result, cpuMicroseconds: Double)] = []
        for target in targets {
            let load = try LeanLoad(target.request, concurrency: concurrency)
            let measured = try await load.measure(seconds: seconds) { server.cpuSeconds() }
            let cpu = (measured.after - measured.before) / Double(max(measured.result.requests, 1)) * 1e6
            results.append((measured.result, cpu))
            print(measured.result.line(name: target.name) + String(format: ", server CPU %.0f µs/request", cpu))
        }
        for (page, api, name) in [(results[0], results[1], "leaderboard"), (results[2], results[3], "profile")] {
            let cost = page.cpuMicroseconds / api.cpuMicroseconds
            print(
                String(
                    format:
                        "%@ page: %.2f× the API's server CPU per request (%.0f µs against %.0f µs), %.2f× its requests/s, p99 %.2f ms against %.2f ms; goal ≤ 2×: %@",
                    name, cost, page.cpuMicroseconds, api.cpuMicroseconds, page.result.requestsPerSecond / api.result.requestsPerSecond,
                    page.result.p99, api.result.p99, cost <= 2 ? "met" : "NOT met"))
        }
    }

    /// Signs in through the sign-in form (its CSRF token and cookie first), as a browser does; returns the session cookie.
    static func signIn(_ client: HTTPClient, base: String, account: String, password: String) async throws -> String {
        let form = try await client.execute(HTTPClientRequest(url: "\(base)/sign-in"), timeout: .seconds(10))
        let html = String(buffer: try await form.body.collect(upTo: 1 << 20))
        guard let formCookie = cookie("gc_form", in: form.headers),
            let csrf = html.firstMatch(of: /name="csrf" value="([^"]+)"/)?.1
        else { throw BenchError("the sign-in page has no form token") }
        var request = HTTPClientRequest(url: "\(base)/sign-in")
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/x-www-form-urlencoded")
        request.headers.add(name: "Cookie", value: "gc_form=\(formCookie)")
        let fields = [("csrf", String(csrf)), ("account", account), ("password", password), ("environment", "sandbox")]
        let body = fields.map { "\($0.0)=\($0.1.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "")" }.joined(separator: "&")
        request.body = .bytes(ByteBuffer(string: body))
        let response = try await client.execute(request, timeout: .seconds(10))
        _ = try await response.body.collect(upTo: 1 << 20)
        guard let session = cookie("gc_session", in: response.headers) else {
            throw BenchError("signing in through the form failed: HTTP \(response.status.code)")
        }
        return session
    }

    private static func cookie(_ name: String, in headers: HTTPHeaders) -> String? {
        headers["Set-Cookie"].lazy.compactMap { line -> String? in
            guard let pair = line.split(separator: ";").first, pair.hasPrefix("\(name)=") else { return nil }
            return String(pair.dropFirst(name.count + 1))
        }.first
    }

    private static func json<T: Decodable>(
        _ client: HTTPClient, _ method: HTTPMethod, _ url: String, _ headers: [(String, String)], _ body: some Encodable, as: T.Type
    ) async throws -> T {
        var request = HTTPClientRequest(url: url)
        request.method = method
        request.headers.add(contentsOf: headers)
        request.headers.add(name: "Content-Type", value: "application/json")
        request.body = .bytes(ByteBuffer(bytes: try WireCoding.makeEncoder().encode(body)))
        let response = try await client.execute(request, timeout: .seconds(30))
        let bytes = try await response.body.collect(upTo: 1 << 22)
        guard response.status == .ok || response.status == .created else { throw BenchError("\(url): HTTP \(response.status.code)") }
        return try WireCoding.makeDecoder().decode(T.self, from: Data(bytes.readableBytesView))
    }
}
