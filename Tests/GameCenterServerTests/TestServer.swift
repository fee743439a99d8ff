import Foundation
import GameCenterProtocol
import GameCenterStorage
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOEmbedded
import Testing
@testable import GameCenterServer

/// An in-process server on a fresh SQLite database with two games: `com.example.open` and `com.example.keyed`
/// (client key `secret-key-1`). Requests go through Hummingbird's router test client.
struct TestServer {
    static let games: String = {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("server-games-\(UUID().uuidString)")
        try! FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try! openManifest.write(to: folder.appendingPathComponent("open.yaml"), atomically: true, encoding: .utf8)
        try! medalPNG.write(to: folder.appendingPathComponent("medal.png"))
        try! "bundleID: com.example.keyed\nname: Keyed Game\nclientKey: secret-key-1\n"
            .write(to: folder.appendingPathComponent("keyed.yaml"), atomically: true, encoding: .utf8)
        try! savesManifest.write(to: folder.appendingPathComponent("saves.yaml"), atomically: true, encoding: .utf8)
        try! seasonsManifest.write(to: folder.appendingPathComponent("seasons.yaml"), atomically: true, encoding: .utf8)
        return folder.path
    }()

    /// PNG bytes (a valid signature and header is all the server checks).
    static let medalPNG = Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52])

    static let openManifest = """
        bundleID: com.example.open
        name: Open Game
        defaultLocale: en
        leaderboards:
          - category: open.points
            default: true
            title: { en: "Points", de: "Punkte" }
            format: integer
            suffix: { en: { one: " point", other: " points" } }
          - category: open.time
            title: { en: "Time" }
            format: elapsedHundredth
            order: ascending
          - category: open.map1
            title: { en: "Map 1" }
            format: integer
          - category: open.map2
            title: { en: "Map 2" }
            format: integer
          - category: open.bounded
            title: { en: "Bounded" }
            format: integer
            minValue: 0
            maxValue: 1000
        aggregates:
          - category: open.maps
            title: { en: "Maps" }
            members: [open.map1, open.map2]
        achievements:
          - identifier: open.first
            title: { en: "First", de: "Erster", ja: "最初" }
            unachievedDescription: { en: "Do it once.", de: "Einmal tun." }
            achievedDescription: { en: "Done once.", de: "Einmal getan." }
            points: 10
            image: medal.png
          - identifier: open.many
            title: { en: "Many" }
            unachievedDescription: { en: "Do it often." }
            achievedDescription: { en: "Done often." }
            points: 40
          - identifier: open.secret
            title: { en: "Secret" }
            unachievedDescription: { en: "???" }
            achievedDescription: { en: "Found it." }
            points: 50
            hidden: true
            image: medal.png
        """

    /// A game with small limits: saved games, and two turn-based matches at once per player.
    static let savesManifest = """
        bundleID: com.example.saves
        name: Saves Game
        turnBased:
          openMatchesPerPlayer: 2
        savedGames:
          saveMaximumBytes: 4096
          totalMaximumBytes: 5000
          maximumSaves: 2
          nameMaximumLength: 8
        activities:
          - identifier: saves.party
            title: { en: "Saves party" }
            minPlayers: 2
            maxPlayers: 2
            supportsPartyCode: true
        """

    /// Recurring leaderboards: `seasons.daily` (every day at midnight in New York, the last 3 kept, lifetime bests),
    /// `seasons.sprint` (Apple's rule: an hour every two hours from 2026-01-01, ascending), a hidden board, and
    /// `seasons.cup`, a daily (UTC) tournament of 2 entrants with 2 attempts each who must join first; challenges
    /// `seasons.beat` (on the hidden classic board, 2 hours or a day, 2 attempts, 3 players) and `seasons.duel`
    /// (repeatable, on the daily board); activities `seasons.party` (party codes, 2 to 3 players) and `seasons.solo`.
    static let seasonsManifest = """
        bundleID: com.example.seasons
        name: Seasons Game
        leaderboards:
          - category: seasons.daily
            default: true
            title: { en: "Daily" }
            description: { en: "Best score of the day in New York" }
            format: integer
            recurring:
              every: day
              at: "00:00"
              timeZone: America/New_York
              keep: 3
              lifetimeBest: true
          - category: seasons.sprint
            title: { en: "Sprint" }
            format: integer
            order: ascending
            recurring:
              start: "2026-01-01T00:00:00Z"
              durationSeconds: 3600
              intervalSeconds: 7200
          - category: seasons.secret
            title: { en: "Secret" }
            format: integer
            hidden: true
          - category: seasons.cup
            title: { en: "Cup" }
            format: integer
            recurring:
              every: day
              tournament: { maxSize: 2, attempts: 2, joinRequired: true }
        leaderboardSets:
          - identifier: seasons.all
            title: { en: "Every board", de: "Alle Bestenlisten" }
            groupIdentifier: seasons.group
            leaderboards: [seasons.sprint, seasons.secret, seasons.daily]
          - identifier: seasons.quick
            title: { en: "Quick" }
            leaderboards: [seasons.sprint]
        challenges:
          - identifier: seasons.beat
            title: { en: "Beat my best" }
            details: { en: "The best secret score wins" }
            leaderboard: seasons.secret
            durations: [2h, 1d]
            attempts: 2
            maxParticipants: 3
          - identifier: seasons.duel
            title: { en: "Today's duel" }
            leaderboard: seasons.daily
            repeatable: true
        activities:
          - identifier: seasons.party
            title: { en: "Party" }
            minPlayers: 2
            maxPlayers: 3
            playStyle: synchronous
            supportsPartyCode: true
            defaultProperties: { map: forest }
          - identifier: seasons.solo
            title: { en: "Solo" }
        """

    /// The admin key of servers started with `admin: true`.
    static let adminKey = "test-admin-key-0123456789"

    /// Runs `body` against a fresh server; `admin` turns on the admin routes (``adminKey``) and the movable clock.
    /// With `databaseURL` the server is a node (`nodeID`) on that database instead of its own SQLite file, so two
    /// servers in one test can share a PostgreSQL database as two nodes do (hearing each other by `LISTEN/NOTIFY`, or by
    /// reading each other's notices every `nodePollInterval`). `monotonic` times the matchmaking queue; `clockInterval`
    /// is how often the server's clocks (turn timeouts, occurrences, challenges) act. `games` is the manifest folder.
    static func run(
        policy: AccountPolicy = TestServer.fastPolicy, rateLimits: RateLimits = RateLimits(), admin: Bool = false,
        databaseURL: String? = nil, nodeID: String? = nil, nodePollInterval: Duration? = nil, monotonic: MonotonicClock = .system(),
        clockInterval: Duration = .seconds(1), games: String = TestServer.games, _ body: @Sendable @escaping (Client) async throws -> Void
    ) async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("server-db-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let configuration = { () -> GameCenterApp.Configuration in
            var configuration = GameCenterApp.Configuration()
            configuration.nodeID = nodeID
            configuration.nodePollInterval = nodePollInterval
            configuration.accounts = policy
            configuration.rateLimits = rateLimits
            configuration.occurrenceCheckInterval = clockInterval
            configuration.turnTimeoutCheckInterval = clockInterval
            if admin {
                configuration.adminKey = adminKey
                configuration.testClock = true
            }
            return configuration
        }()
        let registry = try GameRegistry(path: games)
        try await Database.withDatabase(url: databaseURL ?? "sqlite:\(folder.path)/db.sqlite") { database in
            let services = try await GameCenterApp.Services(
                database: database, registry: registry, configuration: configuration, monotonic: monotonic, logger: Logger(label: "test"))
            let app = GameCenterApp.makeApplication(services, configuration: configuration, logger: Logger(label: "test"))
            let responder = GameCenterApp.makeRouter(services, configuration: configuration).buildResponder()
            try await app.test(.router) { client in try await body(Client(client: client, responder: responder, services: services)) }
        }
    }

    /// bcrypt at its lowest cost: the rules are the same, the tests are faster.
    static var fastPolicy: AccountPolicy {
        var policy = AccountPolicy()
        policy.bcryptCost = 4
        return policy
    }

    /// A device-like client: sends the device headers (and a token) and decodes answers.
    struct Client: Sendable {
        let client: any TestClientProtocol
        /// The server's routes, for requests sent from a ``remoteAddress`` (the test client's connections have none).
        let responder: RouterResponder<AppRequestContext>
        /// The server's features, for tests that look behind the routes.
        let services: GameCenterApp.Services
        /// The address requests come from; nil for none.
        var remoteAddress: SocketAddress?

        /// Sends raw bytes (`application/octet-stream`), with `extraHeaders`.
        func call(
            _ method: HTTPRequest.Method, _ path: String, bytes: Data, token: String, bundleID: String = "com.example.open", extraHeaders: HTTPFields = [:]
        ) async throws -> Answer {
            var headers = extraHeaders
            headers[.authorization] = "Bearer \(token)"
            headers[.contentType] = "application/octet-stream"
            headers[HTTPField.Name(DeviceHeader.bundleID)!] = bundleID
            headers[HTTPField.Name(DeviceHeader.environment)!] = "sandbox"
            let response = try await client.executeRequest(uri: path, method: method, headers: headers, body: ByteBuffer(bytes: bytes))
            return Answer(status: response.status, headers: response.headers, body: Data(response.body.readableBytesView))
        }

        /// This client, sending from `ip` (port 40000).
        func from(_ ip: String) throws -> Client {
            var client = self
            client.remoteAddress = try SocketAddress(ipAddress: ip, port: 40000)
            return client
        }

        struct Answer: Sendable {
            let status: HTTPResponse.Status
            let headers: HTTPFields
            let body: Data

            func decode<T: Decodable>(_ type: T.Type) throws -> T { try WireCoding.makeDecoder().decode(T.self, from: body) }
            var error: ErrorBody? { try? decode(ErrorBody.self) }
        }

        func call(
            _ method: HTTPRequest.Method, _ path: String, json: String? = nil, token: String? = nil,
            bundleID: String? = "com.example.open", environment: String? = "sandbox", extraHeaders: HTTPFields = [:]
        ) async throws -> Answer {
            var headers = extraHeaders
            if let bundleID { headers[HTTPField.Name(DeviceHeader.bundleID)!] = bundleID }
            if let environment { headers[HTTPField.Name(DeviceHeader.environment)!] = environment }
            if let token { headers[.authorization] = "Bearer \(token)" }
            if json != nil { headers[.contentType] = "application/json" }
            if let remoteAddress { return try await call(method, path, headers: headers, body: json.map { ByteBuffer(string: $0) }, from: remoteAddress) }
            let response = try await client.executeRequest(uri: path, method: method, headers: headers, body: json.map { ByteBuffer(string: $0) })
            return Answer(status: response.status, headers: response.headers, body: Data(response.body.readableBytesView))
        }

        /// Runs a request through the routes with a connection whose peer is `address`.
        private func call(
            _ method: HTTPRequest.Method, _ path: String, headers: HTTPFields, body: ByteBuffer?,
            from address: SocketAddress
        ) async throws -> Answer {
            let channel = NIOAsyncTestingChannel()
            channel.remoteAddress = address
            let context = AppRequestContext(source: .init(channel: channel, logger: Logger(label: "test")))
            let request = Request(
                head: HTTPRequest(method: method, scheme: "http", authority: "localhost", path: path, headerFields: headers),
                body: RequestBody(buffer: body ?? ByteBuffer()))
            let response = try await responder.respond(to: request, context: context)
            let collected = CollectedBody()
            try await response.body.write(collected)
            return Answer(status: response.status, headers: response.headers, body: Data(collected.buffer.withLockedValue { $0.readableBytesView }))
        }

        func send<T: Encodable>(
            _ method: HTTPRequest.Method, _ path: String, _ value: T, token: String? = nil,
            bundleID: String = "com.example.open", environment: String = "sandbox"
        ) async throws -> Answer {
            let json = String(decoding: try WireCoding.makeEncoder().encode(value), as: UTF8.self)
            return try await call(method, path, json: json, token: token, bundleID: bundleID, environment: environment)
        }

        /// Signs up a new account with a unique name and returns its session.
        func signUp(
            alias: String = "Player", underage: Bool = false, environment: String = "sandbox",
            account: String? = nil, password: String = "password-1", bundleID: String = "com.example.open"
        ) async throws -> SessionResponse {
            let name = account ?? "user-\(UUID().uuidString.prefix(8).lowercased())"
            let answer = try await send(
                .post, "/v1/accounts", SignUpRequest(account: name, password: password, alias: alias, underage: underage),
                bundleID: bundleID, environment: environment)
            #expect(answer.status == .created, "\(String(decoding: answer.body, as: UTF8.self))")
            return try answer.decode(SessionResponse.self)
        }
    }
}

/// A response body kept in memory.
struct CollectedBody: ResponseBodyWriter {
    let buffer = NIOLockedValueBox(ByteBuffer())

    func write(_ part: ByteBuffer) async throws {
        buffer.withLockedValue { _ = $0.writeImmutableBuffer(part) }
    }

    func finish(_ trailingHeaders: HTTPFields?) async throws {}
}

/// Asserts an error answer: status, specific code and GK code.
func expectError(
    _ answer: TestServer.Client.Answer, _ status: HTTPResponse.Status, _ code: String, _ gkCode: ErrorCode,
    sourceLocation: SourceLocation = #_sourceLocation
) {
    #expect(answer.status == status, "body: \(String(decoding: answer.body, as: UTF8.self))", sourceLocation: sourceLocation)
    #expect(answer.error?.code == code, sourceLocation: sourceLocation)
    #expect(answer.error?.gkCode == gkCode.rawValue, sourceLocation: sourceLocation)
    #expect(answer.error?.message.isEmpty == false, sourceLocation: sourceLocation)
}
