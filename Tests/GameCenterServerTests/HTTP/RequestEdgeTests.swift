import Foundation
import GameCenterProtocol
import GameCenterStorage
import HTTPTypes
import Logging
import Testing
import Yams
@testable import GameCenterServer

/// What every route does with bad input at the edge: a clear error, never a crash.
@Suite struct RequestEdgeTests {
    @Test func unknownRoutesAnswerNotFoundWithAnError() async throws {
        try await TestServer.run { client in
            expectError(try await client.call(.get, "/v1/nope"), .notFound, "request.unknown_route", .notSupported)
            expectError(try await client.call(.get, "/nothing/here"), .notFound, "request.unknown_route", .notSupported)
        }
    }

    @Test func theDeviceMustNameAKnownGameAndEnvironment() async throws {
        try await TestServer.run { client in
            expectError(try await client.call(.get, "/v1/game", bundleID: nil), .badRequest, "game.missing", .gameUnrecognized)
            expectError(try await client.call(.get, "/v1/game", bundleID: "com.example.unknown"), .notFound, "game.unrecognized", .gameUnrecognized)
            expectError(try await client.call(.get, "/v1/game", environment: nil), .badRequest, "request.invalid_parameter", .invalidParameter)
            expectError(try await client.call(.get, "/v1/game", environment: "production"), .badRequest, "request.invalid_parameter", .invalidParameter)
            let game = try await client.call(.get, "/v1/game", environment: "live")
            #expect(try game.decode(GameSummary.self) == GameSummary(bundleID: "com.example.open", name: "Open Game", environment: .live, defaultLocale: "en"))
        }
    }

    @Test func aGameWithAClientKeyRequiresIt() async throws {
        try await TestServer.run { client in
            expectError(try await client.call(.get, "/v1/game", bundleID: "com.example.keyed"), .forbidden, "game.client_key_rejected", .gameUnrecognized)
            let wrong: HTTPFields = [HTTPField.Name(DeviceHeader.clientKey)!: "wrong-key-123"]
            expectError(
                try await client.call(.get, "/v1/game", bundleID: "com.example.keyed", extraHeaders: wrong),
                .forbidden, "game.client_key_rejected", .gameUnrecognized)
            let right: HTTPFields = [HTTPField.Name(DeviceHeader.clientKey)!: "secret-key-1"]
            #expect(try await client.call(.get, "/v1/game", bundleID: "com.example.keyed", extraHeaders: right).status == .ok)
        }
    }

    @Test func malformedBodiesGetInvalidParameterNamingTheProblem() async throws {
        try await TestServer.run { client in
            expectError(try await client.call(.post, "/v1/accounts", json: "{not json"), .badRequest, "request.malformed_body", .invalidParameter)
            let missing = try await client.call(.post, "/v1/accounts", json: #"{"account":"abcdef","password":"password-1"}"#)
            expectError(missing, .badRequest, "request.malformed_body", .invalidParameter)
            #expect(missing.error?.message.contains("alias") == true)
            let wrongType = try await client.call(.post, "/v1/accounts", json: #"{"account":5,"password":"password-1","alias":"A"}"#)
            expectError(wrongType, .badRequest, "request.malformed_body", .invalidParameter)
            #expect(wrongType.error?.message.contains("account") == true)
            expectError(try await client.call(.post, "/v1/accounts", json: "[]"), .badRequest, "request.malformed_body", .invalidParameter)
            expectError(try await client.call(.post, "/v1/accounts"), .badRequest, "request.malformed_body", .invalidParameter)
        }
    }

    /// Decoding failures are told in the project's words: the field, what was wrong, what is allowed (they reached
    /// clients as Foundation's wording: "Value not found for `` key.", "Cannot initialize LeaderboardPlayerScope
    /// from invalid String value everyone", and 5.5 or 2⁶³ for an integer as "not valid JSON").
    @Test(
        arguments: [
            (
                #"{"playerScope":"everyone","timeScope":"allTime","rangeStart":1,"rangeLength":10}"#,
                "playerScope: 'everyone' is not one of: global, friendsOnly"
            ),
            (
                #"{"playerScope":"global","timeScope":"allTime","rangeStart":1.5,"rangeLength":10}"#,
                "rangeStart must be a whole number from -9223372036854775808 to 9223372036854775807"
            ),
            (
                #"{"playerScope":"global","timeScope":"allTime","rangeStart":9223372036854775808,"rangeLength":10}"#,
                "rangeStart must be a whole number from -9223372036854775808 to 9223372036854775807"
            ),
            (#"{"playerScope":"global","timeScope":null,"rangeStart":1,"rangeLength":10}"#, "timeScope must be a string, not null"),
            (#"{"playerScope":"global","rangeStart":1,"rangeLength":10}"#, "timeScope is required"),
            (#"{"playerScope":"global","timeScope":"allTime","rangeStart":"1","rangeLength":10}"#, "rangeStart must be a whole number"),
            (#"{"playerScope":"global","timeScope":"allTime","rangeStart":1,"rangeLength":10,"playerIDs":[1]}"#, "playerIDs[0] must be a string"),
        ] as [(String, String)])
    func decodingErrorsNameTheFieldAndWhatIsAllowed(_ body: String, _ message: String) async throws {
        try await TestServer.run { client in
            let player = try await client.signUp()
            let answer = try await client.call(.post, "/v1/leaderboards/query", json: body, token: player.token)
            expectError(answer, .badRequest, "request.malformed_body", .invalidParameter)
            #expect(answer.error?.message == message)
        }
    }

    @Test func oversizedBodiesAreRefused() async throws {
        try await TestServer.run { client in
            let huge = #"{"account":"abcdef","password":"password-1","alias":""# + String(repeating: "x", count: 70_000) + #""}"#
            expectError(try await client.call(.post, "/v1/accounts", json: huge), .contentTooLarge, "request.body_too_large", .invalidParameter)
        }
    }

    @Test func theOpenAPIDocumentDescribesEveryRoute() async throws {
        let document = try #require(try Yams.load(yaml: OpenAPIDocument.text) as? [String: Any])
        #expect(document["openapi"] as? String == "3.1.0")
        let paths = try #require(document["paths"] as? [String: [String: Any]])
        let documented = Set(paths.flatMap { path, operations in operations.keys.map { "\($0.uppercased()) \(path)" } })
        try await TestServer.run { client in
            let answer = try await client.call(.get, "/openapi.yaml", bundleID: nil)
            #expect(answer.status == .ok)
        }
        let configuration = GameCenterApp.Configuration()
        let registry = try GameRegistry(path: nil)
        try await Database.withDatabase(url: "sqlite::memory:") { database in
            let router = GameCenterApp.makeRouter(
                try await .init(database: database, registry: registry, configuration: configuration, logger: Logger(label: "test")),
                configuration: configuration)
            let routes = Set(
                router.routes.map { route in
                    "\(route.method) \(route.path.description.hasPrefix("/") ? "" : "/")\(route.path.description)"
                        .replacingOccurrences(of: "{", with: "{").replacingOccurrences(of: ":", with: "")
                })
            #expect(!routes.isEmpty)
            // The web app's pages are HTML for browsers, not part of the JSON API (but for `GET /`).
            #expect(WebAppRoutes.pageRoutes.isSubset(of: routes), "a page route listed in WebAppRoutes.pageRoutes does not exist")
            // So are the studio console's pages, all under `/console`.
            for route in routes.subtracting(WebAppRoutes.pageRoutes) where !route.contains(" \(ConsoleRoutes.pathPrefix)") {
                #expect(documented.contains(route), "\(route) is not in openapi.yaml")
            }
            for route in documented {
                #expect(routes.contains(route), "openapi.yaml documents \(route), which the server does not have")
            }
        }
    }

    @Test func theLandingPageListsTheGames() async throws {
        try await TestServer.run { client in
            let page = try await client.call(.get, "/", bundleID: nil)
            #expect(page.status == .ok)
            let html = String(decoding: page.body, as: UTF8.self)
            #expect(html.contains("Open Game"))
            #expect(html.contains("com.example.keyed"))
            #expect(html.contains("/openapi.yaml"))
        }
    }
}
