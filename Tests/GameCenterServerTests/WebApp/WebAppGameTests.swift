import Foundation
import GameCenterProtocol
import HTTPTypes
import Testing
@testable import GameCenterServer

/// A game's leaderboard and achievements pages.
@Suite struct WebAppGameTests {
    /// Signs `account` in through the form (sandbox), reading pages in `language`.
    static func signIn(_ server: TestServer.Client, _ account: String, language: String = "en") async throws -> PageClient {
        var browser = PageClient(server)
        browser.headers[.acceptLanguage] = language
        let answer = try await browser.submit("/sign-in", on: "/sign-in", [("account", account), ("password", "password-1"), ("environment", "sandbox")])
        #expect(answer.status == .seeOther, "\(answer.html)")
        return browser
    }

    static func report(_ server: TestServer.Client, _ token: String, _ category: String, _ value: Int64) async throws {
        let answer = try await server.send(
            .post, "/v1/scores",
            ScoreReportBatch(
                reportID: UUID().uuidString,
                scores: [
                    ScoreReport(category: category, value: value, context: 0)
                ]), token: token)
        #expect(answer.status == .ok, "\(String(decoding: answer.body, as: UTF8.self))")
    }

    static func achieve(_ server: TestServer.Client, _ token: String, _ entries: [(String, Double)]) async throws {
        let batch = AchievementReportBatch(reportID: UUID().uuidString, achievements: entries.map { .init(identifier: $0.0, percentComplete: $0.1) })
        let answer = try await server.send(.post, "/v1/achievements", batch, token: token)
        #expect(answer.status == .ok, "\(String(decoding: answer.body, as: UTF8.self))")
    }

    /// The table row (`<tr …>…</tr>`) holding `text`.
    static func row(_ html: String, containing text: String) -> String? {
        html.components(separatedBy: "<tr").first { $0.contains(text) }
    }

    @Test func theLeaderboardShowsServerFormattedValuesAndHighlightsThePlayer() async throws {
        try await TestServer.run { server in
            let annAccount = WebAppAccountTests.newAccount()
            let ann = try await server.signUp(alias: "Ann", account: annAccount)
            let bob = try await server.signUp(alias: "Bob")
            try await Self.report(server, ann.token, "open.points", 1234)
            try await Self.report(server, bob.token, "open.points", 5000)
            _ = try await server.send(.patch, "/v1/me", UpdateProfileRequest(status: "Bob's private status"), token: bob.token)
            var english = try await Self.signIn(server, annAccount)
            let page = try await english.get("/games/com.example.open/leaderboards")
            #expect(page.status == .ok)
            #expect(page.html.contains("<h1>Open Game: Points</h1>"))
            let annRow = try #require(Self.row(page.html, containing: "Ann"))
            #expect(annRow.contains(#"class="me""#) && annRow.contains("1,234 points") && annRow.contains(#"<td class="rank">2</td>"#))
            let bobRow = try #require(Self.row(page.html, containing: "Bob"))
            #expect(!bobRow.contains(#"class="me""#) && bobRow.contains("5,000 points"))
            #expect(page.html.contains("You are <strong>#2</strong> of 2"))
            #expect(!page.html.contains(bob.player.playerID) && !page.html.contains("private status"))
            // Another language: its title and number format.
            var german = try await Self.signIn(server, annAccount, language: "de-DE, en;q=0.5")
            let deutsch = try await german.get("/games/com.example.open/leaderboards")
            #expect(deutsch.html.contains("Punkte"))
            #expect(Self.row(deutsch.html, containing: "Ann")?.contains("1.234") == true)
            // A first language the manifest lacks: the texts come in the next one it has.
            var french = try await Self.signIn(server, annAccount, language: "fr, de;q=0.8")
            #expect(try await french.get("/games/com.example.open/leaderboards").html.contains("<h1>Open Game: Punkte</h1>"))
            // Friends only: Bob is not Ann's friend.
            let friends = try await english.get("/games/com.example.open/leaderboards?players=friends")
            #expect(!friends.html.contains("Bob") && friends.html.contains("1,234 points"))
            // A page without the player links back to the page holding them.
            let later = try await english.get("/games/com.example.open/leaderboards?start=3")
            #expect(later.html.contains("Jump to me"))
            #expect(later.html.contains("category=open.points&amp;time=allTime&amp;players=everyone&amp;start=1"))
            #expect(!page.html.contains("Jump to me"))
            // Another board and time scope, and bad parameters.
            let time = try await english.get("/games/com.example.open/leaderboards?category=open.time&time=today")
            #expect(time.status == .ok && time.html.contains("You have no score here yet"))
            #expect(try await english.get("/games/com.example.open/leaderboards?start=0").status == .badRequest)
            #expect(try await english.get("/games/com.example.open/leaderboards?time=yesterday").status == .badRequest)
            #expect(try await english.get("/games/com.example.open/leaderboards?players=enemies").status == .badRequest)
            let unknown = try await english.get("/games/com.example.open/leaderboards?category=open.nope")
            #expect(unknown.status.code >= 400 && unknown.status.code < 500)
            #expect(try await english.get("/games/com.example.none/leaderboards").status == .notFound)
            // Signed out: sent to sign in.
            var stranger = PageClient(server)
            let signedOut = try await stranger.get("/games/com.example.open/leaderboards")
            #expect(signedOut.status == .seeOther && signedOut.headers[.location] == "/sign-in")
        }
    }

    @Test func achievementsStayHiddenUntilReportedAndShowRarityAndAFriendsCompletions() async throws {
        try await TestServer.run { server in
            let annAccount = WebAppAccountTests.newAccount(), bobAccount = WebAppAccountTests.newAccount()
            let ann = try await server.signUp(alias: "Ann", account: annAccount)
            let bob = try await server.signUp(alias: "Bob", account: bobAccount)
            let carol = try await server.signUp(alias: "Carol")  // played the game, completed nothing
            try await Self.achieve(server, ann.token, [("open.first", 100), ("open.many", 40)])
            try await Self.achieve(server, bob.token, [("open.first", 100), ("open.secret", 0), ("open.many", 100)])
            var annPage = try await Self.signIn(server, annAccount)
            let page = try await annPage.get("/games/com.example.open/achievements")
            #expect(page.status == .ok)
            #expect(page.html.contains("<strong>10</strong> of 100 points"))
            #expect(page.html.contains("Hidden achievement"))
            #expect(!page.html.contains("Secret") && !page.html.contains("Found it."))
            #expect(page.html.contains("Done once."))  // completed: the achieved description
            #expect(page.html.contains("completed 20"))
            #expect(page.html.contains("66.7\u{A0}% of players"))  // 2 of the 3 players completed it
            #expect(page.html.contains("Do it often.") && page.html.contains("40\u{A0}% done"))
            #expect(page.html.contains("33.3\u{A0}% of players"))
            #expect(page.html.contains("· 0\u{A0}% of players") == false)
            #expect(page.html.contains(#"<img src="/games/com.example.open/achievements/open.first/image""#))
            let image = try await annPage.get("/games/com.example.open/achievements/open.first/image")
            #expect(image.status == .ok && image.headers[.contentType] == "image/png")
            // Not revealed to Ann: not its image either.
            #expect(try await annPage.get("/games/com.example.open/achievements/open.secret/image").status == .notFound)

            // Bob reported on the secret one: revealed (at 0 %).
            var bobPage = try await Self.signIn(server, bobAccount)
            let revealed = try await bobPage.get("/games/com.example.open/achievements")
            #expect(revealed.html.contains("Secret") && revealed.html.contains("???") && !revealed.html.contains("Hidden achievement"))

            // Compare with a friend, never with a stranger.
            #expect(
                try await server.send(
                    .post, "/v1/friend-requests", SendFriendRequests(playerIDs: [bob.player.playerID], message: nil),
                    token: ann.token
                ).status == .created)
            let request = try #require(try await server.call(.get, "/v1/friend-requests", token: bob.token).decode(FriendRequestList.self).requests.first)
            #expect(try await server.call(.post, "/v1/friend-requests/\(request.requestID)/accept", token: bob.token).status == .noContent)
            let compared = try await annPage.get("/games/com.example.open/achievements?compare=\(bob.player.playerID)")
            #expect(compared.status == .ok)
            #expect(compared.html.contains("Bob: <strong>50</strong> points"))
            #expect(compared.html.contains("<strong>You</strong> completed <span class=\"day\">20"))
            #expect(compared.html.contains("<strong>You</strong> 40\u{A0}% done</p>"))
            #expect(compared.html.contains("<strong>Bob</strong> completed <span class=\"day\">20"))
            #expect(compared.html.contains("<strong>Bob</strong> not completed</p>"))
            // Bob completed what Ann has at 40 %: his day is not shown as hers.
            #expect(compared.html.components(separatedBy: "<strong>Bob</strong> completed <span").count == 3)
            #expect(compared.html.components(separatedBy: "<strong>You</strong> completed <span").count == 2)
            #expect(!page.html.contains("<strong>You</strong>"))
            let stranger = try await annPage.get("/games/com.example.open/achievements?compare=\(carol.player.playerID)")
            #expect(stranger.status == .notFound)
            // Ann's home page counts her points.
            #expect(try await annPage.get("/").html.contains("<strong>10</strong> achievement points"))
        }
    }
}
