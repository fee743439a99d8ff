import ArgumentParser
import Foundation
import GameCenterServer
import GameCenterStorage
import Logging

/// `gamecenter serve`: runs the server until SIGINT or SIGTERM.
struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Run the Game Center server.",
        discussion: "Prints 'listening on http://HOST:PORT' and 'udp HOST:PORT' as its first lines. SIGHUP reloads the manifests."
    )

    @Option(help: "Address to listen on.") var host = "127.0.0.1"
    @Option(help: "HTTP and WebSocket port; 0 picks a free one.") var port = 8080
    @Option(name: .customLong("udp-port"), help: "UDP port for match data and voice; 0 picks a free one.") var udpPort = 8081
    @OptionGroup var storage: DatabaseOption
    @Option(help: "A game manifest, or a folder of *.yaml manifests (default: ./games when present).") var games: String?
    @Option(name: .customLong("heartbeat-seconds"), help: "Seconds between realtime heartbeats.") var heartbeatSeconds = 15.0
    @Option(name: .customLong("session-lifetime"), help: "Seconds a session lasts after sign-in (default: 30 days).")
    var sessionLifetime = 30.0 * 24 * 3600
    @Option(
        name: .customLong("invitation-lifetime"),
        help:
            "Seconds an unanswered match invitation (and friends chosen in the web app to play with) waits, for games whose manifest sets no matchmaking.invitationSeconds; 10…86400 (default: 3600)."
    )
    var invitationLifetime = 3600
    @Option(name: .customLong("admin-key"), help: "Key for the /admin/v1 routes (or GAMECENTER_ADMIN_KEY); admin routes are off without one.")
    var adminKey: String?
    @Flag(name: .customLong("test-clock"), help: "Let POST /admin/v1/clock move the server's clock forward. For tests only.")
    var testClock = false
    @Flag(name: .customLong("secure-cookies"), help: "Mark the web app's cookies Secure on every response (the server is reached over HTTPS only).")
    var secureCookies = false
    @Flag(
        name: .customLong("read-only"),
        help: "Wind-down mode: games and players read, sign in and download their data; nothing new is written (admin routes still work).")
    var readOnly = false
    @Option(
        name: .customLong("public-url"),
        help: "Base URL devices and the other nodes reach this node at (default: http://HOST:PORT when --host is not 0.0.0.0 or ::).")
    var publicURL: String?
    @Option(name: .customLong("udp-public"), help: "HOST:PORT devices send match datagrams to, when not the HTTP host and --udp-port (NAT, a UDP proxy).")
    var udpPublic: String?
    @Option(
        name: .customLong("node-id"),
        help: "This node's id among the processes on the database: 1-64 letters, digits, '.', '_' or '-' (default: the host's name and six random hex digits).")
    var nodeID: String?
    @Option(
        name: .customLong("node-poll-seconds"),
        help:
            "PostgreSQL: read the other nodes' notices from a table every SECONDS (0.01…10) instead of LISTEN/NOTIFY, for databases without NOTIFY such as CockroachDB; events then reach a device on another node within about SECONDS."
    )
    var nodePollSeconds: Double?
    @Option(name: .customLong("log-level"), help: "trace, debug, info, notice, warning, error or critical.") var logLevel = "info"
    @Option(name: .customLong("header-timeout"), help: "Seconds a request's line and headers may take to arrive (default: 10).")
    var headerTimeout = 10.0
    @Option(name: .customLong("body-timeout"), help: "Seconds a request's body may take to arrive after its headers (default: 30).")
    var bodyTimeout = 30.0
    @Option(name: .customLong("idle-timeout"), help: "Seconds a connection may stay open with no request (default: 60).")
    var idleTimeout = 60.0
    @Option(
        name: .customLong("write-timeout"),
        help: "Seconds the server's answers may wait while a client reads none of them before its connection is closed (default: 20).")
    var writeTimeout = 20.0
    @Option(name: .customLong("max-connections"), help: "Most open connections (default: the file descriptor limit less an eighth, at least 64, for the rest).")
    var maxConnections: Int?
    @Option(
        name: .customLong("max-connections-per-address"),
        help: "Most open connections from one client address (default: a quarter of --max-connections, at most 256).")
    var maxConnectionsPerAddress: Int?
    @Option(
        name: .customLong("rate-limit"),
        help: ArgumentHelp(
            "NAME=COUNT/SECONDS: at most COUNT actions per SECONDS (0/1 turns it off); repeatable. Names: \(RateLimits.Name.allCases.map(\.rawValue).joined(separator: ", ")).",
            valueName: "name=count/seconds"))
    var rateLimit: [String] = []
    @Option(
        name: .customLong("metrics-port"),
        help: "Also serve GET /metrics on this port of --host, without the admin key (for a Prometheus scraper on a private network).")
    var metricsPort: Int?
    @Option(
        name: .customLong("console-sample-seconds"),
        help: "Seconds between two samples of the studio console's charts (1…3600, default: 60; six hours are kept at one a minute).")
    var consoleSampleSeconds = 60
    @Option(name: .customLong("realtime-channels-per-session"), help: "Realtime channels one session may have open at once; 0 for no cap (default: 4).")
    var realtimeChannelsPerSession = 4

    func validate() throws {
        guard (0...65535).contains(port), (0...65535).contains(udpPort) else { throw ValidationError("ports are 0…65535") }
        guard heartbeatSeconds >= 0.05, heartbeatSeconds <= 3600 else { throw ValidationError("--heartbeat-seconds must be 0.05…3600") }
        guard sessionLifetime >= 1 else { throw ValidationError("--session-lifetime must be at least 1 second") }
        let lifetimes = MatchmakingSettings.invitationSecondsRange
        guard lifetimes.contains(invitationLifetime) else {
            throw ValidationError("--invitation-lifetime must be a whole number of seconds from \(lifetimes.lowerBound) to \(lifetimes.upperBound)")
        }
        if let key = adminKey ?? ProcessInfo.processInfo.environment["GAMECENTER_ADMIN_KEY"], key.count < 16 {
            throw ValidationError("the admin key must be at least 16 characters")
        }
        if testClock && (adminKey ?? ProcessInfo.processInfo.environment["GAMECENTER_ADMIN_KEY"]) == nil {
            throw ValidationError("--test-clock needs an admin key (--admin-key) for POST /admin/v1/clock")
        }
        if let udpPublic, Self.hostAndPort(udpPublic) == nil {
            throw ValidationError("--udp-public must be HOST:PORT with a port 1…65535, e.g. 203.0.113.7:8081")
        }
        if let publicURL, !Self.isBaseURL(publicURL) {
            throw ValidationError(
                "--public-url must be an http:// or https:// URL with a host and no query, e.g. https://gc1.example.com; got '\(publicURL.prefix(80))'")
        }
        if let nodeID, !GameCenterApp.Configuration.isValidNodeID(nodeID) {
            throw ValidationError("--node-id must be 1-64 letters, digits, '.', '_' or '-'; got '\(nodeID.prefix(80))'")
        }
        if let nodePollSeconds, !(0.01...10).contains(nodePollSeconds) {
            throw ValidationError("--node-poll-seconds must be 0.01…10 seconds; got \(nodePollSeconds)")
        }
        guard Logger.Level(rawValue: logLevel) != nil else { throw ValidationError("unknown --log-level \(logLevel)") }
        for (name, seconds) in [("header", headerTimeout), ("body", bodyTimeout), ("idle", idleTimeout), ("write", writeTimeout)]
        where !(0.1...3600).contains(seconds) {
            throw ValidationError("--\(name)-timeout must be 0.1…3600 seconds")
        }
        if let maxConnections, maxConnections < 1 { throw ValidationError("--max-connections must be at least 1") }
        if let maxConnectionsPerAddress, maxConnectionsPerAddress < 1 { throw ValidationError("--max-connections-per-address must be at least 1") }
        _ = try rateLimits()
        if let metricsPort, !(0...65535).contains(metricsPort) { throw ValidationError("--metrics-port is 0…65535") }
        guard (1...3600).contains(consoleSampleSeconds) else { throw ValidationError("--console-sample-seconds is 1…3600") }
        guard realtimeChannelsPerSession >= 0 else { throw ValidationError("--realtime-channels-per-session must be 0 or more") }
    }

    /// The rate limits: the defaults with every `--rate-limit` applied.
    func rateLimits() throws -> RateLimits {
        var limits = RateLimits()
        limits.realtimeChannelsOpenPerSession = realtimeChannelsPerSession
        for setting in rateLimit {
            do { try limits.set(setting) } catch { throw ValidationError("--rate-limit \(error.description)") }
        }
        return limits
    }

    /// Splits `HOST:PORT` (`[v6]:PORT` for IPv6).
    static func hostAndPort(_ text: String) -> GameCenterApp.Configuration.PublicAddress? {
        guard let colon = text.lastIndex(of: ":"), let port = Int(text[text.index(after: colon)...]), (1...65535).contains(port) else { return nil }
        var host = String(text[..<colon])
        if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        guard !host.isEmpty, host.utf8.count <= 255 else { return nil }
        return .init(host: host, port: port)
    }

    func run() async throws {
        var logger = Logger(label: "gamecenter") { StreamLogHandler.standardError(label: $0) }
        logger.logLevel = Logger.Level(rawValue: logLevel) ?? .info

        let descriptors = FileDescriptorLimit.raiseToHard()
        var configuration = GameCenterApp.Configuration()
        if let maxConnections { configuration.connections = .init(maxConnections: maxConnections) }
        configuration.connections.headerTimeout = .milliseconds(Int64(headerTimeout * 1000))
        configuration.connections.bodyTimeout = .milliseconds(Int64(bodyTimeout * 1000))
        configuration.connections.idleTimeout = .milliseconds(Int64(idleTimeout * 1000))
        configuration.connections.writeTimeout = .milliseconds(Int64(writeTimeout * 1000))
        if let maxConnectionsPerAddress { configuration.connections.maxConnectionsPerAddress = maxConnectionsPerAddress }
        configuration.host = host
        configuration.port = port
        configuration.udpPort = udpPort
        configuration.databaseURL = storage.database
        configuration.gamesPath = games ?? (FileManager.default.fileExists(atPath: "games") ? "games" : nil)
        configuration.heartbeatInterval = .milliseconds(Int64(heartbeatSeconds * 1000))
        configuration.accounts.sessionLifetime = sessionLifetime
        configuration.invitationLifetime = invitationLifetime
        configuration.adminKey = adminKey ?? ProcessInfo.processInfo.environment["GAMECENTER_ADMIN_KEY"]
        configuration.testClock = testClock
        configuration.secureCookies = secureCookies
        configuration.readOnly = readOnly
        configuration.rateLimits = try rateLimits()
        configuration.metricsPort = metricsPort
        configuration.metricsSampleInterval = .seconds(consoleSampleSeconds)
        configuration.udpPublicAddress = udpPublic.flatMap(Self.hostAndPort)
        configuration.publicURL = publicURL
        configuration.nodeID = nodeID
        configuration.nodePollInterval = nodePollSeconds.map { .milliseconds(Int64($0 * 1000)) }
        logger.info(
            "file descriptor limit \(descriptors.after) (was \(descriptors.before)); at most \(configuration.connections.maxConnections) connections, \(configuration.connections.maxConnectionsPerAddress) per address"
        )
        if configuration.connections.maxConnections > descriptors.after - 64 {
            logger.warning("--max-connections leaves fewer than 64 file descriptors for the database, the UDP socket and files")
        }
        if testClock { logger.warning("--test-clock: the server's clock can be moved through POST /admin/v1/clock") }

        let shownHost = host.contains(":") ? "[\(host)]" : host
        do {
            try await GameCenterApp.run(configuration: configuration, logger: logger) { httpPort, udpPort in
                // Unbuffered, so a parent process reading the pipe sees the lines at once.
                FileHandle.standardOutput.write(Data("listening on http://\(shownHost):\(httpPort)\nudp \(shownHost):\(udpPort)\n".utf8))
            }
        } catch let error as ManifestError {
            FileHandle.standardError.write(Data("gamecenter: refusing to start: \(error)\n".utf8))
            throw ExitCode(78)
        } catch let error as NodeIDInUse {
            FileHandle.standardError.write(Data("gamecenter: refusing to start: \(error)\n".utf8))
            throw ExitCode(75)
        } catch let error as StorageError where error.isInUse {
            FileHandle.standardError.write(Data("gamecenter: refusing to start: \(error)\n".utf8))
            throw ExitCode(75)
        }
    }

    /// Whether `text` is a base URL devices can use: `http` or `https`, a host, no query or fragment.
    static func isBaseURL(_ text: String) -> Bool {
        guard text.count <= 200, let url = URLComponents(string: text), let scheme = url.scheme?.lowercased(), ["http", "https"].contains(scheme),
            let host = url.host, !host.isEmpty
        else { return false }
        return url.query == nil && url.fragment == nil
    }
}
