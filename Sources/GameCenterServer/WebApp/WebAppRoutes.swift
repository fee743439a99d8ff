import Hummingbird

/// The Game Center web app for players: server-rendered pages (swift-mustache) and one style sheet, on the same
/// services as the JSON API, with cookie sessions and CSRF-checked forms. No page needs JavaScript.
struct WebAppRoutes {
    /// The page routes, as `METHOD /path`: pages are not part of the JSON API's `openapi.yaml` (but for `GET /`).
    static let pageRoutes: Set<String> = [
        "GET /app.css", "GET /app.js", "GET /live", "GET /sign-in", "POST /sign-in", "GET /sign-up", "POST /sign-up", "POST /sign-out",
        "POST /sign-out-everywhere", "GET /account", "POST /account/profile", "POST /account/password", "POST /account/sessions/revoke", "POST /account/data",
        "GET /friends", "POST /friends/request", "POST /friends/accept", "POST /friends/decline", "POST /friends/remove",
        "GET /games/{bundleID}/leaderboards", "GET /games/{bundleID}/achievements",
        "GET /games/{bundleID}/achievements/{identifier}/image", "GET /invitations", "POST /invitations/accept",
        "POST /invitations/decline", "GET /games/{bundleID}/play", "POST /games/{bundleID}/play", "GET /app-tickets/{ticket}",
        "GET /device-sign-in/{requestID}", "POST /device-sign-in/{requestID}", "POST /device-sign-in/{requestID}/decline", "POST /screen/left",
        "POST /screen/done", "GET /turns", "POST /turns/accept", "POST /turns/decline", "POST /turns/quit", "GET /saves", "POST /saves/restore",
        "POST /saves/delete",
        "GET /challenges", "POST /challenges/join", "POST /challenges/leave", "GET /party", "POST /party/join",
    ]

    let services: GameCenterApp.Services
    /// Whether every cookie is `Secure` (``GameCenterApp/Configuration/secureCookies``).
    let secureCookies: Bool
    /// Whether forms that write are refused (``GameCenterApp/Configuration/readOnly``).
    let readOnly: Bool

    /// Answers a browser's request for an address no route has with the app's page, or the console's under
    /// `/console` (added before the routes, after the error middleware).
    var notFoundPages: NotFoundPageMiddleware {
        NotFoundPageMiddleware(
            responder: PageResponder(
                accounts: services.accounts, cookies: cookies, renderer: renderer, presentations: services.presentations, readOnly: readOnly),
            console: ConsoleRoutes(services: services, secureCookies: secureCookies).responder)
    }

    private var renderer: PageRenderer { PageRenderer.shipped(metrics: services.metrics) }
    private var cookies: SessionCookies { SessionCookies(alwaysSecure: secureCookies) }

    /// Adds every page.
    func add(to router: Router<AppRequestContext>) {
        let renderer = self.renderer
        let cookies = self.cookies
        let responder = PageResponder(
            accounts: services.accounts, cookies: cookies, renderer: renderer, presentations: services.presentations, readOnly: readOnly)
        StyleSheet().add(to: router)
        services.presentations.add(to: router, responder: responder, cookies: cookies, renderer: renderer)
        LiveNotices(
            database: services.database, bus: services.bus, ticker: services.heartbeats, registry: services.registry, clock: services.clock,
            responder: responder
        )
        .add(to: router)
        AppTicketRoutes(tickets: services.appTickets).addPage(to: router, responder: responder, cookies: cookies)
        HomePage(
            registry: services.registry, players: services.players, achievements: services.achievements,
            responder: responder, renderer: renderer
        ).add(to: router)
        AccountPages(
            accounts: services.accounts, archive: services.archives, registry: services.registry, cookies: cookies, responder: responder,
            renderer: renderer
        ).add(to: router)
        DeviceSignInPages(
            signIns: services.deviceSignIns, players: services.players, clock: services.clock, responder: responder, renderer: renderer
        ).add(to: router)
        FriendPages(friends: services.friends, players: services.players, registry: services.registry, responder: responder, renderer: renderer).add(to: router)
        LeaderboardPages(
            registry: services.registry, leaderboards: services.leaderboards, players: services.players,
            responder: responder, renderer: renderer
        ).add(to: router)
        AchievementPages(
            registry: services.registry, achievements: services.achievements, friends: services.friends,
            players: services.players, responder: responder, renderer: renderer
        ).add(to: router)
        InvitationPages(
            matchmaking: services.matchmaking, registry: services.registry, clock: services.clock, responder: responder,
            renderer: renderer
        ).add(to: router)
        TurnPages(turns: services.turns, registry: services.registry, clock: services.clock, responder: responder, renderer: renderer)
            .add(to: router)
        SavePages(saves: services.saves, registry: services.registry, responder: responder, renderer: renderer).add(to: router)
        ChallengePages(challenges: services.challenges, registry: services.registry, clock: services.clock, responder: responder, renderer: renderer)
            .add(to: router)
        PartyPages(activities: services.activities, registry: services.registry, responder: responder, renderer: renderer)
            .add(to: router)
        PlayWithFriendsPages(
            registry: services.registry, matchmaking: services.matchmaking, friends: services.friends, players: services.players,
            clock: services.clock, responder: responder, renderer: renderer
        ).add(to: router)
    }
}
