import Foundation
import GameCenterProtocol
import GameCenterStorage
import Logging
import ServiceLifecycle
import Synchronization

/// This node's row among the `gamecenter serve` processes on the database: registered at start (refused when a live
/// node has the same id), kept alive every ``heartbeat`` with the addresses it serves, removed when it stops. A
/// node killed outright stays listed, unhealthy, until it starts again or a day has passed. Run it as a service of
/// the node.
final class NodeRegistry: Service, Sendable {
    /// Between two signs of life.
    static let heartbeat: Duration = .seconds(2)
    /// A node not seen for this long is unhealthy (three heartbeats missed), and its id may be taken.
    static let healthyWithinMillis: Int64 = 6_000
    /// A node not seen for this long is forgotten.
    static let forgottenAfterMillis: Int64 = 24 * 3600 * 1000

    /// This node's id.
    let nodeID: String
    private let startedAt: Int64
    private let database: Database
    private let clock: ServerClock
    private let logger: Logger
    private let addresses: Mutex<(http: String, udp: String, publicURL: String)>
    /// What this node serves now, stored with each heartbeat (set once the services are built).
    private let figures = Mutex<(@Sendable () -> NodeFigures)?>(nil)

    /// Registers this run of node `nodeID`; throws ``NodeIDInUse`` when a live node already has the id.
    static func register(nodeID: String, database: Database, clock: ServerClock, logger: Logger) async throws -> NodeRegistry {
        let now = clock.wallMillis()
        let mine = NodeRecord(nodeID: nodeID, httpAddress: "", udpAddress: "", startedAt: now, lastSeen: now)
        let holder = try await database.write {
            try await $0.registerNode(mine, aliveAfter: now - healthyWithinMillis, forgetBefore: now - forgottenAfterMillis)
        }
        if let holder {
            throw NodeIDInUse(
                description:
                    "node id \(nodeID) is in use by a live node (serving \(holder.httpAddress.isEmpty ? "on an address not known yet" : holder.httpAddress), last seen \(now - holder.lastSeen) ms ago); give this node another --node-id, or start it \(healthyWithinMillis / 1000) s after the other stopped"
            )
        }
        return NodeRegistry(nodeID: nodeID, startedAt: now, database: database, clock: clock, logger: logger)
    }

    private init(nodeID: String, startedAt: Int64, database: Database, clock: ServerClock, logger: Logger) {
        self.nodeID = nodeID
        self.startedAt = startedAt
        self.database = database
        self.clock = clock
        self.logger = logger
        self.addresses = Mutex(("", "", ""))
    }

    /// Where this node serves, once it listens: HTTP `HOST:PORT`, the UDP address devices send to, and the base URL
    /// devices and other nodes reach it at (empty: not known).
    func listening(http: String, udp: String, publicURL: String) {
        addresses.withLock { $0 = (http, udp, publicURL) }
        Task { await touch() }
    }

    /// Reports what this node serves (``NodeFigures``) with each heartbeat from now on.
    func reportFigures(_ source: @escaping @Sendable () -> NodeFigures) {
        figures.withLock { $0 = source }
    }

    /// Says this node is alive every ``heartbeat``; removes its row when the node shuts down.
    func run() async throws {
        while !Task.isShuttingDownGracefully, !Task.isCancelled {
            await touch()
            try? await Task.sleep(for: Self.heartbeat)
        }
        try? await database.write { [nodeID, startedAt] in try await $0.removeNode(id: nodeID, startedAt: startedAt) }
    }

    /// Every node on the database, with its health as this node's clock sees it (the machine's, never the test clock).
    func list() async throws -> NodeList {
        let now = clock.wallMillis()
        let nodes = try await database.read { try await $0.nodes() }
        let date = { (millis: Int64) in Date(timeIntervalSince1970: Double(millis) / 1000) }
        return NodeList(
            nodes: nodes.map { node in
                NodeInfo(
                    nodeID: node.nodeID, httpAddress: node.httpAddress, udpAddress: node.udpAddress, publicURL: node.publicURL,
                    startedAt: date(node.startedAt),
                    lastSeen: date(node.lastSeen), healthy: now - node.lastSeen < Self.healthyWithinMillis,
                    answering: node.nodeID == nodeID && node.startedAt == startedAt, figures: Self.figures(of: node))
            })
    }

    /// What `node` said it served with its last heartbeat; nil before its first (or when it cannot be read).
    static func figures(of node: NodeRecord) -> NodeFigures? {
        try? JSONDecoder().decode(NodeFigures.self, from: Data(node.figures.utf8))
    }

    private func touch() async {
        let (http, udp, publicURL) = addresses.withLock { $0 }
        let now = clock.wallMillis()
        let served = figures.withLock { $0 }.flatMap { source in try? JSONEncoder().encode(source()) }
        let mine = NodeRecord(
            nodeID: nodeID, httpAddress: http, udpAddress: udp, publicURL: publicURL, startedAt: startedAt, lastSeen: now,
            figures: served.map { String(decoding: $0, as: UTF8.self) } ?? "{}")
        do {
            let kept = try await database.write { try await $0.touchNode(mine, now: now) }
            if !kept {
                // Forgotten meanwhile (the database was restored, or the node was silent for a day): register again.
                _ = try await database.write { try await $0.registerNode(mine, aliveAfter: Int64.max, forgetBefore: now - Self.forgottenAfterMillis) }
            }
        } catch {
            logger.warning("could not tell the database this node is alive", metadata: [LogKey.error: "\(error)"])
        }
    }

    /// A generated node id: the host's name and six random hexadecimal digits.
    static func generatedID() -> String {
        let host = ProcessInfo.processInfo.hostName.prefix(40).map { $0.isLetter || $0.isNumber || $0 == "-" ? $0 : "-" }
        return "\(String(host))-\(String(UInt32.random(in: 0...0xFF_FFFF), radix: 16))"
    }

    /// Whether `id` is a valid `--node-id`: 1–64 letters, digits, `.`, `_` or `-`.
    static func isValidID(_ id: String) -> Bool {
        (1...64).contains(id.count) && id.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "._-".contains($0)) }
    }
}

/// A node refused to start: a live node on the database has its id.
public struct NodeIDInUse: Error, CustomStringConvertible {
    /// Which node holds the id, and what to do.
    public let description: String
}
