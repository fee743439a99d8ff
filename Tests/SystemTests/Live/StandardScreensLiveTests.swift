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

    /// `present()` opens the link with the browser the environment names (`$BROWSER`, as `xdg-open` reads it).
    @Test func presentOpensTheLinkInTheBrowser() async throws {
        let server = try LiveServer(engine: "sqlite")
        try await server.start()
        let (device, _) = try await Devices.signedUp(server, alias: "Presenter")
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("browser-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let opened = folder.appendingPathComponent("opened")
        let browser = folder.appendingPathComponent("browser")
        try "#!/bin/sh\necho \"$1\" > '\(opened.path)'\n".write(to: browser, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: browser.path)
        setenv("BROWSER", browser.path, 1)
        defer { unsetenv("BROWSER") }
        try await GKAchievementViewController(in: device).present()
        // The stand-in browser's `echo` creates the file before it writes the line: wait for the whole line.
        try await waitUntil("the browser was started with a link", within: .seconds(10)) {
            (try? String(contentsOf: opened, encoding: .utf8))?.hasSuffix("\n") == true
        }
        let url = try #require(URL(string: try String(contentsOf: opened, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)))
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
