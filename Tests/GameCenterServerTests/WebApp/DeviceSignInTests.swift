import Foundation
import GameCenterProtocol
import HTTPTypes
import Testing
@testable import GameCenterServer

/// A game signs its player in through the Game Center app: the device starts a request, the player signs in on the
/// request's page and confirms, the device takes its session once.
@Suite struct DeviceSignInTests {
    static func start(_ server: TestServer.Client, environment: String = "sandbox") async throws -> DeviceSignIn {
        let answer = try await server.call(.post, "/v1/device-sign-ins", environment: environment)
        #expect(answer.status == .created)
        return try answer.decode(DeviceSignIn.self)
    }

    static func claim(_ server: TestServer.Client, _ request: DeviceSignIn, secret: String? = nil) async throws -> TestServer.Client.Answer {
        try await server.send(.post, "/v1/device-sign-ins/\(request.requestID)/session", DeviceSignInClaim(secret: secret ?? request.secret))
    }

    @Test func thePlayerSignsInOnThePageAndTheDeviceTakesItsSessionOnce() async throws {
        try await TestServer.run { server in
            let account = WebAppAccountTests.newAccount()
            let player = try await server.signUp(alias: "Pairing", account: account)
            let request = try await Self.start(server)
            #expect(request.path == "/device-sign-in/\(request.requestID)")
            #expect(try await Self.claim(server, request).status == .accepted)

            // Signed out, the page sends the player to sign in, and signing in comes back to it.
            var browser = PageClient(server)
            let first = try await browser.get(request.path)
            #expect(first.status == .seeOther)
            let signIn = try #require(first.headers[.location])
            #expect(signIn == "/sign-in?next=%2Fdevice-sign-in%2F\(request.requestID)")
            let form = try await browser.get(signIn)
            #expect(form.html.contains(#"name="next" value="/device-sign-in/\#(request.requestID)""#))
            let signedIn = try await browser.post(
                "/sign-in",
                [("csrf", form.csrf ?? ""), ("account", account), ("password", "password-1"), ("environment", "sandbox"), ("next", request.path)])
            #expect(signedIn.headers[.location] == request.path)
            let ask = try await browser.get(request.path)
            #expect(ask.status == .ok && ask.html.contains("Sign it in as <strong>Pairing</strong>?") && ask.html.contains("Open Game"))
            #expect(try await Self.claim(server, request, secret: "wrong").status == .gone)
            #expect(try await Self.claim(server, request).status == .accepted)

            let done = try await browser.post(request.path, [("csrf", ask.csrf ?? "")])
            #expect(done.status == .ok && done.html.contains("is signed in as Pairing"))
            let claimed = try await Self.claim(server, request)
            #expect(claimed.status == .ok)
            let session = try claimed.decode(SessionResponse.self)
            #expect(session.player.playerID == player.player.playerID)
            #expect(try await server.call(.get, "/v1/achievements", token: session.token).status == .ok)
            // Once: the request is gone.
            expectError(try await Self.claim(server, request), .gone, "account.device_sign_in_expired", .notAuthenticated)
            #expect(try await browser.get(request.path).status == .gone)
        }
    }

    /// "Not now" on the page: the device hears `account.device_sign_in_declined` (`cancelled`, which the SDK counts
    /// toward the player's opt-out), and the request can no longer be confirmed.
    @Test func thePlayerAnswersNotNowAndTheDeviceHearsItWasDeclined() async throws {
        try await TestServer.run { server in
            var browser = try await WebAppAccountTests.signUp(server, alias: "Shy")
            let request = try await Self.start(server)
            let ask = try await browser.get(request.path)
            #expect(ask.html.contains(#"action="\#(request.path)/decline""#) && ask.html.contains("Not now"))
            let declined = try await browser.post(request.path + "/decline", [("csrf", ask.csrf ?? "")])
            #expect(declined.status == .ok && declined.html.contains("will not sign in to Game Center"))
            expectError(try await Self.claim(server, request), .forbidden, "account.device_sign_in_declined", .cancelled)
            // Answered: neither confirmed nor declined again.
            #expect(try await browser.post(request.path, [("csrf", ask.csrf ?? "")]).status == .gone)
            #expect(try await browser.post(request.path + "/decline", [("csrf", ask.csrf ?? "")]).status == .gone)
            expectError(try await Self.claim(server, request, secret: "wrong"), .gone, "account.device_sign_in_expired", .notAuthenticated)
        }
    }

    @Test func aRequestExpiresAfterFiveMinutesAndNeedsTheDevicesEnvironment() async throws {
        try await TestServer.run(admin: true) { server in
            var browser = try await WebAppAccountTests.signUp(server, alias: "Live Player", environment: "live")
            let sandbox = try await Self.start(server)
            let refused = try await browser.submit(sandbox.path, on: sandbox.path, [])
            #expect(refused.status == .badRequest && refused.html.contains("plays in the sandbox environment"))
            #expect(try await Self.claim(server, sandbox).status == .accepted)
            // The device's game and environment only.
            expectError(
                try await server.send(
                    .post, "/v1/device-sign-ins/\(sandbox.requestID)/session", DeviceSignInClaim(secret: sandbox.secret), environment: "live"),
                .gone, "account.device_sign_in_expired", .notAuthenticated)

            let live = try await Self.start(server, environment: "live")
            try await LeaderboardTests.advanceClock(server, hours: Double(Limits.deviceSignInLifetimeSeconds + 1) / 3600)
            #expect(try await browser.get(live.path).status == .gone)
            expectError(
                try await server.send(.post, "/v1/device-sign-ins/\(live.requestID)/session", DeviceSignInClaim(secret: live.secret), environment: "live"),
                .gone, "account.device_sign_in_expired", .notAuthenticated)
        }
    }

    /// Only a game's sign-in page may be where a sign-in leads: anything else goes home.
    @Test func signingInLeadsNowhereElse() async throws {
        try await TestServer.run { server in
            let account = WebAppAccountTests.newAccount()
            _ = try await server.signUp(account: account)
            for next in ["https://evil.example/", "//evil.example/device-sign-in/x", "/device-sign-in/../account", "/account"] {
                var browser = PageClient(server)
                let form = try await browser.get("/sign-in?next=\(PageLinks.segment(next))")
                #expect(!form.html.contains(#"name="next""#))
                let signedIn = try await browser.post(
                    "/sign-in", [("csrf", form.csrf ?? ""), ("account", account), ("password", "password-1"), ("environment", "sandbox"), ("next", next)])
                #expect(signedIn.headers[.location] == "/", "\(next)")
            }
        }
    }
}
