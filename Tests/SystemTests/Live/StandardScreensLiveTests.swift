import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import NetworkFaultProxy
import OpenGameKit
import Testing

/// The standard screens as models a game draws, and presented as the Game Center app's pages through single-use
/// links, against a real server process (game `com.example.tapper`).
@Suite(.serialized, .timeLimit(.minutes(2))) struct StandardScreensLiveTests {
    /// Records the delegates' calls.
    final class Finished: GKLeaderboardViewControllerDelegate, GKAchievementViewControllerDelegate, GKFriendRequestComposeViewControllerDelegate,
        @unchecked Sendable
    {
        private let lock = NSLock()
        private var calls: [String] = []
        var log: [String] { lock.withLock { calls } }
        func leaderboardViewControllerDidFinish(_ viewController: GKLeaderboardViewController) { lock.withLock { calls.append("leaderboard") } }
        func achievementViewControllerDidFinish(_ viewController: GKAchievementViewController) { lock.withLock { calls.append("achievements") } }
        func friendRequestComposeViewControllerDidFinish(_ viewController: GKFriendRequestComposeViewController) {
            lock.withLock { calls.append("compose") }
        }
    }

    /// Opens `url` as a browser would (following the redirect, keeping the cookie): the final address and the page.
    static func open(_ url: URL) async throws -> (status: Int, path: String, query: String?, html: String) {
        let session = URLSession(configuration: .ephemeral)
        let (data, response) = try await session.data(from: url)
        let http = try #require(response as? HTTPURLResponse)
        let final = try #require(http.url)
        return (http.statusCode, final.path, final.query, String(decoding: data, as: UTF8.self))
    }

    @Test func theLeaderboardScreenShowsTheBoardAndPresentsItsPageOnce() async throws {
        let server = try LiveServer(engine: "sqlite")
        try await server.start()
        let (device, _) = try await Devices.signedUp(server, alias: "Screen")
        let score = GKScore(category: "tapper.sprint", in: device)
        score.value = 4200
        try await score.report()

        let screen = GKLeaderboardViewController(in: device)
        #expect(screen.timeScope == .today)  // the seed's default
        screen.category = "tapper.sprint"
        screen.timeScope = .week
        let (scores, board) = try await screen.loadScores()
        #expect(scores.map(\.value) == [4200])
        #expect(board.localPlayerScore?.value == 4200)

        let url = try await screen.presentationURL()
        let page = try await Self.open(url)
        #expect(page.status == 200)
        #expect(page.path == "/games/com.example.tapper/leaderboards")
        #expect(page.query == "category=tapper.sprint&time=week")
        #expect(page.html.contains("Screen"))
        #expect(try await Self.open(url).status == 410)

        let finished = Finished()
        screen.leaderboardDelegate = finished
        screen.dismiss()
        #expect(finished.log == ["leaderboard"])
        await device.close()
        try await server.stop()
    }

    @Test func theAchievementScreenHidesSecretsUntilProgressAndPresentsItsPage() async throws {
        let server = try LiveServer(engine: "sqlite")
        try await server.start()
        let (device, _) = try await Devices.signedUp(server, alias: "Achiever")
        let screen = GKAchievementViewController(in: device)
        #expect(try await screen.loadEntries().map(\.achievementDescription.identifier).contains("tapper.secret") == false)
        let secret = GKAchievement(identifier: "tapper.secret", in: device)
        secret.percentComplete = 50
        try await secret.report()
        let entries = try await screen.loadEntries()
        #expect(entries.first { $0.achievementDescription.identifier == "tapper.secret" }?.achievement?.percentComplete == 50)
        #expect(entries.contains { $0.achievementDescription.identifier == "tapper.first" && $0.achievement == nil })

        let page = try await Self.open(try await screen.presentationURL())
        #expect(page.status == 200 && page.path == "/games/com.example.tapper/achievements")
        let finished = Finished()
        screen.achievementDelegate = finished
        screen.dismiss()
        #expect(finished.log == ["achievements"])
        await device.close()
        try await server.stop()
    }

    @Test func theComposeScreenSendsByNameOrPresentsTheRequestWritten() async throws {
        let server = try LiveServer(engine: "sqlite")
        try await server.start()
        let (device, _) = try await Devices.signedUp(server, alias: "Composer")
        let (friend, friendAccount) = try await Devices.signedUp(server, alias: "Pal")
        let screen = GKFriendRequestComposeViewController(in: device)
        await #expect(throws: GKError.self) { try await screen.send() }
        #expect(throws: GKError.self) {
            try screen.addRecipients(withAccountNames: (0...GKFriendRequestComposeViewController.maxNumberOfRecipients).map { "n\($0)" })
        }
        #expect(screen.recipientAccountNames.isEmpty)
        try screen.addRecipients(withPlayerIDs: [friend.localPlayer.playerID])
        screen.setMessage("rematch?")

        // Presented: the friends page with the first recipient's alias and the message written.
        let page = try await Self.open(try await screen.presentationURL())
        #expect(page.status == 200 && page.path == "/friends")
        #expect(page.html.contains(#"value="Pal""#) && page.html.contains(#"value="rematch?""#))

        // Sent from the game's own UI.
        let byName = GKFriendRequestComposeViewController(in: device)
        try byName.addRecipients(withAccountNames: [friendAccount, friendAccount])
        #expect(byName.recipientAccountNames == [friendAccount])
        byName.setMessage("rematch?")
        try await byName.send()
        let pending = try await GKFriendRequest.loadPending(in: friend)
        #expect(pending.map(\.fromAlias) == ["Composer"] && pending.first?.message == "rematch?")

        let finished = Finished()
        byName.composeViewDelegate = finished
        byName.dismiss()
        #expect(finished.log == ["compose"])
        await device.close()
        await friend.close()
        try await server.stop()
    }

    /// A presented screen follows its page, as the seed's screens do: the leaderboard screen's `category` and
    /// `timeScope` hold what the player last chose there, and the delegate hears `…DidFinish` when the player presses
    /// Done (at once) or closes the page (a page left with no page of the app after it, within a short grace: a
    /// reload is not a close).
    @Test func presentedScreensTakeThePlayersChoicesAndFinishWhenThePageIsDoneOrClosed() async throws {
        let server = try LiveServer(engine: "sqlite")
        try await server.start()
        let (device, _) = try await Devices.signedUp(server, alias: "Chooser")
        let finished = Finished()
        let screen = GKLeaderboardViewController(in: device)
        screen.leaderboardDelegate = finished
        screen.category = "tapper.sprint"

        var browser = WebAppBrowser(server: server.url)
        let opened = try await browser.get(try await screen.presentationURL().path)
        #expect(opened.status == 303 && browser.cookies["gc_screen"] != nil)
        let page = try await browser.get(try #require(opened.location))
        #expect(page.html.contains(#"action="/screen/done""#))
        let csrf = try #require(page.field("csrf"))

        // The player picks another board and this week's reports.
        _ = try await browser.get("/games/com.example.tapper/leaderboards?category=tapper.taps&time=week&players=everyone")
        try await waitUntil("the screen took the player's choices") { screen.category == "tapper.taps" && screen.timeScope == .week }
        // A reload: the page is left and at once shown again; the screen stays open past the grace.
        #expect(try await browser.post("/screen/left", [("csrf", csrf)]).status == 204)
        _ = try await browser.get("/games/com.example.tapper/leaderboards?category=tapper.taps&time=allTime&players=everyone")
        try await waitUntil("the reloaded page's choice arrived") { screen.timeScope == .allTime }
        try await Task.sleep(for: .seconds(4))
        #expect(finished.log.isEmpty)

        // Done: the screen finishes at once; the browser forgets the presentation and is told to go back to the game.
        let done = try await browser.post("/screen/done", [("csrf", csrf)])
        #expect(done.status == 200 && done.html.contains("go back to your game") && !done.html.contains(#"action="/screen/done""#))
        #expect(browser.cookies["gc_screen"] == nil)
        try await waitUntil("the delegate heard Done") { finished.log == ["leaderboard"] }
        #expect(screen.category == "tapper.taps" && screen.timeScope == .allTime)
        // Pages after Done are no longer the screen's: nothing changes.
        _ = try await browser.get("/games/com.example.tapper/leaderboards?category=tapper.sprint&time=today&players=everyone")

        // The achievements screen, its page closed: left, and nothing after it.
        let achievements = GKAchievementViewController(in: device)
        achievements.achievementDelegate = finished
        var other = WebAppBrowser(server: server.url)
        let achievementsPage = try await other.get(try #require(try await other.get(try await achievements.presentationURL().path).location))
        #expect(try await other.post("/screen/left", [("csrf", try #require(achievementsPage.field("csrf")))]).status == 204)
        try await waitUntil("closing the page finished the screen") { finished.log == ["leaderboard", "achievements"] }
        #expect(screen.category == "tapper.taps" && screen.timeScope == .allTime)
        await device.close()
        try await server.stop()
    }

    /// A stand-in browser for `$BROWSER` (a script, set in this process's environment until `unset`) that appends each
    /// link it is started with to a file; the links it was started with so far. The tests that use it are in this
    /// serialized suite, so no other test's `present()` meets it.
    final class StandInBrowser: Sendable {
        let opened: URL

        init() throws {
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("browser-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            opened = folder.appendingPathComponent("opened")
            let script = folder.appendingPathComponent("browser")
            try "#!/bin/sh\necho \"$1\" >> '\(opened.path)'\n".write(to: script, atomically: true, encoding: .utf8)
            try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: script.path)
            setenv("BROWSER", script.path, 1)
        }

        /// The links opened so far, whole lines only (`echo` creates the file before it writes the line).
        var links: [URL] {
            let text = (try? String(contentsOf: opened, encoding: .utf8)) ?? ""
            return text.split(separator: "\n", omittingEmptySubsequences: false).dropLast().compactMap { URL(string: String($0)) }
        }

        func unset() { unsetenv("BROWSER") }
    }

    /// `authenticate()` with nothing to give, as the seed's games call it: it restores the device's player without
    /// asking, and with nobody signed in opens the Game Center app's sign-in; "Not now" there three times, in any game
    /// of the device, is remembered as the player's opt-out for every game until a player signs in.
    @Test func authenticateWithNothingRestoresTheDevicesPlayerOrOpensTheSignInAndRemembersAnOptOut() async throws {
        let server = try LiveServer(engine: "sqlite")
        try await server.start()
        let browser = try StandInBrowser()
        defer { browser.unset() }
        let (other, account) = try await Devices.signedUp(server, alias: "Optional")
        await other.close()
        let device = FileManager.default.temporaryDirectory.appendingPathComponent("device-\(UUID().uuidString)")
        func game(_ name: String) -> GKGameCenter {
            GKGameCenter(server: server.url, bundleID: "com.example.tapper", storageDirectory: device.appendingPathComponent(name), deviceDirectory: device)
        }
        var page = try await WebAppBrowser.signedIn(to: server.url, account: account, password: "password-Optional")

        for round in 1...GKLocalPlayer.signInDismissalsBeforeOptOut {
            let started = game("game-\(round)")
            let heard = HandlerLog()
            started.localPlayer.authenticateHandler = { heard.record($0) }
            let authenticating = Task { try await started.localPlayer.authenticate() }
            try await waitUntil("the sign-in opened in the browser") { browser.links.count == round }
            let link = try #require(browser.links.last)
            let ask = try await page.get(link.path)
            #expect(ask.html.contains("Not now"))
            #expect(try await page.post(link.path + "/decline", [("csrf", try #require(ask.field("csrf")))]).status == 200)
            let dismissed = await #expect(throws: GKError.self) { try await authenticating.value }
            #expect(dismissed?.code == .cancelled)
            #expect(heard.codes == [.cancelled])
        }

        // Opted out: another game of the device returns at once, opening nothing.
        let fourth = game("game-4")
        let optedOut = await #expect(throws: GKError.self) { try await fourth.localPlayer.authenticate() }
        #expect(optedOut?.code == .cancelled && optedOut?.message.contains("opted out") == true)
        #expect(browser.links.count == GKLocalPlayer.signInDismissalsBeforeOptOut)

        // The player signs in from a game: the opt-out is forgotten, and another game restores them without asking.
        try await fourth.localPlayer.authenticate(.signIn(account: account, password: "password-Optional"))
        let fifth = game("game-5")
        try await fifth.localPlayer.authenticate()
        #expect(fifth.localPlayer.isAuthenticated && fifth.localPlayer.playerID == fourth.localPlayer.playerID)
        #expect(browser.links.count == GKLocalPlayer.signInDismissalsBeforeOptOut)

        // Signed out, the next game opens the sign-in again; confirmed there, it is signed in.
        await fifth.localPlayer.signOut()
        let sixth = game("game-6")
        let authenticating = Task { try await sixth.localPlayer.authenticate() }
        try await waitUntil("the sign-in opened again") { browser.links.count == GKLocalPlayer.signInDismissalsBeforeOptOut + 1 }
        let link = try #require(browser.links.last)
        let ask = try await page.get(link.path)
        #expect(try await page.post(link.path, [("csrf", try #require(ask.field("csrf")))]).status == 200)
        try await authenticating.value
        #expect(sixth.localPlayer.alias == "Optional")
        for game in [fourth, fifth, sixth] { await game.close() }
        try await server.stop()
    }

    /// `present()` opens the link with the browser the environment names (`$BROWSER`, as `xdg-open` reads it).
    @Test func presentOpensTheLinkInTheBrowser() async throws {
        let server = try LiveServer(engine: "sqlite")
        try await server.start()
        let (device, _) = try await Devices.signedUp(server, alias: "Presenter")
        let browser = try StandInBrowser()
        defer { browser.unset() }
        try await GKAchievementViewController(in: device).present()
        try await waitUntil("the browser was started with a link") { browser.links.count == 1 }
        let url = try #require(browser.links.first)
        #expect(url.path.hasPrefix("/app-tickets/"))
        #expect(try await Self.open(url).path == "/games/com.example.tapper/achievements")
        await device.close()
        try await server.stop()
    }
}

/// The standard sign-in screen: the form model, and the Game Center app's sign-in confirmed in a browser.
@Suite(.serialized, .timeLimit(.minutes(2))) struct SignInScreenLiveTests {
    final class Outcome: GKSignInViewControllerDelegate, @unchecked Sendable {
        private let lock = NSLock()
        private var calls: [GKError.Code?] = []
        var log: [GKError.Code?] { lock.withLock { calls } }
        func signInViewControllerDidFinish(_ viewController: GKSignInViewController, error: (any Error)?) {
            lock.withLock { calls.append((error as? GKError)?.code) }
        }
    }

    @Test func theFormTellsTheRulesAndSignsUp() async throws {
        let server = try LiveServer(engine: "sqlite")
        try await server.start()
        let device = Devices.make(server)
        let screen = GKSignInViewController(in: device)
        let outcome = Outcome()
        screen.signInDelegate = outcome
        screen.mode = .signUp
        screen.account = "ab"
        screen.password = "short"
        #expect(screen.problems.count == 3)
        await #expect(throws: GKError.self) { try await screen.submit() }
        #expect(outcome.log.isEmpty)  // refused before asking anyone
        screen.account = "form-\(UUID().uuidString.prefix(8).lowercased())"
        screen.password = "password-1"
        screen.alias = "Former"
        #expect(screen.problems.isEmpty)
        try await screen.submit()
        #expect(device.localPlayer.isAuthenticated && device.localPlayer.alias == "Former")
        #expect(outcome.log == [nil])
        await device.close()
        try await server.stop()
    }

    /// The player signs in on the Game Center app's page (a browser: cookies, the forms' CSRF tokens) and confirms;
    /// the game, waiting meanwhile, is then signed in as them with no password of theirs in it.
    @Test func theGameCenterAppSignsTheGameIn() async throws {
        let server = try LiveServer(engine: "sqlite")
        try await server.start()
        let (other, account) = try await Devices.signedUp(server, alias: "Browser")
        await other.close()
        let device = Devices.make(server)
        let screen = GKSignInViewController(in: device)
        let outcome = Outcome()
        screen.signInDelegate = outcome
        let url = try await screen.presentationURL()
        let waiting = Task { try await screen.waitForConfirmation() }

        let browser = URLSession(configuration: .ephemeral)
        func field(_ name: String, in html: String) -> String {
            guard let range = html.range(of: #"name="\#(name)" value=""#) else { return "" }
            return String(html[range.upperBound...].prefix { $0 != "\"" })
        }
        func post(_ path: String, _ fields: [(String, String)]) async throws -> (Int, String) {
            var request = URLRequest(url: URL(string: server.url.absoluteString + path)!)
            request.httpMethod = "POST"
            request.setValue("application/x-www-form-urlencoded", forHTTPHeaderField: "Content-Type")
            let allowed = CharacterSet.alphanumerics.union(CharacterSet(charactersIn: "-._~"))
            request.httpBody = Data(fields.map { "\($0.0)=\($0.1.addingPercentEncoding(withAllowedCharacters: allowed) ?? "")" }.joined(separator: "&").utf8)
            let (data, response) = try await browser.data(for: request)
            return ((response as? HTTPURLResponse)?.statusCode ?? 0, String(decoding: data, as: UTF8.self))
        }
        let (signInPage, _) = try await browser.data(from: url)
        let signInHTML = String(decoding: signInPage, as: UTF8.self)
        let next = field("next", in: signInHTML)
        #expect(next == url.path)
        let (status, askHTML) = try await post(
            "/sign-in",
            [("csrf", field("csrf", in: signInHTML)), ("account", account), ("password", "password-Browser"), ("environment", "sandbox"), ("next", next)])
        #expect(status == 200 && askHTML.contains("Sign it in as <strong>Browser</strong>?"))
        #expect(!device.localPlayer.isAuthenticated)
        let (confirmed, doneHTML) = try await post(url.path, [("csrf", field("csrf", in: askHTML))])
        #expect(confirmed == 200 && doneHTML.contains("is signed in as Browser"))

        try await waiting.value
        #expect(device.localPlayer.isAuthenticated && device.localPlayer.alias == "Browser")
        #expect(outcome.log == [nil])
        await device.close()
        try await server.stop()
    }
}
