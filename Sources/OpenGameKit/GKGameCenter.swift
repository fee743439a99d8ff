import Foundation
import GameCenterProtocol
import Logging
import NIOHTTP1
import Synchronization

/// One device: a server, a game (bundle id and optional client key), an environment, and a folder for the
/// saved session. Several devices in one process are independent (tests and bots make many).
public final class GKGameCenter: Sendable {
    /// The Game Center server's URL, e.g. `http://127.0.0.1:8080` (with several, the first: the device's saved session
    /// and player are kept under it).
    public let server: URL
    /// Every server the device may use: the nodes of one deployment (`gamecenter serve` processes on one database).
    /// Requests and the realtime channel go to one at a time and move to the next when it cannot be reached.
    public var servers: [URL] { api.servers.urls }
    /// The game's bundle identifier, as in its manifest.
    public let bundleID: String
    /// The game's client key, when its manifest sets one.
    public let clientKey: String?
    /// `sandbox` or `live`.
    public let environment: GKEnvironment
    /// Where the saved session lives (owner-only permissions).
    public let storageDirectory: URL
    /// The locale the server localizes texts for (BCP 47).
    public let locale: String
    /// Where the device owner's restrictions are read from (see ``GKDeviceRestrictions``).
    public let restrictionsFile: URL

    /// Whether the device was given a server: without one it has no Game Center (``GKError/Code/notSupported``).
    let hasServer: Bool
    let api: APIClient
    let logger: Logger
    let sessionFile: SessionFile
    /// The player signed in on the device, shared by every game.
    let devicePlayerFile: DeviceFile<DevicePlayer>
    /// The device's players' dismissals of the standard sign-in, shared by every game.
    let signInOptOutFile: DeviceFile<DeviceSignInOptOut>
    let state = Mutex(DeviceState())
    let eventHub = EventHub()
    /// The turn-based listeners the game registered (``GKLocalPlayer/register(_:)-(GKTurnBasedEventListener)``).
    let turnBasedListeners = TurnBasedListeners()
    /// The games' listeners for saved-game changes.
    let savedGameListeners = SavedGameListeners()
    /// The versions of each save this game last saw current, by player: what its next save is based on.
    let savedGameBases: DeviceFile<[String: [String: [String]]]>
    /// The standard screens presented in the player's browser, followed until they finish.
    let presentedScreens = PresentedScreens()
    /// Activities chosen in the Game Center app that the game has not started.
    let pendingActivities = PendingActivities()
    let outbox: Outbox
    /// Saves made while the server could not be reached, until it takes them.
    let savedGameOutbox: SavedGameOutbox
    /// Signs score reports for boards that take signed ones.
    let reportSigner = ReportSigner()

    /// The player signed in on this device (or not yet).
    public var localPlayer: GKLocalPlayer { _localPlayer }
    private let _localPlayer: GKLocalPlayer
    /// This device's matchmaker.
    public var matchmaker: GKMatchmaker { _matchmaker }
    private let _matchmaker: GKMatchmaker

    /// Creates a device. `storageDirectory` (this game's saved session and outbox) defaults to
    /// `$XDG_DATA_HOME/opengamekit/BUNDLE-ENVIRONMENT` (`~/.local/share/...`); devices sharing a folder share their
    /// saved session. `deviceDirectory` holds the player signed in on the device for every game (the seed's one player
    /// per device): it defaults to `$XDG_DATA_HOME/opengamekit` when `storageDirectory` is left out, else to
    /// `storageDirectory` (a test device of its own); games naming the same one share their player. `restrictionsFile`
    /// defaults to the device's own (``GKDeviceRestrictions/defaultFile``); tests and kiosks may name another.
    public convenience init(
        server: URL, bundleID: String, clientKey: String? = nil, environment: GKEnvironment = .sandbox,
        storageDirectory: URL? = nil, deviceDirectory: URL? = nil,
        locale: String = Locale.current.identifier.replacingOccurrences(of: "_", with: "-"),
        restrictionsFile: URL = GKDeviceRestrictions.defaultFile
    ) {
        self.init(
            servers: [server], bundleID: bundleID, clientKey: clientKey, environment: environment, storageDirectory: storageDirectory,
            deviceDirectory: deviceDirectory, locale: locale, restrictionsFile: restrictionsFile)
    }

    /// Creates a device that may use any of `servers`: the nodes of one deployment reached directly, without a load
    /// balancer. It starts with the first and moves to the next when one cannot be reached; its realtime channel then
    /// reconnects there and replays what it missed. With no server, the device has no Game Center: authenticating (and
    /// every other call) fails with ``GKError/Code/notSupported``, as on the seed's devices without Game Center. The
    /// other parameters are
    /// ``init(server:bundleID:clientKey:environment:storageDirectory:deviceDirectory:locale:restrictionsFile:)``'s.
    public init(
        servers: [URL], bundleID: String, clientKey: String? = nil, environment: GKEnvironment = .sandbox,
        storageDirectory: URL? = nil, deviceDirectory: URL? = nil,
        locale: String = Locale.current.identifier.replacingOccurrences(of: "_", with: "-"),
        restrictionsFile: URL = GKDeviceRestrictions.defaultFile
    ) {
        self.hasServer = !servers.isEmpty
        let servers = servers.isEmpty ? [URL(string: "http://127.0.0.1:8080")!] : servers
        let server = servers[0]
        self.server = server
        self.bundleID = bundleID
        self.clientKey = clientKey
        self.environment = environment
        self.storageDirectory = storageDirectory ?? Self.defaultStorageDirectory(bundleID: bundleID, environment: environment)
        self.locale = locale.isEmpty || locale == "POSIX" ? "en" : locale
        self.restrictionsFile = restrictionsFile
        self.api = APIClient(
            servers: ServerList(servers), hasServer: hasServer, bundleID: bundleID, clientKey: clientKey, environment: environment,
            locale: self.locale)
        var logger = Logger(label: "opengamekit")
        logger[metadataKey: LogKey.bundleID] = "\(bundleID)"
        self.logger = logger
        self.sessionFile = SessionFile(directory: self.storageDirectory)
        let deviceFolder = deviceDirectory ?? storageDirectory ?? Self.dataDirectory
        self.devicePlayerFile = DeviceFile("player", directory: deviceFolder, server: server, environment: environment)
        self.signInOptOutFile = DeviceFile("sign-in", directory: deviceFolder, server: server, environment: environment)
        self.savedGameBases = DeviceFile("saved-game-bases", directory: self.storageDirectory, server: server, environment: environment)
        self.outbox = Outbox(directory: self.storageDirectory.appendingPathComponent("outbox", isDirectory: true), logger: logger)
        self.savedGameOutbox = SavedGameOutbox(directory: self.storageDirectory.appendingPathComponent("saved-game-outbox", isDirectory: true))
        self._localPlayer = GKLocalPlayer()
        self._matchmaker = GKMatchmaker()
        _localPlayer.attach(to: self)
        _matchmaker.attach(to: self)
    }

    private static let defaultDevice = Mutex<GKGameCenter?>(nil)

    /// The device most games use, configured from the environment: `GAMECENTER_URL` (the server, e.g.
    /// `http://127.0.0.1:8080`; several nodes' URLs separated by commas), `GAMECENTER_BUNDLE_ID`, `GAMECENTER_CLIENT_KEY`,
    /// `GAMECENTER_ENVIRONMENT` (`sandbox` or `live`) and `GAMECENTER_STORAGE`. Set it to use another. Without a valid
    /// `GAMECENTER_URL` no Game Center is configured: authenticating fails with ``GKError/Code/notSupported``, and the
    /// game turns its Game Center features off, as the seed asks.
    public static var `default`: GKGameCenter {
        get {
            defaultDevice.withLock { device in
                if let device { return device }
                let made = fromEnvironment(ProcessInfo.processInfo.environment)
                device = made
                return made
            }
        }
        set { defaultDevice.withLock { $0 = newValue } }
    }

    static func fromEnvironment(_ variables: [String: String]) -> GKGameCenter {
        GKGameCenter(
            servers: (variables["GAMECENTER_URL"] ?? "").split(separator: ",").compactMap {
                URL(string: $0.trimmingCharacters(in: .whitespaces)).flatMap { $0.host == nil ? nil : $0 }
            },
            bundleID: variables["GAMECENTER_BUNDLE_ID"] ?? Bundle.main.bundleIdentifier ?? "com.example.game",
            clientKey: variables["GAMECENTER_CLIENT_KEY"],
            environment: GKEnvironment(rawValue: variables["GAMECENTER_ENVIRONMENT"] ?? "") ?? .sandbox,
            storageDirectory: variables["GAMECENTER_STORAGE"].map { URL(fileURLWithPath: $0, isDirectory: true) }
        )
    }

    static func defaultStorageDirectory(bundleID: String, environment: GKEnvironment) -> URL {
        dataDirectory.appendingPathComponent("\(bundleID)-\(environment.rawValue)", isDirectory: true)
    }

    /// The SDK's folder in the user's data directory, shared by every game: `$XDG_DATA_HOME/opengamekit`.
    static var dataDirectory: URL {
        let variables = ProcessInfo.processInfo.environment
        let base =
            variables["XDG_DATA_HOME"].map { URL(fileURLWithPath: $0) }
            ?? FileManager.default.homeDirectoryForCurrentUser.appendingPathComponent(".local/share")
        return base.appendingPathComponent("opengamekit", isDirectory: true)
    }

    /// What the device's owner allows on it, read from ``restrictionsFile`` now.
    public var restrictions: GKDeviceRestrictions { GKDeviceRestrictions.read(from: restrictionsFile) }

    /// Game Center events for this device (friend requests, answers, sign-outs) as they arrive on the realtime
    /// channel. Each access returns a new stream that sees the events from then on.
    public var events: AsyncStream<GKGameCenterEvent> { eventHub.subscribe() }

    /// Stops this device's realtime channel and forgets its session in memory, without signing out: the saved
    /// session stays, so a later `.stored` authentication resumes it and receives what was pushed meanwhile.
    /// Call it when the game quits or before discarding a device.
    public func close() async {
        let (realtime, watch) = state.withLock { state -> (Task<Void, Never>?, Task<Void, Never>?) in
            defer { state.realtime = nil; state.session = nil; state.friends = nil; state.devicePlayerWatch = nil }
            return (state.realtime, state.devicePlayerWatch)
        }
        realtime?.cancel()
        watch?.cancel()
        matchmaker.failAll(GKError(.cancelled, "the device was closed while the request waited"))
        await outbox.stopRetrying()
        await savedGameOutbox.stopRetrying()
        await realtime?.value
    }

    /// Closes the device as ``close()`` does and calls `completionHandler` once it is done.
    public func close(completionHandler: @escaping @Sendable () -> Void) {
        CompletionHandler.run(completionHandler) { await self.close() }
    }

    /// Sends a report through the outbox: stored durably first, then sent. When the network (or the server) fails,
    /// the report stays and is re-sent in the background; the error says so (`queued`).
    func sendReport<Response: Decodable & Sendable>(_ path: String, body: some Encodable, reportID: String, as: Response.Type) async throws -> Response {
        guard let session = state.withLock({ $0.session }) else {
            throw GKError(.notAuthenticated, "no player is signed in on this device; call GKLocalPlayer.authenticate first")
        }
        let json = try WireCoding.makeEncoder().encode(body)
        try await outbox.add(Outbox.Entry(id: reportID, playerID: session.player.playerID, path: path, body: json, createdAt: Date()))
        do {
            let response = try await Self.post(path, json: json, token: session.token, api: api, signer: reportSigner, as: Response.self)
            await outbox.remove(reportID)
            return response
        } catch var error as GKError where error.isTransient || error.code == .notAuthenticated {
            await outbox.release(reportID)
            if error.code == .notAuthenticated {
                await localPlayer.sessionEnded(token: session.token, error: error)
            } else {
                await retryOutbox()
            }
            error.queued = true
            error.message += "; the report is kept on this device and will be sent when possible"
            throw error
        } catch {
            await outbox.remove(reportID)
            throw error
        }
    }

    /// Posts a report: score reports through the signer (signed for boards that take signed reports only).
    private static func post<Response: Decodable & Sendable>(
        _ path: String, json: Data, token: String, api: APIClient, signer: ReportSigner, as: Response.Type
    ) async throws -> Response {
        guard path == "/v1/scores" else { return try await api.send(.POST, path, json: json, token: token, as: Response.self) }
        return try await signer.send(path, json: json, token: token, api: api, as: Response.self)
    }

    /// Re-sends the signed-in player's waiting reports and uploads their pending saves in the background.
    func retryOutbox() async {
        guard let session = state.withLock({ $0.session }) else { return }
        await savedGameOutbox.startRetrying(playerID: session.player.playerID) { [weak self] entry in
            guard let self else { return true }
            return await GKLocalPlayer.sendPending(entry, device: self)
        }
        let api = self.api, logger = self.logger, hub = eventHub, signer = reportSigner
        await outbox.startRetrying(playerID: session.player.playerID) { entry in
            guard Date().timeIntervalSince(entry.createdAt) <= Limits.maximumReportAge else {
                let days = Int(Limits.maximumReportAge / 86_400)
                let error = GKError(
                    .communicationsFailure, "the report could not be delivered within \(days) days, the longest this device keeps one; it was dropped")
                logger.error("a queued report expired", metadata: [LogKey.reportID: "\(entry.id)"])
                hub.publish(.reportRefused(reportID: entry.id, error: error))
                return true
            }
            do {
                _ = try await Self.post(entry.path, json: entry.body, token: session.token, api: api, signer: signer, as: APIClient.Empty.self)
                return true
            } catch let error as GKError where error.isTransient || error.code == .notAuthenticated {
                return false
            } catch {
                logger.error("a queued report was refused by the server", metadata: [LogKey.reportID: "\(entry.id)", LogKey.error: "\(error)"])
                hub.publish(.reportRefused(reportID: entry.id, error: error as? GKError ?? GKError(.unknown, "\(error)")))
                return true
            }
        }
    }

    /// The current session token, or `notAuthenticated`.
    func requireToken() throws -> String {
        guard let token = state.withLock({ $0.session?.token }) else {
            throw GKError(.notAuthenticated, "no player is signed in on this device; call GKLocalPlayer.authenticate first")
        }
        return token
    }

    /// Loads `path` for the signed-in player and keeps the answer on this device. When a later load of the same path
    /// by the same player fails for a transient reason (server unreachable or failing), the error carries the kept
    /// answer, made by `show`, in ``GKError/partialResult``, as a failed leaderboard load does.
    func loadKeepingLast<Response: Decodable & Sendable, Result: Sendable>(
        _ path: String, as: Response.Type, show: (Response) -> Result
    ) async throws -> Result {
        let key = state.withLock { $0.session?.player.playerID }.map { LastLoadKey(playerID: $0, path: path) }
        let response: Response
        do {
            response = try await authenticated(.get, path, as: Response.self)
        } catch var error as GKError {
            if error.isTransient, let key, let last = state.withLock({ $0.lastLoads[key] }) as? Response {
                error.partialResult = show(last)
            }
            throw error
        }
        if let key { state.withLock { $0.lastLoads[key] = response } }
        return show(response)
    }

    /// Sends an authenticated request; a `notAuthenticated` answer signs the device out and tells the game.
    func authenticated<Response: Decodable>(
        _ method: HTTPMethodName, _ path: String, body: (some Encodable)? = APIClient.NoBody?.none, as: Response.Type = Response.self
    ) async throws -> Response {
        let token = try requireToken()
        do {
            return try await api.send(method.nio, path, body: body, token: token, as: Response.self)
        } catch let error as GKError where error.code == .notAuthenticated {
            await localPlayer.sessionEnded(token: token, error: error)
            throw error
        }
    }

    /// ``authenticated(_:_:body:as:)`` with raw bytes as the body, and `headers` besides the device's.
    func authenticated<Response: Decodable>(
        _ method: HTTPMethodName, _ path: String, bytes: Data, headers: [(String, String)] = [], as: Response.Type = Response.self
    ) async throws -> Response {
        let token = try requireToken()
        do {
            return try await api.send(method.nio, path, bytes: bytes, token: token, headers: headers, as: Response.self)
        } catch let error as GKError where error.code == .notAuthenticated {
            await localPlayer.sessionEnded(token: token, error: error)
            throw error
        }
    }
}

/// HTTP methods the SDK uses.
enum HTTPMethodName {
    case get, post, put, patch, delete

    var nio: HTTPMethod {
        switch self {
        case .get: .GET
        case .post: .POST
        case .put: .PUT
        case .patch: .PATCH
        case .delete: .DELETE
        }
    }
}

/// What a device knows while it runs.
struct DeviceState: Sendable {
    var session: SavedSession?
    /// The last page each leaderboard query loaded, by player and query: what a failed load falls back to.
    var leaderboardPages: [LeaderboardPageKey: LeaderboardPage] = [:]
    /// The last answer to each load that keeps one (``GKGameCenter/loadKeepingLast(_:as:show:)``), by player and path.
    var lastLoads: [LastLoadKey: any Sendable] = [:]
    /// The players loaded by id, by the player who loaded them.
    var knownPlayers = KnownPlayers()
    var friends: [String]?
    var authenticating = false
    var realtime: Task<Void, Never>?
    /// Follows the player signed in on the device (``GKLocalPlayer``), from the first sign-in until ``GKGameCenter/close()``.
    var devicePlayerWatch: Task<Void, Never>?
}

/// Which player loaded which path.
struct LastLoadKey: Hashable, Sendable {
    var playerID: String
    var path: String
}

/// Which player asked which leaderboard query.
struct LeaderboardPageKey: Hashable, Sendable {
    var playerID: String
    var query: LeaderboardQuery
}
