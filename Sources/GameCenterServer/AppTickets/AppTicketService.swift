import Foundation
import GameCenterProtocol
import GameCenterStorage
import Hummingbird

/// Links from a game to a page of the Game Center app, for the standard screens' `present()`: `POST /v1/app-tickets`
/// makes a link for the calling player, `GET /app-tickets/{ticket}` signs the browser in as them and shows the page.
///
/// A link works once, within ``Limits/appTicketLifetimeSeconds``, and only while the game session that asked for it
/// lives; the web session it opens ends no later than that one. Only the ticket's hash is stored, and the ticket
/// never outlives its one use in a URL: the page it leads to is reached by a redirect, with the session in a cookie.
struct AppTicketService: Sendable {
    /// Live links one player may hold at once.
    static let maximumLiveTickets = 10

    let database: Database
    let accounts: AccountService
    let clock: ServerClock

    /// A link to the page `request` names, for the caller.
    func issue(_ request: AppTicketRequest, device: DeviceIdentity, session: AuthenticatedSession) async throws -> AppTicket {
        let target = try Self.target(of: request, game: device.game)
        let ticket = Credentials.newToken()
        let now = clock.nowMillis()
        let expiresAt = now + Int64(Limits.appTicketLifetimeSeconds) * 1000
        try await database.write { storage in
            guard try await storage.liveAppTicketCount(playerID: session.playerID, now: now) < Self.maximumLiveTickets else {
                throw APIError.tooManyAppTickets
            }
            try await storage.insertAppTicket(
                AppTicketRecord(
                    ticketHash: Credentials.tokenHash(ticket), sessionID: session.sessionID, playerID: session.playerID, target: target,
                    expiresAt: expiresAt), now: now)
        }
        return AppTicket(
            path: "/app-tickets/\(ticket)", expiresAt: StoredTime.date(expiresAt),
            presentationID: ScreenPresentations.presentationID(ofTicket: ticket))
    }

    /// Uses a link: a new web session for its player and the page to show, or `web.link_expired`.
    func redeem(_ ticket: String) async throws -> (session: SessionResponse, target: String, presentationID: String) {
        guard ticket.count <= 200 else { throw APIError.linkExpired }
        let now = clock.nowMillis()
        guard let record = try await database.write({ try await $0.takeAppTicket(ticketHash: Credentials.tokenHash(ticket)) }),
            record.expiresAt > now
        else { throw APIError.linkExpired }
        return (
            try await accounts.openWebSession(fromSessionID: record.sessionID, playerID: record.playerID), record.target,
            ScreenPresentations.presentationID(ofTicket: ticket)
        )
    }

    /// The page's path and query for `request`, checked against the game.
    static func target(of request: AppTicketRequest, game: Game) throws -> String {
        switch request.screen {
        case .leaderboards:
            if let category = request.category {
                guard game.leaderboards.contains(where: { $0.category == category }) || game.aggregates.contains(where: { $0.category == category })
                else { throw APIError.unknownCategory(category, game: game) }
            }
            return PageLinks.game(game.bundleID, "leaderboards", [("category", request.category), ("time", (request.timeScope ?? .today).rawValue)])
        case .achievements:
            return PageLinks.game(game.bundleID, "achievements")
        case .friendRequest:
            let recipient = (request.recipient ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
            let message = (request.message ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
            guard recipient.count <= Limits.accountNameLength.upperBound else {
                throw APIError.invalidParameter("recipient is an account name or alias of at most \(Limits.accountNameLength.upperBound) characters")
            }
            guard message.count <= Limits.maximumFriendRequestMessageLength else {
                throw APIError.invalidParameter("message holds at most \(Limits.maximumFriendRequestMessageLength) characters; it has \(message.count)")
            }
            let query = [("to", recipient), ("message", message)].filter { !$0.1.isEmpty }.map { "\($0)=\(PageLinks.segment($1))" }
            return query.isEmpty ? "/friends" : "/friends?" + query.joined(separator: "&")
        case .invitations:
            return "/invitations"
        case .turns:
            return "/turns"
        }
    }
}

/// `POST /v1/app-tickets` (a game's session) and `GET /app-tickets/{ticket}` (a browser).
struct AppTicketRoutes: Sendable {
    let tickets: AppTicketService

    /// Adds the JSON route.
    func addAuthenticated(to group: RouterGroup<AppRequestContext>) {
        group.post("app-tickets") { request, context -> AppTicket in
            let body = try await request.decode(as: AppTicketRequest.self, context: context)
            return try await tickets.issue(body, device: context.requireDevice(), session: context.requireSession())
        }
    }

    /// Adds the page route: signs the browser in, marks it as showing the link's presentation (the
    /// ``ScreenPresentations`` cookie, for the browser session) and redirects to the page; a used or expired link gets
    /// the error page.
    func addPage(to router: Router<AppRequestContext>, responder: PageResponder, cookies: SessionCookies) {
        responder.get("app-tickets/{ticket}", on: router, .anyone) { page in
            let (session, target, presentationID) = try await tickets.redeem(page.context.parameters.get("ticket") ?? "")
            var response = PageRequest.redirect(to: target)
            let lifetime = Int(session.expiresAt.timeIntervalSince(StoredTime.date(tickets.clock.nowMillis())).rounded(.down))
            response.setCookie(cookies.session(token: session.token, lifetime: lifetime, for: page.request, context: page.context))
            response.setCookie(cookies.presentation(presentationID, for: page.request, context: page.context))
            response.headers[.cacheControl] = "no-store"
            response.headers[.referrerPolicy] = "no-referrer"
            return response
        }
    }
}

extension APIError {
    /// A player asked for more links than ``AppTicketService/maximumLiveTickets`` within a link's lifetime.
    static let tooManyAppTickets = APIError(
        .requestRateLimited,
        "at most \(AppTicketService.maximumLiveTickets) links to the Game Center app may be open at once; try again in \(Limits.appTicketLifetimeSeconds) s",
        retryAfterSeconds: Limits.appTicketLifetimeSeconds)
}

extension AppTicket: ResponseEncodable {}
