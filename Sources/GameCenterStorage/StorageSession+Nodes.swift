import SQLKit

extension StorageSession {
    /// Registers a run of a node: stores `node` unless a node with its id was seen alive after `aliveAfter` in another
    /// run, which is returned instead (two processes must not share an id). Forgets nodes not seen since
    /// `forgetBefore`.
    public func registerNode(_ node: NodeRecord, aliveAfter: Int64, forgetBefore: Int64) async throws -> NodeRecord? {
        try await sql.raw("DELETE FROM nodes WHERE last_seen < \(bind: forgetBefore)").run()
        if let holder = try await self.node(id: node.nodeID), holder.startedAt != node.startedAt, holder.lastSeen > aliveAfter {
            return holder
        }
        try await sql.raw("DELETE FROM nodes WHERE node_id = \(bind: node.nodeID)").run()
        try await sql.raw(
            """
            INSERT INTO nodes (node_id, http_address, udp_address, started_at, last_seen)
            VALUES (\(bind: node.nodeID), \(bind: node.httpAddress), \(bind: node.udpAddress), \(bind: node.startedAt), \(bind: node.lastSeen))
            """
        ).run()
        return nil
    }

    /// Keeps a run of a node alive at `now`, with its addresses; false when the row is no longer this run's.
    public func touchNode(_ node: NodeRecord, now: Int64) async throws -> Bool {
        try await sql.raw(
            """
            UPDATE nodes SET last_seen = \(bind: now), http_address = \(bind: node.httpAddress), udp_address = \(bind: node.udpAddress)
            WHERE node_id = \(bind: node.nodeID) AND started_at = \(bind: node.startedAt) RETURNING node_id
            """
        ).all().count == 1
    }

    /// Removes a run of a node (it stopped).
    public func removeNode(id: String, startedAt: Int64) async throws {
        try await sql.raw("DELETE FROM nodes WHERE node_id = \(bind: id) AND started_at = \(bind: startedAt)").run()
    }

    /// Every node known, by id.
    public func nodes() async throws -> [NodeRecord] {
        try await sql.raw("SELECT node_id, http_address, udp_address, started_at, last_seen FROM nodes ORDER BY node_id").all().map(Self.nodeRecord)
    }

    private func node(id: String) async throws -> NodeRecord? {
        try await sql.raw("SELECT node_id, http_address, udp_address, started_at, last_seen FROM nodes WHERE node_id = \(bind: id)")
            .first().map(Self.nodeRecord)
    }

    private static func nodeRecord(_ row: any SQLRow) throws -> NodeRecord {
        NodeRecord(
            nodeID: try row.string("node_id"), httpAddress: try row.string("http_address"), udpAddress: try row.string("udp_address"),
            startedAt: try row.int("started_at"), lastSeen: try row.int("last_seen"))
    }
}

/// A `gamecenter serve` process on the database, as stored.
public struct NodeRecord: Sendable, Equatable {
    /// The node's id (`--node-id`).
    public var nodeID: String
    /// Where it serves HTTP, `HOST:PORT`.
    public var httpAddress: String
    /// Where devices send it match datagrams, `HOST:PORT`.
    public var udpAddress: String
    /// When this run started (milliseconds since 1970); tells runs of one id apart.
    public var startedAt: Int64
    /// When it last said it was alive.
    public var lastSeen: Int64

    /// A node as stored.
    public init(nodeID: String, httpAddress: String, udpAddress: String, startedAt: Int64, lastSeen: Int64) {
        self.nodeID = nodeID
        self.httpAddress = httpAddress
        self.udpAddress = udpAddress
        self.startedAt = startedAt
        self.lastSeen = lastSeen
    }
}
