import Foundation

/// `GET /admin/v1/nodes`: the `gamecenter serve` processes on the database.
public struct NodeList: Codable, Sendable, Equatable {
    /// By id.
    public var nodes: [NodeInfo]

    /// A list of nodes.
    public init(nodes: [NodeInfo]) {
        self.nodes = nodes
    }
}

/// One node and its health.
public struct NodeInfo: Codable, Sendable, Equatable {
    /// The node's id (`--node-id`, or generated at start).
    public var nodeID: String
    /// Where it serves HTTP, `HOST:PORT`.
    public var httpAddress: String
    /// Where devices send it match datagrams, `HOST:PORT`.
    public var udpAddress: String
    /// The base URL devices and other nodes reach it at (`--public-url`, else `http://` and its HTTP address when
    /// that is not every address); empty when not known.
    public var publicURL: String
    /// When it started.
    public var startedAt: Date
    /// When it last said it was alive (every 2 s while it runs).
    public var lastSeen: Date
    /// It said so within the last 6 s.
    public var healthy: Bool
    /// It is the node that answered this request.
    public var answering: Bool
    /// What it served when it last said it was alive; nil before its first heartbeat.
    public var figures: NodeFigures?

    /// A node as listed.
    public init(
        nodeID: String, httpAddress: String, udpAddress: String, publicURL: String, startedAt: Date, lastSeen: Date, healthy: Bool, answering: Bool,
        figures: NodeFigures? = nil
    ) {
        self.nodeID = nodeID
        self.httpAddress = httpAddress
        self.udpAddress = udpAddress
        self.publicURL = publicURL
        self.startedAt = startedAt
        self.lastSeen = lastSeen
        self.healthy = healthy
        self.answering = answering
        self.figures = figures
    }
}

/// What one node serves, as it said with its last heartbeat (every 2 s).
public struct NodeFigures: Codable, Sendable, Equatable {
    /// Devices' realtime channels open on it.
    public var realtimeConnections: Int
    /// Match requests waiting in the queues it holds (a game's queue is held by one node).
    public var waitingRequests: Int
    /// Matches it relays.
    public var relayedMatches: Int

    /// A node's figures.
    public init(realtimeConnections: Int, waitingRequests: Int, relayedMatches: Int) {
        self.realtimeConnections = realtimeConnections
        self.waitingRequests = waitingRequests
        self.relayedMatches = relayedMatches
    }
}
