import Foundation
import GameCenterProtocol
import HTTPTypes
import Testing
@testable import GameCenterServer

/// Links from a game to the Game Center app's pages (the standard screens' `present()`): each opens its page signed
/// in, once, within a minute, while the game's session lives, and only as the player who asked.
@Suite struct AppTicketTests {
    static func ticket(_ server: TestServer.Client, _ token: String, _ request: AppTicketRequest) async throws -> TestServer.Client.Answer {
        try await server.send(.post, "/v1/app-tickets", request, token: token)
    }

    /// The screen presentations a player's events carry, in order: change and time scope.
    static func presentations(_ server: TestServer.Client, playerID: String) async throws -> [ScreenPresentation] {
        try await server.services.database.read { try await $0.events(playerID: playerID, after: 0, limit: 1000) }
            .filter { $0.kind == EventKind.screenPresentation.rawValue }
            .map { try WireCoding.makeDecoder().decode(ScreenPresentation.self, from: Data($0.payload.utf8)) }
    }

    /// A link's browser keeps its presentation (the `gc_screen` cookie): its pages show Done, and each page shown, a
    /// page left and Done become the player's `screenPresentation` events, which the game's screen follows. Pages of
    /// a browser that did not come through a link record nothing, and after Done nothing more.
    @Test func aPresentedPageTellsTheGameWhatWasShownLeftAndDone() async throws {
        try await TestServer.run { server in
            let player = try await server.signUp(alias: "Presenter")
            let link = try await Self.ticket(server, player.token, AppTicketRequest(screen: .leaderboards, category: "open.time"))
                .decode(AppTicket.self)
            let presentationID = try #require(link.presentationID)
            #expect(presentationID.count == 32)

            var browser = PageClient(server)
            let opened = try await browser.get(link.path)
            let screenCookie = try #require(opened.setCookie("gc_screen"))
            #expect(screenCookie.contains("HttpOnly") && screenCookie.contains("Max-Age=3600"))
            #expect(browser.cookies["gc_screen"] == presentationID)
            let page = try await browser.get(try #require(opened.headers[.location]))
            #expect(page.html.contains(#"<form method="post" action="/screen/done" class="inline" id="screen-done">"#))
            _ = try await browser.get("/games/com.example.open/leaderboards?category=open.time&time=week&players=friends")
            _ = try await browser.get("/friends")
            #expect(try await browser.post("/screen/left", [("csrf", page.csrf ?? "")]).status == .noContent)
            let done = try await browser.post("/screen/done", [("csrf", page.csrf ?? "")])
            #expect(done.status == .ok && done.html.contains("go back to your game") && !done.html.contains("screen-done"))
            #expect(browser.cookies["gc_screen"] == nil)
            _ = try await browser.get("/friends")

            let seen = try await Self.presentations(server, playerID: player.player.playerID)
            #expect(seen.allSatisfy { $0.presentationID == presentationID })
            #expect(seen.map(\.change) == [.shown, .shown, .shown, .left, .done])
            #expect(seen[0].bundleID == "com.example.open" && seen[0].category == "open.time" && seen[0].timeScope == .today)
            #expect(seen[1].category == "open.time" && seen[1].timeScope == .week)
            #expect(seen[2].bundleID == nil && seen[2].category == nil && seen[2].timeScope == nil)

            // A page signed in another way is no game's screen: no Done, nothing recorded; a forged cookie is ignored.
            var plain = try await WebAppAccountTests.signUp(server, alias: "Plain")
            #expect(!(try await plain.get("/friends").html.contains("screen-done")))
            plain.cookies["gc_screen"] = "not-an-id"
            #expect(!(try await plain.get("/friends").html.contains("screen-done")))
            #expect(try await Self.presentations(server, playerID: player.player.playerID).count == 5)
        }
    }

    @Test func aLinkOpensItsPageSignedInOnce() async throws {
        try await TestServer.run { server in
            let player = try await server.signUp(alias: "Linker")
            _ = try await LeaderboardTests.report(server, player.token, [LeaderboardTests.score(42, "open.time")])
            let answer = try await Self.ticket(server, player.token, AppTicketRequest(screen: .leaderboards, category: "open.time", timeScope: .week))
            #expect(answer.status == .ok)
            let link = try answer.decode(AppTicket.self)
            #expect(link.path.hasPrefix("/app-tickets/"))

            var browser = PageClient(server)
            let opened = try await browser.get(link.path)
            #expect(opened.status == .seeOther)
            #expect(opened.headers[.location] == "/games/com.example.open/leaderboards?category=open.time&time=week")
            #expect(opened.headers[.cacheControl] == "no-store")
            #expect(opened.setCookie("gc_session")?.contains("HttpOnly") == true)
            let page = try await browser.get(try #require(opened.headers[.location]))
            #expect(page.status == .ok)
            #expect(page.html.contains("Linker"))

            // A second use, by this browser or another, gets the expired-link page and no session.
            var other = PageClient(server)
            let again = try await other.get(link.path)
            #expect(again.status == .gone)
            #expect(again.html.contains("already used or has expired"))
            #expect(again.setCookie("gc_session") == nil)
            #expect(try await other.get("/account").status == .seeOther)
        }
    }

    @Test func aLinkExpiresAfterAMinuteAndWithTheGamesSession() async throws {
        try await TestServer.run(admin: true) { server in
            let player = try await server.signUp()
            let late = try await Self.ticket(server, player.token, AppTicketRequest(screen: .achievements)).decode(AppTicket.self)
            let fresh = try await Self.ticket(server, player.token, AppTicketRequest(screen: .invitations)).decode(AppTicket.self)
            try await LeaderboardTests.advanceClock(server, hours: Double(Limits.appTicketLifetimeSeconds + 1) / 3600)
            var browser = PageClient(server)
            #expect(try await browser.get(late.path).status == .gone)

            let live = try await Self.ticket(server, player.token, AppTicketRequest(screen: .invitations)).decode(AppTicket.self)
            #expect(try await server.call(.delete, "/v1/sessions/current", token: player.token).status == .noContent)
            #expect(try await browser.get(live.path).status == .gone)
            #expect(try await browser.get(fresh.path).status == .gone)
            #expect(try await browser.get("/app-tickets/not-a-ticket").status == .gone)
        }
    }

    /// The web session a link opens ends no later than the game's: a link cannot prolong a sign-in. The game signed in
    /// a day before the link is used, so a web session of a full lifetime would outlast it by that day.
    @Test func theWebSessionEndsWithTheGamesSession() async throws {
        try await TestServer.run(admin: true) { server in
            let player = try await server.signUp()
            try await LeaderboardTests.advanceClock(server, hours: 24)
            let link = try await Self.ticket(server, player.token, AppTicketRequest(screen: .achievements)).decode(AppTicket.self)
            var browser = PageClient(server)
            let opened = try await browser.get(link.path)
            let maxAge = try #require(opened.setCookie("gc_session")?.split(separator: ";").first { $0.contains("Max-Age") })
            let seconds = try #require(Int(maxAge.split(separator: "=")[1]))
            let gameSessionLeft = player.expiresAt.timeIntervalSince(try await LeaderboardTests.serverNow(server))
            #expect(seconds > 0 && Double(seconds) <= gameSessionLeft + 1, "cookie \(seconds) s, the game's session \(gameSessionLeft) s")
            #expect(try await server.call(.delete, "/v1/sessions/current", token: player.token).status == .noContent)
            #expect(try await browser.get("/account").status == .ok)  // its own session, ending with the game's at the latest
        }
    }

    @Test func theFriendRequestPageComesWritten() async throws {
        try await TestServer.run { server in
            let player = try await server.signUp()
            let link = try await Self.ticket(
                server, player.token, AppTicketRequest(screen: .friendRequest, recipient: "Bo & Co", message: "play tonight?")
            ).decode(AppTicket.self)
            var browser = PageClient(server)
            let opened = try await browser.get(link.path)
            #expect(opened.headers[.location] == "/friends?to=Bo%20%26%20Co&message=play%20tonight%3F")
            let page = try await browser.get(try #require(opened.headers[.location]))
            #expect(page.html.contains(#"value="Bo &amp; Co""#))
            #expect(page.html.contains("play tonight?"))
        }
    }

    @Test func badLinkRequestsAreRefused() async throws {
        try await TestServer.run { server in
            let player = try await server.signUp()
            expectError(
                try await Self.ticket(server, player.token, AppTicketRequest(screen: .leaderboards, category: "open.nope")),
                .notFound, "leaderboard.unknown_category", .invalidParameter)
            expectError(
                try await Self.ticket(server, player.token, AppTicketRequest(screen: .friendRequest, recipient: String(repeating: "x", count: 65))),
                .badRequest, "request.invalid_parameter", .invalidParameter)
            expectError(
                try await Self.ticket(server, player.token, AppTicketRequest(screen: .friendRequest, message: String(repeating: "x", count: 281))),
                .badRequest, "request.invalid_parameter", .invalidParameter)
            expectError(
                try await server.call(.post, "/v1/app-tickets", json: #"{"screen": "settings"}"#, token: player.token),
                .badRequest, "request.malformed_body", .invalidParameter)
            expectError(
                try await server.send(.post, "/v1/app-tickets", AppTicketRequest(screen: .achievements)), .unauthorized, "account.not_authenticated",
                .notAuthenticated)
            // At most ten live links per player.
            for _ in 0..<AppTicketService.maximumLiveTickets {
                #expect(try await Self.ticket(server, player.token, AppTicketRequest(screen: .achievements)).status == .ok)
            }
            expectError(
                try await Self.ticket(server, player.token, AppTicketRequest(screen: .achievements)), .tooManyRequests, "request.rate_limited",
                .communicationsFailure)
        }
    }
}
