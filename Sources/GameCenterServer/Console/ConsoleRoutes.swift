import Hummingbird

/// The studio console at `/console`: the web app's sibling for the studio's staff, on the same page stack
/// (server-rendered, no script, CSRF-checked forms) with its own users, roles and session cookie. Every page calls
/// the services the JSON API and the admin routes call; every action is written to the audit log.
struct ConsoleRoutes {
    /// Where every console page lives; none is part of the JSON API's `openapi.yaml`.
    static let pathPrefix = "/console"

    let services: GameCenterApp.Services
    /// Whether every cookie is `Secure` (``GameCenterApp/Configuration/secureCookies``).
    let secureCookies: Bool

    /// What routes the console's pages (also the page for an unknown address under ``pathPrefix``).
    var responder: ConsoleResponder {
        ConsoleResponder(users: services.consoleUsers, cookies: SessionCookies(alwaysSecure: secureCookies), renderer: renderer)
    }

    private var renderer: PageRenderer { PageRenderer.shipped(metrics: services.metrics) }

    /// Adds every console page.
    func add(to router: Router<AppRequestContext>) {
        let renderer = self.renderer
        let responder = self.responder
        ConsoleSignInPages(users: services.consoleUsers, responder: responder, renderer: renderer).add(to: router)
        ConsolePlayerPages(
            database: services.database, registry: services.registry, accounts: services.accounts, moderation: services.moderation,
            bans: services.bans, leaderboards: services.leaderboards, achievements: services.achievements, archives: services.archives,
            deletion: services.accountDeletion, audit: services.audit,
            clock: services.clock, responder: responder, renderer: renderer
        ).add(to: router)
        ConsoleGamePages(
            registry: services.registry, leaderboards: services.leaderboards, achievements: services.achievements,
            editor: ManifestEditor(registry: services.registry, bus: services.bus), archives: services.archives, audit: services.audit,
            responder: responder, renderer: renderer
        ).add(to: router)
        ConsoleQueuePage(registry: services.registry, matchmaking: services.matchmaking, responder: responder, renderer: renderer).add(to: router)
        ConsoleLivePage(
            database: services.database, registry: services.registry, nodeID: services.nodes.nodeID, matchmaking: services.matchmaking,
            relay: services.relay, metricsRoutes: services.metricsRoutes, sampler: services.metricsSampler, clock: services.clock,
            responder: responder, renderer: renderer
        ).add(to: router)
        ConsoleStudioPages(
            registry: services.registry, keys: services.serverKeys, webhooks: services.webhooks, dispatcher: services.webhookDispatcher,
            users: services.consoleUsers, audit: services.audit, responder: responder, renderer: renderer
        ).add(to: router)
        ConsoleAuditPage(database: services.database, registry: services.registry, responder: responder, renderer: renderer).add(to: router)
    }
}
