import Foundation
import GameCenterProtocol
import GameCenterStorage
import Hummingbird
import HummingbirdCore
import HummingbirdWebSocket
import Logging
import NIOCore
import ServiceLifecycle
import UnixSignals

/// The `gamecenter serve` server: configuration, wiring of the features, and running until a stop signal.
public enum GameCenterApp {
    /// Everything `gamecenter serve` can set.
    public struct Configuration: Sendable {
        public var host = "127.0.0.1"
        public var port = 8080
        public var udpPort = 8081
        /// `sqlite:PATH` or `postgres://…`.
        public var databaseURL = "sqlite:.gamecenter/gamecenter.sqlite"
        /// A manifest file or a folder of manifests; nil for none.
        public var gamesPath: String?
        /// Seconds between realtime heartbeats.
        public var heartbeatInterval: Duration = .seconds(15)
        /// Account rules' tunables.
        public var accounts = AccountPolicy()
        /// Seconds an unanswered match invitation can still be answered — and friends chosen in the Game Center app
        /// wait for their game to start — for games whose manifest sets no `matchmaking.invitationSeconds`
        /// (``MatchmakingSettings/invitationSecondsRange``). An hour by default: long enough for an invitee to see
        /// it on the invitations page and start the game; the inviter's game waits that long only if it does not
        /// cancel first.
        public var invitationLifetime = 3600
        /// The key `/admin/v1/…` routes require; nil turns them off.
        public var adminKey: String?
        /// Lets `POST /admin/v1/clock` move the server's clock forward (tests only; never on by default).
        public var testClock = false
        /// How often the server's clock looks for turn-based turns and exchanges that timed out.
        public var turnTimeoutCheckInterval: Duration = .seconds(1)
        /// How often the server's clock records recurring leaderboards' occurrence starts and ends, and follows and ends
        /// challenges.
        public var occurrenceCheckInterval: Duration = .seconds(1)
        /// Marks the web app's cookies `Secure` on every response. Without it they are `Secure` only for requests a
        /// reverse proxy on this host (a loopback peer) forwarded with `X-Forwarded-Proto: https`.
        public var secureCookies = false
        /// Wind-down mode (`serve --read-only`): devices, game servers and the web app may read, sign in and out and
        /// download a player's data; every other write is refused with `server.read_only`. Admin routes still work.
        public var readOnly = false
        /// Where devices send match datagrams, when not the HTTP host they used and the bound UDP port.
        public var udpPublicAddress: PublicAddress?
        /// The base URL devices and other nodes reach this node at (`--public-url`); nil: `http://HOST:PORT` of the
        /// address it listens on (unknown when that is every address, `0.0.0.0` or `::`).
        public var publicURL: String?
        /// HTTP connections' timeouts and caps (the caps derived from the file descriptor limit).
        public var connections = ConnectionLimits()
        /// How often one player, session or client address may do what costs others something.
        public var rateLimits = RateLimits()
        /// This node's id among the processes on the database (`--node-id`); nil generates one (the host's name and
        /// six random hexadecimal digits).
        public var nodeID: String?
        /// On PostgreSQL, how often this node reads the other nodes' notices from a table instead of hearing them by
        /// `LISTEN/NOTIFY` (`--node-poll-seconds`, for databases without `NOTIFY` such as CockroachDB); nil listens.
        public var nodePollInterval: Duration?
        /// A port on `host` that serves `GET /metrics` without the admin key (for a Prometheus scraper on a
        /// private network); nil for none (`/metrics` on the main port needs the admin key either way).
        public var metricsPort: Int?

        /// How often the studio console's charts sample the server's metrics (the console keeps six hours' worth at one a
        /// minute).
        public var metricsSampleInterval: Duration = .seconds(60)

        /// The defaults of `API.md`.
        public init() {}

        /// Whether `id` can be a node id: 1–64 letters, digits, `.`, `_` or `-`.
        public static func isValidNodeID(_ id: String) -> Bool { NodeRegistry.isValidID(id) }

        /// A host and port devices can reach.
        public struct PublicAddress: Sendable, Equatable {
            public var host: String
            public var port: Int

            /// An address.
            public init(host: String, port: Int) {
                self.host = host
                self.port = port
            }
        }
    }

    /// The features, wired to one database, bus and game registry.
    package struct Services: Sendable {
        package let database: Database
        package let registry: GameRegistry
        let bus: any EventBus
        let accounts: AccountService
        let appTickets: AppTicketService
        let presentations: ScreenPresentations
        let deviceSignIns: DeviceSignInService
        let players: PlayerService
        let friends: FriendService
        let achievements: AchievementService
        let leaderboards: LeaderboardService
        package let matchmaking: MatchmakingService
        /// Turn-based matches.
        let turns: TurnBasedService
        let saves: SavedGameService
        let challenges: ChallengeService
        let activities: ActivityService
        let relay: RelayService
        /// The studio's game-server keys.
        let serverKeys: ServerKeyService
        /// Game-server writes once in effect per `Idempotency-Key`.
        let idempotentWrites: IdempotentWrites
        /// Players' identity, signed for the studio's game servers.
        let identity: IdentityService
        /// Webhook endpoints and deliveries (the admin routes).
        let webhooks: WebhookService
        /// Delivers webhooks (on the node that holds its lease).
        let webhookDispatcher: WebhookDispatcher
        /// Hiding players from boards.
        let moderation: ModerationService
        /// Deleting accounts for good.
        let accountDeletion: AccountDeletionService
        /// Archives (a player's data, a game's, the server's) as downloads.
        let archives: ArchiveDownload
        /// Keeps the boards in step with the players hidden on any node.
        let hiddenPlayerFollower: HiddenPlayerFollower
        /// Quarantines score submissions left verifying by a stopped node.
        let submissionSweeper: SubmissionSweeper
        /// The studio's audit log.
        let audit: AuditLog
        /// Players banned by the studio.
        let bans: PlayerBans
        /// The studio console's users and sign-ins.
        let consoleUsers: ConsoleUsers
        package let clock: ServerClock
        let metrics: ServerMetrics
        /// `GET /metrics`, one for every port that serves it (the relay's counters are exported once).
        let metricsRoutes: MetricsRoutes
        /// Samples the metrics for the studio console's charts.
        let metricsSampler: MetricsSampler
        /// The abuse limits' counts.
        let limiter: RateLimiter
        /// The realtime channel's rules.
        let realtime: RealtimeService
        /// The realtime channels' heartbeats.
        let heartbeats: HeartbeatTicker
        /// This node's row among the nodes on the database.
        let nodes: NodeRegistry
        /// What one node and several nodes do differently.
        let topology: any NodeTopology
        /// The background work of the topology's parts (the bus, the boards following other nodes).
        let topologyServices: [any Service]

        /// Wires the features; the leaderboard boards are built from storage before it returns. `monotonic` times the
        /// matchmaking queue (tests give a clock they move by hand).
        init(
            database: Database, registry: GameRegistry, configuration: Configuration, monotonic: MonotonicClock = .system(), logger: Logger
        ) async throws {
            let serverClock = ServerClock(isAdjustable: configuration.testClock)
            let nodes = try await NodeRegistry.register(
                nodeID: configuration.nodeID ?? NodeRegistry.generatedID(), database: database, clock: serverClock, logger: logger)
            self.nodes = nodes
            let metrics = ServerMetrics()
            self.metrics = metrics
            database.statements.observeDurations { metrics.storageStatementSeconds.recordNanoseconds($0) }
            let topology = try await NodeTopologies.make(
                database: database, nodeID: nodes.nodeID, pollInterval: configuration.nodePollInterval, clock: serverClock, metrics: metrics,
                logger: logger)
            self.topology = topology
            let bus = topology.bus
            let clock = serverClock
            self.clock = serverClock
            self.database = database
            self.registry = registry
            self.bus = bus
            let playerCache = PlayerCache()
            let limiter = RateLimiter(limits: configuration.rateLimits, metrics: metrics, clock: clock)
            self.limiter = limiter
            self.accounts = AccountService(
                database: database, bus: bus, configuration: configuration.accounts, players: playerCache,
                limiter: limiter, clock: clock)
            topology.followSessionEndings(into: accounts.sessionCache)
            topology.followManifestReloads(into: registry)
            self.appTickets = AppTicketService(database: database, accounts: accounts, clock: serverClock)
            self.presentations = ScreenPresentations(database: database, bus: bus, clock: serverClock)
            self.deviceSignIns = DeviceSignInService(database: database, accounts: accounts, registry: registry, limiter: limiter, clock: serverClock)
            self.players = PlayerService(database: database, registry: registry, cache: playerCache, clock: clock)
            self.friends = FriendService(database: database, bus: bus, players: playerCache, clock: clock, limiter: limiter)
            self.achievements = AchievementService(database: database, bus: bus, clock: clock, metrics: metrics, limiter: limiter)
            self.serverKeys = ServerKeyService(database: database, registry: registry, clock: clock)
            self.idempotentWrites = IdempotentWrites(database: database, clock: clock)
            self.identity = IdentityService(database: database, clock: clock)
            self.webhooks = WebhookService(database: database, registry: registry, clock: clock)
            self.webhookDispatcher = WebhookDispatcher(database: database, clock: clock, nodeID: nodes.nodeID, logger: logger)
            let audit = AuditLog(database: database, clock: clock)
            self.audit = audit
            let index = LeaderboardIndex(database: database, logger: logger)
            let challenges = ChallengeService(
                database: database, bus: bus, clock: serverClock, occurrences: index.occurrences, standings: ChallengeStandings(formatter: .shared),
                logger: logger)
            self.challenges = challenges
            self.leaderboards = LeaderboardService(
                database: database, index: index, clock: serverClock, formatter: .shared, metrics: metrics,
                limiter: limiter, bus: bus, challenges: challenges, audit: audit)
            self.moderation = ModerationService(database: database, index: index, clock: serverClock)
            self.accountDeletion = AccountDeletionService(
                database: database, accounts: accounts, leaderboards: leaderboards, registry: registry, clock: serverClock)
            self.archives = ArchiveDownload(database: database, clock: serverClock)
            self.bans = PlayerBans(database: database, accounts: accounts, clock: serverClock)
            self.consoleUsers = ConsoleUsers(database: database, policy: configuration.accounts, clock: serverClock)
            self.hiddenPlayerFollower = HiddenPlayerFollower(database: database, index: index, logger: logger)
            self.submissionSweeper = SubmissionSweeper(database: database, clock: serverClock, logger: logger)
            // The boards follow the reports other nodes store from before they are built.
            self.topologyServices = topology.services + (try await topology.followScores(into: index))
            let recorder = MatchRecorder(database: database, bus: bus)
            let activities = ActivityService(database: database, bus: bus, clock: serverClock, logger: logger)
            self.activities = activities
            self.relay = RelayService(
                database: database, recorder: recorder, clock: serverClock,
                publicAddress: configuration.udpPublicAddress, logger: logger)
            self.metricsRoutes = MetricsRoutes(metrics: metrics, relayStatistics: relay.statistics, statements: database.statements)
            self.metricsSampler = MetricsSampler(routes: metricsRoutes, clock: serverClock, interval: configuration.metricsSampleInterval)
            self.matchmaking = MatchmakingService(
                database: database, recorder: recorder, clock: serverClock, relay: relay, metrics: metrics,
                limiter: limiter, invitationLifetime: configuration.invitationLifetime,
                queues: topology.queues, parties: activities, monotonic: monotonic, logger: logger)
            self.turns = TurnBasedService(
                database: database, bus: bus, clock: serverClock, registry: registry, leaderboards: leaderboards, logger: logger)
            self.saves = SavedGameService(database: database, bus: bus, clock: serverClock, logger: logger)
            let heartbeats = HeartbeatTicker(interval: configuration.heartbeatInterval)
            self.heartbeats = heartbeats
            self.realtime = RealtimeService(
                database: database, bus: bus, presence: matchmaking, ticker: heartbeats, metrics: metrics,
                limiter: limiter, channels: RealtimeChannelCap(allowed: configuration.rateLimits.realtimeChannelsOpenPerSession), clock: clock)
            nodes.reportFigures { [matchmaking, relay] in
                let (channels, waiting) = matchmaking.nodeCounts()
                return NodeFigures(realtimeConnections: channels, waitingRequests: waiting, relayedMatches: relay.openMatches().count)
            }
            try await leaderboards.warm(games: registry.all, logger: logger)
        }
    }

    /// The router with every route; `router.routes` lists them (the OpenAPI test compares the two).
    static func makeRouter(_ services: Services, configuration: Configuration) -> Router<AppRequestContext> {
        let router = Router(context: AppRequestContext.self)
        router.add(middleware: MetricsMiddleware(metrics: services.metrics))
        let webApp = WebAppRoutes(services: services, secureCookies: configuration.secureCookies, readOnly: configuration.readOnly)
        router.add(middleware: ErrorMiddleware())
        if configuration.readOnly { router.add(middleware: ReadOnlyMiddleware()) }
        router.add(middleware: webApp.notFoundPages)
        router.add(middleware: UpgradeRefusalMiddleware())
        webApp.add(to: router)
        ConsoleRoutes(services: services, secureCookies: configuration.secureCookies).add(to: router)
        OpenAPIDocument().add(to: router)
        // Liveness: the process serves requests. Readiness: it can also reach its database.
        router.get("healthz") { _, _ in "ok" }
        router.get("readyz") { [database = services.database] _, _ -> String in
            do {
                try await database.checkReady()
            } catch {
                throw APIError.storageUnavailable
            }
            return "ready"
        }

        let v1 = router.group("v1").add(middleware: DeviceMiddleware(registry: services.registry))
        GameRoutes().addPublic(to: v1)
        AccountRoutes(accounts: services.accounts).addPublic(to: v1)
        DeviceSignInRoutes(signIns: services.deviceSignIns).addPublic(to: v1)

        let signedIn = v1.group().add(middleware: AuthenticationMiddleware(accounts: services.accounts))
        AccountRoutes(accounts: services.accounts).addAuthenticated(to: signedIn)
        PlayerRoutes(players: services.players).addAuthenticated(to: signedIn)
        FriendRoutes(friends: services.friends).addAuthenticated(to: signedIn)
        AchievementRoutes(achievements: services.achievements).addAuthenticated(to: signedIn)
        LeaderboardRoutes(leaderboards: services.leaderboards).addAuthenticated(to: signedIn)
        MatchmakingRoutes(matchmaking: services.matchmaking).addAuthenticated(to: signedIn)
        TurnBasedRoutes(turns: services.turns, limiter: services.limiter).addAuthenticated(to: signedIn)
        SavedGameRoutes(saves: services.saves).addAuthenticated(to: signedIn)
        ChallengeRoutes(challenges: services.challenges).addAuthenticated(to: signedIn)
        ActivityRoutes(activities: services.activities).addAuthenticated(to: signedIn)
        RelayRoutes(relay: services.relay).addAuthenticated(to: signedIn)
        RealtimeRoutes(realtime: services.realtime).addAuthenticated(to: signedIn)
        AppTicketRoutes(tickets: services.appTickets).addAuthenticated(to: signedIn)
        let identity = IdentityRoutes(identity: services.identity, publicURL: configuration.publicURL)
        identity.addAuthenticated(to: signedIn)
        identity.addPublic(to: router)

        // The studio's game servers: App Store Connect's submission routes (answering errors as Apple does) and our own.
        let apple = router.group().add(middleware: AppleErrorMiddleware())
            .add(middleware: ServerKeyMiddleware(keys: services.serverKeys, limiter: services.limiter))
        AppleSubmissionRoutes(
            leaderboards: services.leaderboards, achievements: services.achievements, database: services.database, writes: services.idempotentWrites
        ).add(to: apple)
        let gameServers = router.group("server/v1").add(middleware: ServerKeyMiddleware(keys: services.serverKeys, limiter: services.limiter))
        ServerReadRoutes(leaderboards: services.leaderboards, achievements: services.achievements, database: services.database).add(to: gameServers)

        let admin = router.group("admin/v1").add(middleware: AdminMiddleware(adminKey: configuration.adminKey))
        ServerKeyAdminRoutes(keys: services.serverKeys, audit: services.audit).add(to: admin)
        let webhookRoutes = WebhookAdminRoutes(webhooks: services.webhooks, dispatcher: services.webhookDispatcher, audit: services.audit)
        webhookRoutes.add(to: admin)
        webhookRoutes.addServer(to: gameServers)
        let moderation = ModerationRoutes(moderation: services.moderation, audit: services.audit, registry: services.registry)
        moderation.addAdmin(to: admin)
        moderation.addServer(to: gameServers)
        SavedGameRoutes(saves: services.saves).addServer(to: gameServers)
        ServerTurnRoutes(turns: services.turns, database: services.database, writes: services.idempotentWrites).add(to: gameServers)
        let submissions = ScoreSubmissionRoutes(leaderboards: services.leaderboards, writes: services.idempotentWrites, registry: services.registry)
        submissions.addServer(to: gameServers)
        submissions.addAdmin(to: admin)
        LeaderboardAdminRoutes(leaderboards: services.leaderboards, registry: services.registry, audit: services.audit).add(to: admin)
        ClockRoutes(clock: services.clock).add(to: admin)
        QueueMetricsRoutes(matchmaking: services.matchmaking, registry: services.registry).add(to: admin)
        let studioMatchmaking = MatchmakingStudioRoutes(matchmaking: services.matchmaking, registry: services.registry)
        studioMatchmaking.addAdmin(to: admin)
        studioMatchmaking.addServer(to: gameServers)
        ArchiveAdminRoutes(deletion: services.accountDeletion, archives: services.archives, registry: services.registry).add(to: admin)
        NodeRoutes(registry: services.nodes).add(to: admin)
        RelayRoutes(relay: services.relay).addAdmin(to: admin)
        let nodes = router.group("internal/v1").add(middleware: NodeKeyMiddleware(queues: services.topology.queues))
        MatchmakingNodeRoutes(matchmaking: services.matchmaking).add(to: nodes)
        let metrics = router.group().add(middleware: AdminMiddleware(adminKey: configuration.adminKey))
        services.metricsRoutes.add(to: metrics)
        return router
    }

    /// The `--metrics-port` server: `GET /metrics` alone, without the admin key.
    static func makeMetricsApplication(
        _ services: Services, host: String, port: Int, logger: Logger,
        onServerRunning: @escaping @Sendable (any Channel) async -> Void
    ) -> some ApplicationProtocol {
        let router = Router(context: AppRequestContext.self)
        router.add(middleware: ErrorMiddleware())
        services.metricsRoutes.add(to: router.group())
        return Application(
            router: router, configuration: .init(address: .hostname(host, port: port), serverName: "gamecenter"),
            onServerRunning: onServerRunning, logger: logger)
    }

    /// Builds the application on an open database (used by `serve` and by in-process tests).
    static func makeApplication(
        _ services: Services, configuration: Configuration, extraServices: [any Service] = [], logger: Logger,
        onServerRunning: @escaping @Sendable (any Channel) async -> Void = { _ in }
    ) -> some ApplicationProtocol {
        let router = makeRouter(services, configuration: configuration)
        let webSocketResponder = router.buildResponder()
        let limits = configuration.connections
        let counter = ConnectionCounter(limits: limits)
        let parser = HTTP1Channel.Configuration.DecoderConfiguration(
            maxHeaderFieldSize: ConnectionLimits.maximumHeaderBytes, maxHeaderListSize: ConnectionLimits.maximumHeaderBytes,
            maxHeaderFieldCount: ConnectionLimits.maximumHeaderCount)
        return Application(
            router: router,
            server: HTTPServerBuilder { responder in
                GuardedHTTP1WebSocketChannel(
                    inner: HTTP1WebSocketUpgradeChannel(
                        responder: responder, webSocketResponder: webSocketResponder,
                        // No WebSocket-level pings: the realtime channel and the relay check liveness with their own
                        // heartbeats, and the automatic ping kept a task and a timer per connection (about 1 KB each).
                        configuration: .init(http1: .init(httpDecoderConfiguration: parser), ws: .init(maxFrameSize: 1 << 20, autoPing: .disabled))),
                    limits: limits, counter: counter)
            },
            configuration: .init(address: .hostname(configuration.host, port: configuration.port), serverName: "gamecenter"),
            services: [
                services.nodes, services.matchmaking, services.relay, services.heartbeats, services.webhookDispatcher, services.hiddenPlayerFollower,
                services.submissionSweeper, services.metricsSampler,
                TurnBasedClock(turns: services.turns, interval: configuration.turnTimeoutCheckInterval, logger: logger),
                OccurrenceClock(
                    leaderboards: services.leaderboards, registry: services.registry, interval: configuration.occurrenceCheckInterval, logger: logger),
                ChallengeClock(
                    challenges: services.challenges, registry: services.registry, interval: configuration.occurrenceCheckInterval, logger: logger),
            ] + services.topologyServices + extraServices,
            onServerRunning: onServerRunning,
            logger: logger
        )
    }

    /// Loads the games, opens the database, binds HTTP and UDP, calls `onReady(httpPort, udpPort)` once both
    /// listen, and serves until SIGINT or SIGTERM; SIGHUP reloads the manifests. Invalid manifests throw before
    /// anything is opened.
    public static func run(
        configuration: Configuration, logger: Logger, onReady: @escaping @Sendable (_ httpPort: Int, _ udpPort: Int) -> Void
    ) async throws {
        try await run(configuration: configuration, logger: logger, prepare: { _ in }, onReady: onReady)
    }

    /// ``run(configuration:logger:onReady:)`` with a step between wiring the services and listening: benchmarks
    /// seed their made-up players, sessions, matches and waiting requests there, through storage and the services'
    /// own entry points.
    package static func run(
        configuration: Configuration, logger: Logger, prepare: @escaping @Sendable (Services) async throws -> Void,
        onReady: @escaping @Sendable (_ httpPort: Int, _ udpPort: Int) -> Void
    ) async throws {
        let registry = try GameRegistry(path: configuration.gamesPath)
        // SQLite serves one node: a second server on the same file is refused before anything is opened.
        let nodeLock = try SQLiteNodeLock.acquire(for: configuration.databaseURL)
        defer { withExtendedLifetime(nodeLock) {} }
        try await Database.withDatabase(url: configuration.databaseURL, logger: logger) { database in
            let services = try await Services(database: database, registry: registry, configuration: configuration, logger: logger)
            try await services.accounts.fillMissingAliasSkeletons()
            try await prepare(services)
            let udp = try UDPEndpoint(host: configuration.host, port: configuration.udpPort, relay: services.relay, logger: logger)
            let reloader = ManifestReloader(registry: registry, logger: logger)
            var extraServices: [any Service] = [udp, reloader]
            if let metricsPort = configuration.metricsPort {
                extraServices.append(
                    makeMetricsApplication(services, host: configuration.host, port: metricsPort, logger: logger) { channel in
                        logger.info("metrics on http://\(configuration.host):\(channel.localAddress?.port ?? metricsPort)/metrics")
                    })
            }
            let app = makeApplication(services, configuration: configuration, extraServices: extraServices, logger: logger) { channel in
                let port = channel.localAddress?.port ?? configuration.port
                let udpAddress = configuration.udpPublicAddress.map { "\($0.host):\($0.port)" } ?? "\(configuration.host):\(udp.port)"
                let wildcard = ["0.0.0.0", "::", "[::]", ""].contains(configuration.host)
                let publicURL = configuration.publicURL ?? (wildcard ? nil : "http://\(configuration.host):\(port)")
                services.nodes.listening(http: "\(configuration.host):\(port)", udp: udpAddress, publicURL: publicURL ?? "")
                services.matchmaking.serving(at: publicURL)
                logger.info("node \(services.nodes.nodeID)")
                onReady(port, udp.port)
            }
            try await app.runService(gracefulShutdownSignals: [.sigterm, .sigint])
            logger.info("HTTP, realtime and background services stopped")
        }
    }
}

/// Reloads the game manifests on SIGHUP; a broken edit is logged and the previous games stay.
struct ManifestReloader: Service {
    let registry: GameRegistry
    let logger: Logger

    func run() async throws {
        for await _ in await UnixSignalsSequence(trapping: .sighup).cancelOnGracefulShutdown() {
            do {
                let games = try registry.reload()
                logger.info("reloaded manifests", metadata: [LogKey.games: "\(games.count)"])
            } catch {
                logger.error("manifest reload refused; the previous games stay", metadata: [LogKey.error: "\(error)"])
            }
        }
    }
}
