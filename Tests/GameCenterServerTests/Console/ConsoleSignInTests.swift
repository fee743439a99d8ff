import Foundation
import GameCenterProtocol
import GameCenterStorage
import HTTPTypes
import Testing
@testable import GameCenterServer

/// The console's own users and cookie, its sign-in throttle, and its CSRF-checked forms.
@Suite struct ConsoleSignInTests {
    @Test func consoleUsersSignInWithTheirOwnCookieAndSignOut() async throws {
        try await TestServer.run { server in
            var stranger = PageClient(server)
            let refused = try await stranger.get("/console/players")
            #expect(refused.status == .seeOther && refused.headers[.location] == "/console/sign-in")
            // A player's web session is no console session.
            var player = try await WebAppAccountTests.signUp(server, alias: "Just A Player")
            #expect(try await player.get("/console/players").headers[.location] == "/console/sign-in")

            try await server.services.consoleUsers.add(name: "ada", role: .support, password: ConsoleTesting.password, actor: "cli")
            var browser = PageClient(server)
            let form = try await browser.get("/console/sign-in")
            #expect(form.status == .ok && form.html.contains("Console user name"))
            let wrong = try await browser.post("/console/sign-in", [("csrf", form.csrf ?? ""), ("name", "ada"), ("password", "not-the-password")])
            #expect(wrong.status == .unauthorized && wrong.html.contains("the account name or password is wrong"))
            let answer = try await browser.post("/console/sign-in", [("csrf", form.csrf ?? ""), ("name", "ada"), ("password", ConsoleTesting.password)])
            #expect(answer.status == .seeOther)
            let cookie = try #require(answer.setCookie(ConsoleResponder.cookieName))
            #expect(cookie.contains("HttpOnly") && cookie.contains("SameSite=Strict") && cookie.contains("Path=/console"))
            let players = try await browser.get("/console/players")
            #expect(players.status == .ok && players.html.contains("ada") && players.html.contains("support"))
            #expect(players.headers[.contentSecurityPolicy]?.contains("frame-ancestors 'none'") == true)

            // An unknown address under /console is the console's page, with the reader's console chrome.
            browser.headers[.accept] = "text/html"
            let missing = try await browser.get("/console/nowhere")
            #expect(missing.status == .notFound && missing.html.contains("Studio console") && missing.html.contains("ada"))
            browser.headers[.accept] = nil
            let token = try #require(browser.cookies[ConsoleResponder.cookieName])
            let out = try await browser.post("/console/sign-out", [("csrf", players.csrf ?? "")])
            #expect(out.status == .seeOther && out.headers[.location] == "/console/sign-in")
            #expect(browser.cookies[ConsoleResponder.cookieName] == nil)
            // The token no longer opens anything, even if a browser kept it.
            browser.cookies[ConsoleResponder.cookieName] = token
            #expect(try await browser.get("/console/players").headers[.location] == "/console/sign-in")
        }
    }

    @Test func removedUsersSessionsEndAtOnce() async throws {
        try await TestServer.run { server in
            var browser = try await ConsoleTesting.signIn(server, role: .owner, name: "gone-soon")
            #expect(try await browser.get("/console/players").status == .ok)
            try await server.services.consoleUsers.remove(name: "gone-soon", actor: "cli")
            #expect(try await browser.get("/console/players").headers[.location] == "/console/sign-in")
            await #expect(throws: APIError.self) { try await server.services.consoleUsers.remove(name: "gone-soon", actor: "cli") }
        }
    }

    @Test func consoleUsersFollowTheirRules() async throws {
        try await TestServer.run { server in
            let users = server.services.consoleUsers
            for (name, password) in [("", ConsoleTesting.password), ("has space", ConsoleTesting.password), ("ok-name", "short")] {
                await #expect { try await users.add(name: name, role: .owner, password: password, actor: "cli") } throws: { error in
                    (error as? APIError)?.code == .consoleInvalidUser
                }
            }
            try await users.add(name: "twice", role: .owner, password: ConsoleTesting.password, actor: "cli")
            await #expect { try await users.add(name: "twice", role: .support, password: ConsoleTesting.password, actor: "cli") } throws: { error in
                (error as? APIError)?.code == .consoleUserExists
            }
            #expect(try await users.list().map(\.name).contains("twice"))
        }
    }

    @Test func signInsAreThrottledLikePlayers() async throws {
        var policy = TestServer.fastPolicy
        policy.allowedFailures = 3
        try await TestServer.run(policy: policy) { server in
            try await server.services.consoleUsers.add(name: "grace", role: .owner, password: ConsoleTesting.password, actor: "cli")
            var browser = PageClient(server)
            for _ in 0..<3 {
                let wrong = try await browser.submit("/console/sign-in", on: "/console/sign-in", [("name", "grace"), ("password", "wrong-password")])
                #expect(wrong.status == .unauthorized)
            }
            let locked = try await browser.submit("/console/sign-in", on: "/console/sign-in", [("name", "grace"), ("password", ConsoleTesting.password)])
            #expect(locked.status == .tooManyRequests)
            #expect(locked.html.contains("too many failed sign-ins"))
            #expect(locked.headers[.retryAfter] != nil)
            #expect(browser.cookies[ConsoleResponder.cookieName] == nil)
            // A player with the same account name is throttled apart.
            _ = try await server.signUp(account: "grace")
            #expect(try await server.send(.post, "/v1/sessions", SignInRequest(account: "grace", password: "password-1")).status == .ok)
        }
    }

    @Test func formsWithoutTheirSessionsTokenAreRefused() async throws {
        try await TestServer.run { server in
            let player = try await server.signUp(alias: "Target")
            var browser = try await ConsoleTesting.signIn(server, role: .owner)
            var other = try await ConsoleTesting.signIn(server, role: .owner)
            let othersToken = try await ConsoleTesting.token(&other, player: player.player.playerID)
            for fields in [[], [("csrf", othersToken)], [("csrf", "forged")]] as [[(String, String)]] {
                let answer = try await browser.post(ConsolePlayerPages.link(player.player.playerID) + "/ban", fields + [("reason", "cheating")])
                #expect(answer.status == .forbidden)
                #expect(answer.html.contains("this form expired or did not come from this site"))
            }
            #expect(try await server.services.bans.ban(of: player.player.playerID) == nil)
            // The sign-in form is checked too.
            var stranger = PageClient(server)
            _ = try await stranger.get("/console/sign-in")
            #expect(try await stranger.post("/console/sign-in", [("name", "x"), ("password", "y")]).status == .forbidden)
        }
    }
}
