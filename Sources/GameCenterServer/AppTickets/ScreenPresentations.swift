import Foundation
import GameCenterProtocol
import GameCenterStorage
import Hummingbird
import Logging

/// The pages games present for their standard screens (links of ``AppTicketService``), followed for the game: the
/// browser that used the link keeps the presentation's id in a cookie, and each page of it shown, a page left without
/// going to another page of the app (closed, most likely) and the player's Done become ``ScreenPresentation`` events
/// for the player. The game's screen reads them: its `…DidFinish`, and the leaderboard screen's `category` and
/// `timeScope` where the player left them (the seed's "hold what the player last chose").
struct ScreenPresentations: Sendable {
    /// The cookie naming the browser's presentation.
    static let cookieName = "gc_screen"
    /// Hex digits in a presentation id.
    static let idLength = 32
    /// How long a browser keeps its presentation, in seconds: a page closed without Done leaves the cookie in the
    /// browser, and its later pages would go on writing events the game no longer follows.
    static let cookieLifetimeSeconds = 3600

    let database: Database
    let bus: any EventBus
    let clock: ServerClock

    /// The id of the presentation a link opens: derived from the link's ticket, so nothing more is stored, and telling
    /// nothing of the ticket.
    static func presentationID(ofTicket ticket: String) -> String {
        String(Credentials.tokenHash("screen-presentation:" + ticket).prefix(idLength))
    }

    /// The presentation `request`'s browser is in: its cookie's value, when it is a well-formed id.
    static func presentationID(of request: Request) -> String? {
        guard let value = request.cookies[cookieName]?.value, value.utf8.count == idLength,
            value.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains($0) })
        else { return nil }
        return value
    }

    /// Records `presentation` as an event of `playerID`'s and wakes their devices.
    func record(_ presentation: ScreenPresentation, playerID: String) async throws {
        let now = clock.nowMillis()
        try await database.write { storage in
            _ = try await EventLog.append(.screenPresentation, presentation, to: playerID, now: now, in: storage)
        }
        bus.publish(.playerEvents(playerID: playerID))
    }

    /// A page of a presentation was shown to its signed-in player: recorded with the game it belongs to and, for a
    /// leaderboard page, the board and time scope its address names (the page answered 200, so they are valid). A
    /// failure to record is logged; the page is shown all the same.
    func shown(_ page: PageRequest) async {
        guard let presentationID = Self.presentationID(of: page.request), let session = page.session else { return }
        let bundleID = page.context.parameters.get("bundleID")
        let isLeaderboard = bundleID != nil && page.request.uri.path.hasSuffix("/leaderboards")
        let presentation = ScreenPresentation(
            presentationID: presentationID, change: .shown, bundleID: bundleID,
            category: isLeaderboard ? page.query("category") : nil,
            timeScope: isLeaderboard ? page.query("time").flatMap(LeaderboardTimeScope.init(rawValue:)) : nil)
        do {
            try await record(presentation, playerID: session.session.playerID)
        } catch {
            page.context.logger.warning("a presented page's showing was not recorded", metadata: [LogKey.error: "\(error)"])
        }
    }

    /// Adds `POST /screen/left` (the app's script, as the page is left other than for a page of the app) and
    /// `POST /screen/done` (the Done button of presented pages).
    func add(to router: Router<AppRequestContext>, responder: PageResponder, cookies: SessionCookies, renderer: PageRenderer) {
        responder.post("screen/left", on: router, .signedIn) { page in
            if let presentationID = Self.presentationID(of: page.request) {
                try await record(ScreenPresentation(presentationID: presentationID, change: .left), playerID: page.requireSession().session.playerID)
            }
            return Response(status: .noContent)
        }
        responder.post("screen/done", on: router, .signedIn) { page in
            if let presentationID = Self.presentationID(of: page.request) {
                try await record(ScreenPresentation(presentationID: presentationID, change: .done), playerID: page.requireSession().session.playerID)
            }
            var chrome = PageChrome("Done", for: page)
            chrome.presented = false
            var response = renderer.render("screen-done", ScreenDonePage(chrome: chrome))
            response.setCookie(cookies.removing(Self.cookieName, for: page.request, context: page.context))
            return response
        }
    }
}

/// The page after Done.
struct ScreenDonePage {
    let chrome: PageChrome
}
