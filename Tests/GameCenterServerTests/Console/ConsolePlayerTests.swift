import Foundation
import GameCenterProtocol
import GameCenterStorage
import HTTPTypes
import Testing
@testable import GameCenterServer

/// The console's players: search, a player's page, the actions on them and the audit log they write; bans.
@Suite struct ConsolePlayerTests {
    @Test func everyActionIsInTheAuditLogAndTheAuditPageFiltersByGame() async throws {
        try await TestServer.run { server in
            let player = try await server.signUp(alias: "Audited")
            let playerID = player.player.playerID
            var browser = try await ConsoleTesting.signIn(server, role: .developer, name: "dev")
            let token = try await ConsoleTesting.token(&browser, player: playerID)
            let base = ConsolePlayerPages.link(playerID)
            for (action, fields) in [
                ("hide", [("game", "com.example.open")]), ("show", [("game", "com.example.open")]), ("scores/erase", [("game", "com.example.open")]),
                ("achievements/reset", [("game", "com.example.saves")]), ("sessions/end", []), ("ban", [("reason", "chargeback fraud")]),
                ("unban", []),
            ] as [(String, [(String, String)])] {
                let answer = try await browser.post("\(base)/\(action)", [("csrf", token)] + fields)
                #expect(answer.status == .seeOther, "\(action): \(answer.html)")
            }
            let entries = try await server.services.database.read { try await $0.auditEntries(bundleID: nil, before: nil, limit: 100) }
            let mine = entries.filter { $0.actor == "console:dev" }.map(\.action)
            #expect(
                Set(mine) == [
                    "console.signed_in", "player.hidden", "player.shown", "scores.erased", "achievements.reset", "player.sessions_ended", "player.banned",
                    "player.unbanned",
                ])
            #expect(entries.contains { $0.action == "player.banned" && $0.detail.contains("chargeback fraud") && $0.bundleID.isEmpty })

            let all = try await browser.get("/console/audit")
            #expect(all.status == .ok && all.html.contains("player.banned") && all.html.contains("scores.erased") && all.html.contains("console:dev"))
            let open = try await browser.get("/console/audit?game=com.example.open")
            #expect(open.html.contains("scores.erased") && !open.html.contains("player.banned") && !open.html.contains("achievements.reset"))
            let studio = try await browser.get("/console/audit?game=-")
            #expect(studio.html.contains("player.banned") && !studio.html.contains("scores.erased"))
            // One actor's entries: the developer's, then another console user's (none of these).
            let byDeveloper = try await browser.get("/console/audit?actor=console%3Adev")
            #expect(byDeveloper.html.contains("player.banned") && byDeveloper.html.contains("Only the entries of"))
            _ = try await ConsoleTesting.signIn(server, role: .readOnly, name: "viewer")
            let byViewer = try await browser.get("/console/audit?actor=console%3Aviewer")
            #expect(byViewer.html.contains("console.signed_in") && !byViewer.html.contains("player.banned"))
            let openByDeveloper = try await browser.get("/console/audit?game=com.example.open&actor=console%3Adev")
            #expect(openByDeveloper.html.contains("scores.erased") && !openByDeveloper.html.contains("player.banned"))
            #expect(all.html.contains(#"href="/console/audit?actor=console%3Adev""#), "an entry's actor links to their entries")
            #expect(try await browser.get("/console/audit?actor=" + String(repeating: "a", count: 201)).status == .badRequest)
            #expect(try await browser.get("/console/audit?before=nope").status == .badRequest)
            #expect(try await browser.get("/console/audit?game=com.example.nope").status == .notFound)
        }
    }

    @Test func aBanEndsEverySessionAndRefusesSignInsUntilLifted() async throws {
        try await TestServer.run { server in
            let account = WebAppAccountTests.newAccount()
            let api = try await server.signUp(alias: "Cheater", account: account)
            var web = PageClient(server)
            _ = try await web.submit("/sign-in", on: "/sign-in", [("account", account), ("password", "password-1"), ("environment", "sandbox")])
            #expect(try await web.get("/account").status == .ok)
            // The player confirmed a game's sign-in on the page; the device has not taken its session yet.
            let request = try await DeviceSignInTests.start(server)
            let ask = try await web.get(request.path)
            #expect(try await web.post(request.path, [("csrf", ask.csrf ?? "")]).status == .ok)

            var support = try await ConsoleTesting.signIn(server, role: .support)
            let base = ConsolePlayerPages.link(api.player.playerID)
            let page = try await support.get(base)
            #expect(page.html.contains("Ban this player") && page.html.contains("Open Game"))
            #expect(!page.html.contains("Erase scores"), "support may not erase scores")
            let banned = try await support.post("\(base)/ban", [("csrf", page.csrf ?? ""), ("reason", "aimbot")])
            #expect(banned.status == .seeOther)
            let shown = try await support.get(try #require(banned.headers[.location]))
            #expect(shown.html.contains("The player is banned; 2 session(s) ended.") && shown.html.contains("aimbot"))

            expectError(try await server.call(.get, "/v1/me", token: api.token), .unauthorized, "account.session_revoked", .notAuthenticated)
            #expect(try await web.get("/account").headers[.location] == "/sign-in")
            let refused = try await server.send(.post, "/v1/sessions", SignInRequest(account: account, password: "password-1"))
            expectError(refused, .forbidden, "account.banned", .notAuthenticated)
            #expect(refused.error?.message.contains("banned by the game's studio") == true)
            expectError(try await DeviceSignInTests.claim(server, request), .forbidden, "account.banned", .notAuthenticated)
            var again = PageClient(server)
            let page2 = try await again.submit("/sign-in", on: "/sign-in", [("account", account), ("password", "password-1"), ("environment", "sandbox")])
            #expect(page2.status == .forbidden && page2.html.contains("banned"))
            // A wrong password is still just wrong: only who knows the password learns of the ban.
            expectError(
                try await server.send(.post, "/v1/sessions", SignInRequest(account: account, password: "wrong-password")), .unauthorized,
                "account.invalid_credentials", .invalidCredentials)

            let lifted = try await support.post("\(base)/unban", [("csrf", page.csrf ?? "")])
            #expect(lifted.status == .seeOther)
            let signedIn = try await server.send(.post, "/v1/sessions", SignInRequest(account: account, password: "password-1"))
            #expect(signedIn.status == .ok)
            let token = try signedIn.decode(SessionResponse.self).token

            // The player lost their password: support gives a new one, shown once; their sessions end, the old
            // password no longer works and the new one does.
            let given = try await support.post("\(base)/password", [("csrf", page.csrf ?? "")])
            #expect(given.status == .created && given.html.contains("1 session(s) ended"), "\(given.html)")
            let password = try #require(given.html.firstMatch(of: /new password is <code>([a-z2-9]{4}(?:-[a-z2-9]{4}){3})<\/code>/)?.1)
            expectError(try await server.call(.get, "/v1/me", token: token), .unauthorized, "account.session_revoked", .notAuthenticated)
            expectError(
                try await server.send(.post, "/v1/sessions", SignInRequest(account: account, password: "password-1")), .unauthorized,
                "account.invalid_credentials", .invalidCredentials)
            let given2 = try await server.send(.post, "/v1/sessions", SignInRequest(account: account, password: String(password)))
            #expect(given2.status == .ok)

            // The player replaces it with their own in the Game Center app; the wrong current password changes nothing.
            var own = PageClient(server)
            _ = try await own.submit("/sign-in", on: "/sign-in", [("account", account), ("password", String(password)), ("environment", "sandbox")])
            let wrong = try await own.submit("/account/password", on: "/account", [("current", "not-the-password"), ("new", "my-own-password")])
            #expect(wrong.status == .unauthorized && wrong.html.contains("the current password is wrong"))
            let changed = try await own.submit("/account/password", on: "/account", [("current", String(password)), ("new", "my-own-password")])
            #expect(changed.status == .seeOther && changed.headers[.location] == "/account?saved=password")
            #expect(try await own.get("/account?saved=password").html.contains("Your password was changed"), "this browser stays signed in")
            expectError(
                try await server.call(.get, "/v1/me", token: try given2.decode(SessionResponse.self).token), .unauthorized, "account.session_revoked",
                .notAuthenticated)
            expectError(
                try await server.send(.post, "/v1/sessions", SignInRequest(account: account, password: String(password))), .unauthorized,
                "account.invalid_credentials", .invalidCredentials)
            let mine = try await server.send(.post, "/v1/sessions", SignInRequest(account: account, password: "my-own-password"))
            #expect(mine.status == .ok)
            // Over the API: the new password follows the account rules.
            let short = try await server.call(
                .post, "/v1/me/password", json: #"{"currentPassword": "my-own-password", "newPassword": "short"}"#,
                token: try mine.decode(SessionResponse.self).token)
            expectError(short, .badRequest, "account.invalid_password", .invalidParameter)
            #expect(!(try await support.get(base)).html.contains(String(password)), "the password is shown once")
            let entries = try await server.services.database.read { try await $0.auditEntries(bundleID: nil, before: nil, limit: 20) }
            let reset = try #require(entries.first { $0.action == "player.password_reset" })
            #expect(reset.subject == api.player.playerID && !reset.detail.contains(String(password)))
            #expect(Set((0..<50).map { _ in AccountService.newPassword() }).count == 50)
        }
    }

    @Test func supportDownloadsAPlayersDataAndADeveloperDeletesTheAccountForGood() async throws {
        try await TestServer.run { server in
            let account = WebAppAccountTests.newAccount()
            let api = try await server.signUp(alias: "Leaving", account: account)
            _ = try await server.send(
                .post, "/v1/scores",
                ScoreReportBatch(reportID: UUID().uuidString, scores: [ScoreReport(category: "open.points", value: 42, context: 0)]), token: api.token)
            let playerID = api.player.playerID
            let base = ConsolePlayerPages.link(playerID)
            var support = try await ConsoleTesting.signIn(server, role: .support, name: "helpdesk")
            let page = try await support.get(base)
            #expect(page.html.contains("Download this player's data") && !page.html.contains("Delete this account"))
            let data = try await support.post("\(base)/data", [("csrf", page.csrf ?? "")])
            #expect(data.status == .ok && data.headers[.contentType] == "application/x-tar")
            #expect(data.html.contains("manifest.json") && data.html.contains("accounts.jsonl") && data.html.contains(account))

            var developer = try await ConsoleTesting.signIn(server, role: .developer, name: "dev")
            let form = try await developer.get(base)
            #expect(form.html.contains("Delete this account"))
            let unconfirmed = try await developer.post("\(base)/delete", [("csrf", form.csrf ?? ""), ("confirm", "someone-else")])
            #expect(unconfirmed.status == .badRequest && unconfirmed.html.contains("account name"))
            #expect(try await server.call(.get, "/v1/me", token: api.token).status == .ok, "nothing was deleted")
            let deleted = try await developer.post("\(base)/delete", [("csrf", form.csrf ?? ""), ("confirm", account)])
            #expect(deleted.status == .seeOther)
            let shown = try await developer.get(try #require(deleted.headers[.location]))
            #expect(shown.html.contains("Deleted the account of Leaving"))
            #expect(try await developer.get(base).status == .notFound)
            #expect(try await server.call(.get, "/v1/me", token: api.token).status == .unauthorized)
            #expect(try await server.services.database.read { try await $0.deletedPlayerIDs() }.contains(playerID))
            let entries = try await server.services.database.read { try await $0.auditEntries(bundleID: nil, before: nil, limit: 100) }
            #expect(entries.contains { $0.action == "player.data_downloaded" && $0.actor == "console:helpdesk" && $0.subject == playerID })
            #expect(entries.contains { $0.action == "account.deleted" && $0.actor == "console:dev" && $0.bundleID.isEmpty })
            #expect(entries.contains { $0.action == "account.deleted" && $0.bundleID == "com.example.open" })
        }
    }

    @Test func playersAreFoundByAccountNameAliasOrIdAndTheirPageShowsTheirData() async throws {
        try await TestServer.run { server in
            let ann = try await server.signUp(alias: "Annika Ström", account: "annika-1")
            let bob = try await server.signUp(alias: "Bob", account: "bobby")
            _ = try await server.send(.post, "/v1/friend-requests", SendFriendRequests(playerIDs: [bob.player.playerID], message: nil), token: ann.token)
            _ = try await server.send(
                .post, "/v1/scores",
                ScoreReportBatch(reportID: UUID().uuidString, scores: [ScoreReport(category: "open.points", value: 42, context: 0)]), token: ann.token)
            var browser = try await ConsoleTesting.signIn(server, role: .readOnly)
            for query in ["anni", "STRÖM", ann.player.playerID] {
                let found = try await browser.get("/console/players?q=\(PageLinks.segment(query))")
                #expect(found.html.contains("Annika Ström") && !found.html.contains(">Bob<"), "\(query)")
            }
            let none = try await browser.get("/console/players?q=zzz-nobody")
            #expect(none.html.contains("No player has"))
            let wildcard = try await browser.get("/console/players?q=%25")
            #expect(!wildcard.html.contains("Annika"), "a % is a character, not a wildcard")
            let page = try await browser.get(ConsolePlayerPages.link(ann.player.playerID))
            #expect(page.status == .ok && page.html.contains("annika-1") && page.html.contains("open.points") && page.html.contains("Open Game"))
            #expect(!page.html.contains("Ban this player") && page.html.contains("Banning and unbanning need the role support"))
            #expect(try await browser.get(ConsolePlayerPages.link("G:nobody")).status == .notFound)
        }
    }
}
