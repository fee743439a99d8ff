import Foundation
import GameCenterProtocol
import HTTPTypes
import Testing
@testable import GameCenterServer

/// The web app's accounts: cookie sessions stored as ordinary sessions, CSRF-checked forms, sign-out everywhere.
@Suite struct WebAppAccountTests {
    /// A new account name.
    static func newAccount() -> String { "web-\(UUID().uuidString.prefix(8).lowercased())" }

    /// Signs up through the form in `environment`; returns the browser holding the session.
    static func signUp(
        _ server: TestServer.Client, account: String = newAccount(), alias: String = "Web Player",
        environment: String = "sandbox"
    ) async throws -> PageClient {
        var browser = PageClient(server)
        let answer = try await browser.submit(
            "/sign-up", on: "/sign-up",
            [("account", account), ("password", "password-1"), ("alias", alias), ("environment", environment)])
        #expect(answer.status == .seeOther, "\(answer.html)")
        #expect(browser.cookies[SessionCookies.sessionName] != nil)
        return browser
    }

    @Test func signingUpSetsAnHttpOnlyLaxSessionCookieAndNoTokenInAnyURL() async throws {
        try await TestServer.run { server in
            var browser = PageClient(server)
            let form = try await browser.get("/sign-up")
            #expect(form.status == .ok)
            let formCookie = try #require(form.setCookie(SessionCookies.signedOutFormName))
            #expect(formCookie.contains("HttpOnly") && formCookie.contains("SameSite=Lax") && formCookie.contains("Path=/"))
            let account = Self.newAccount()
            let answer = try await browser.post(
                "/sign-up",
                [
                    ("csrf", form.csrf ?? ""), ("account", account), ("password", "password-1"),
                    ("alias", "Ann"), ("environment", "sandbox"),
                ])
            #expect(answer.status == .seeOther)
            #expect(answer.headers[.location] == "/")
            let cookie = try #require(answer.setCookie(SessionCookies.sessionName))
            #expect(cookie.contains("HttpOnly"))
            #expect(cookie.contains("SameSite=Lax"))
            #expect(cookie.contains("Path=/"))
            #expect(!cookie.contains("Secure"))
            let token = try #require(browser.cookies[SessionCookies.sessionName])
            #expect(token.hasPrefix("gct_"))
            // The page session is an ordinary session: the account page lists it, and no page carries the token.
            let home = try await browser.get("/")
            #expect(home.html.contains("<h1>Ann</h1>"))
            #expect(home.html.contains("Sandbox"))
            let accountPage = try await browser.get("/account")
            #expect(accountPage.html.contains("Web browser"))
            #expect(accountPage.html.contains("this browser"))
            for page in [home, accountPage] { #expect(!page.html.contains(token)) }
            // Signing in again through the form works with the same rules.
            var second = PageClient(server)
            let signIn = try await second.submit(
                "/sign-in", on: "/sign-in",
                [("account", account.uppercased()), ("password", "password-1"), ("environment", "sandbox")])
            #expect(signIn.status == .seeOther)
            #expect(second.cookies[SessionCookies.sessionName] != nil)
        }
    }

    @Test func cookiesAreSecureOnlyWhenATrustedProxySaysTheRequestCameOverTLS() async throws {
        try await TestServer.run { server in
            var proxied = PageClient(server)
            proxied.remoteAddress = try .init(ipAddress: "127.0.0.1", port: 40000)
            proxied.headers[.xForwardedProto] = "https"
            #expect(try await proxied.get("/sign-in").setCookie(SessionCookies.signedOutFormName)?.contains("Secure") == true)
            let signUp = try await proxied.submit(
                "/sign-up", on: "/sign-up",
                [
                    ("account", Self.newAccount()), ("password", "password-1"),
                    ("alias", "Ann"),
                ])
            #expect(signUp.setCookie(SessionCookies.sessionName)?.contains("; Secure") == true)
            // Anybody else may not claim TLS.
            var direct = PageClient(server)
            direct.remoteAddress = try .init(ipAddress: "198.51.100.7", port: 40000)
            direct.headers[.xForwardedProto] = "https"
            #expect(try await direct.get("/sign-in").setCookie(SessionCookies.signedOutFormName)?.contains("Secure") == false)
        }
    }

    @Test func formsWithoutTheTokenOfTheirSessionAreRefused() async throws {
        try await TestServer.run { server in
            // Signed out: no token, or one that is not the cookie's.
            var stranger = PageClient(server)
            _ = try await stranger.get("/sign-up")
            let fields = [("account", Self.newAccount()), ("password", "password-1"), ("alias", "Ann")]
            for token in [nil, "forged"] as [String?] {
                let answer = try await stranger.post("/sign-up", (token.map { [("csrf", $0)] } ?? []) + fields)
                #expect(answer.status == .forbidden)
                #expect(answer.html.contains("this form expired or did not come from this site"))
                #expect(stranger.cookies[SessionCookies.sessionName] == nil)
            }
            // Signed in: a missing token, another session's token, or the signed-out forms' token.
            var ann = try await Self.signUp(server, alias: "Ann")
            let bob = try await Self.signUp(server, alias: "Bob")
            let bobsToken = try #require(
                try await {
                    var b = bob; return try await b.get("/account").csrf
                }())
            let signedOutToken = try #require(ann.cookies[SessionCookies.signedOutFormName])
            for token in [nil, bobsToken, signedOutToken] as [String?] {
                let answer = try await ann.post("/account/profile", (token.map { [("csrf", $0)] } ?? []) + [("alias", "Mallory"), ("status", "")])
                #expect(answer.status == .forbidden)
            }
            let answer = try await ann.post("/sign-out-everywhere", [("csrf", bobsToken)])
            #expect(answer.status == .forbidden)
            let account = try await ann.get("/account")
            #expect(account.html.contains(#"value="Ann""#))
            #expect(ann.cookies[SessionCookies.sessionName] != nil)
            // The right token works.
            let saved = try await ann.post("/account/profile", [("csrf", account.csrf ?? ""), ("alias", "Ann B"), ("status", "Playing")])
            #expect(saved.status == .seeOther)
            let updated = try await ann.get("/account")
            #expect(updated.html.contains(#"value="Ann B""#) && updated.html.contains(#"value="Playing""#))
        }
    }

    @Test func profileFormsUseTheAccountRules() async throws {
        try await TestServer.run { server in
            var browser = try await Self.signUp(server)
            let tooLong = String(repeating: "x", count: Limits.maximumStatusLength + 1)
            let answer = try await browser.submit("/account/profile", on: "/account", [("alias", "Ann"), ("status", tooLong)])
            #expect(answer.status == .badRequest)
            #expect(answer.html.contains("status messages are at most"))
            let badAlias = try await browser.submit("/account/profile", on: "/account", [("alias", "A\u{200B}nn"), ("status", "")])
            #expect(badAlias.status == .badRequest)
            #expect(badAlias.html.contains("aliases cannot contain"))
            let badName = try await PageClient(server).signUpAttempt(account: "no spaces allowed")
            #expect(badName.status == .badRequest)
            #expect(badName.html.contains("account names are"))
            #expect(badName.html.contains(#"value="no spaces allowed""#))
            let wrong = try await {
                var b = PageClient(server); return try await b.submit("/sign-in", on: "/sign-in", [("account", "nobody-here"), ("password", "password-1")])
            }()
            #expect(wrong.status == .unauthorized)
            #expect(wrong.html.contains("the account name or password is wrong"))
            #expect(!wrong.html.contains("password-1"))
        }
    }

    @Test func pageSignInsCountTowardsTheSameThrottleAsTheAPI() async throws {
        var policy = TestServer.fastPolicy
        policy.allowedFailures = 3
        try await TestServer.run(policy: policy) { server in
            let account = Self.newAccount()
            _ = try await server.signUp(alias: "Ann", account: account)
            var browser = PageClient(server)
            for _ in 0..<2 {
                let wrong = try await browser.submit(
                    "/sign-in", on: "/sign-in", [("account", account), ("password", "wrong-password"), ("environment", "sandbox")])
                #expect(wrong.status == .unauthorized)
            }
            // The API's failure is the third: the account is locked for pages and the API alike.
            expectError(
                try await server.send(.post, "/v1/sessions", SignInRequest(account: account, password: "wrong-password")),
                .unauthorized, "account.invalid_credentials", .invalidCredentials)
            let locked = try await browser.submit("/sign-in", on: "/sign-in", [("account", account), ("password", "password-1"), ("environment", "sandbox")])
            #expect(locked.status == .tooManyRequests)
            #expect(locked.html.contains("too many failed sign-ins for this account"))
            #expect(browser.cookies[SessionCookies.sessionName] == nil)
        }
    }

    /// Pages run no script but this server's `/app.js` (signed-in pages only: their live notices), never inline.
    @Test func pagesAreNeitherCachedNorFramedAndRunOnlyTheirOwnScript() async throws {
        try await TestServer.run { server in
            var browser = PageClient(server)
            for path in ["/", "/sign-in", "/sign-up"] {
                let page = try await browser.get(path)
                #expect(page.headers[.cacheControl] == "no-store")
                let policy = try #require(page.headers[.contentSecurityPolicy])
                #expect(policy.contains("frame-ancestors 'none'") && policy.contains("default-src 'none'") && policy.contains("script-src 'self';"))
                #expect(!policy.contains("unsafe"))
                #expect(!page.html.contains("<script"))
            }
            var player = try await WebAppAccountTests.signUp(server, alias: "Scripted")
            let signedIn = try await player.get("/friends")
            #expect(signedIn.html.components(separatedBy: "<script").count == 2 && signedIn.html.contains(#"<script src="/app.js" defer></script>"#))
            let script = try await browser.get("/app.js")
            #expect(
                script.status == .ok && script.headers[.contentType] == "text/javascript; charset=utf-8" && script.html.contains("new EventSource(\"/live\")"))
            let css = try await browser.get("/app.css")
            #expect(css.status == .ok && css.headers[.contentType] == "text/css; charset=utf-8" && css.html.contains("table.board"))
        }
    }

    @Test func signOutEverywhereRevokesTheAPISessionsToo() async throws {
        try await TestServer.run { server in
            let account = Self.newAccount()
            let api = try await server.signUp(alias: "Ann", account: account)
            var browser = PageClient(server)
            _ = try await browser.submit("/sign-in", on: "/sign-in", [("account", account), ("password", "password-1"), ("environment", "sandbox")])
            let accountPage = try await browser.get("/account")
            #expect(accountPage.html.contains("Open Game"))  // the API session's game
            #expect(try await server.call(.get, "/v1/me", token: api.token).status == .ok)
            let answer = try await browser.post("/sign-out-everywhere", [("csrf", accountPage.csrf ?? "")])
            #expect(answer.status == .seeOther)
            #expect(answer.setCookie(SessionCookies.sessionName)?.contains("Max-Age=0") == true)
            expectError(try await server.call(.get, "/v1/me", token: api.token), .unauthorized, "account.session_revoked", .notAuthenticated)
            let after = try await browser.get("/account")
            #expect(after.status == .seeOther)
            #expect(after.headers[.location] == "/sign-in")
        }
    }

    @Test func oneSessionIsRevokedFromTheAccountPageAndAPISignOutEndsThePageSession() async throws {
        try await TestServer.run { server in
            let account = Self.newAccount()
            let api = try await server.signUp(alias: "Ann", account: account)
            var browser = PageClient(server)
            _ = try await browser.submit("/sign-in", on: "/sign-in", [("account", account), ("password", "password-1"), ("environment", "sandbox")])
            let accountPage = try await browser.get("/account")
            #expect(accountPage.html.contains(api.sessionID))
            let answer = try await browser.post("/account/sessions/revoke", [("csrf", accountPage.csrf ?? ""), ("session", api.sessionID)])
            #expect(answer.status == .seeOther)
            expectError(try await server.call(.get, "/v1/me", token: api.token), .unauthorized, "account.session_revoked", .notAuthenticated)
            #expect(try await browser.get("/account").status == .ok)
            // The other way round: the API revokes the page session.
            let second = try await server.send(.post, "/v1/sessions", SignInRequest(account: account, password: "password-1"))
            let token = try second.decode(SessionResponse.self).token
            let pageSession = try #require(
                try await server.call(.get, "/v1/sessions", token: token).decode(SessionList.self).sessions
                    .first { $0.bundleID == WebAppClient.bundleID })
            #expect(try await server.call(.delete, "/v1/sessions/\(pageSession.sessionID)", token: token).status == .noContent)
            let after = try await browser.get("/account")
            #expect(after.status == .seeOther)
            #expect(browser.cookies[SessionCookies.sessionName] == nil)
        }
    }

    @Test func theWebAppIsRecordedAsNoPlayedGame() async throws {
        try await TestServer.run { server in
            var browser = try await Self.signUp(server, alias: "Ann")
            let home = try await browser.get("/")
            #expect(home.html.contains("No games played in the last 30 days."))
            #expect(!home.html.contains(WebAppClient.bundleID))
        }
    }
}

extension PageClient {
    /// Submits the sign-up form with `account`.
    func signUpAttempt(account: String) async throws -> Page {
        var browser = self
        return try await browser.submit("/sign-up", on: "/sign-up", [("account", account), ("password", "password-1"), ("alias", "Ann")])
    }
}
