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
            INSERT INTO nodes (node_id, http_address, udp_address, public_url, started_at, last_seen)
            VALUES (\(bind: node.nodeID), \(bind: node.httpAddress), \(bind: node.udpAddress), \(bind: node.publicURL), \(bind: node.startedAt),
                    \(bind: node.lastSeen))
            """
        ).run()
        return nil
    }

    /// Keeps a run of a node alive at `now`, with its addresses (an empty one leaves the stored one: a heartbeat that
    /// read the addresses before the node listened must not blank those a later one stored); false when the row is no
    /// longer this run's.
    public func touchNode(_ node: NodeRecord, now: Int64) async throws -> Bool {
        try await sql.raw(
            """
            UPDATE nodes SET last_seen = \(bind: now), http_address = COALESCE(NULLIF(\(bind: node.httpAddress), ''), http_address),
                udp_address = COALESCE(NULLIF(\(bind: node.udpAddress), ''), udp_address),
                public_url = COALESCE(NULLIF(\(bind: node.publicURL), ''), public_url), figures = \(bind: node.figures)
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
        try await sql.raw("SELECT node_id, http_address, udp_address, public_url, started_at, last_seen, figures FROM nodes ORDER BY node_id").all().map(
            Self.nodeRecord)
    }

    /// Posts `payloads` from `node` for the other nodes to read (``notices(after:limit:)``), in one statement
    /// (PostgreSQL: the table is made by its migrations only).
    public func postNotices(_ payloads: [String], from node: String, now: Int64) async throws {
        guard !payloads.isEmpty else { return }
        let rows = payloads.map { SQLGroupExpression([SQLBind(node), SQLBind($0), SQLBind(now)] as [any SQLExpression]) }
        try await sql.raw("INSERT INTO node_notices (node_id, payload, created_at) VALUES \(SQLList(rows))").run()
    }

    /// The newest notice's id, 0 when there is none.
    public func lastNoticeID() async throws -> Int64 {
        try await sql.raw("SELECT MAX(notice_id) AS last FROM node_notices").first()?.decode(column: "last", as: Int64?.self) ?? 0
    }

    /// The notices after `id`, oldest first, at most `limit`.
    public func notices(after id: Int64, limit: Int) async throws -> [NodeNotice] {
        try await sql.raw(
            """
            SELECT notice_id, node_id, payload FROM node_notices WHERE notice_id > \(bind: id) ORDER BY notice_id LIMIT \(bind: Int64(limit))
            """
        ).all().map(Self.nodeNotice)
    }

    /// The notices with these ids (missing ids are skipped), oldest first.
    public func notices(ids: [Int64]) async throws -> [NodeNotice] {
        guard !ids.isEmpty else { return [] }
        return try await sql.raw(
            "SELECT notice_id, node_id, payload FROM node_notices WHERE notice_id IN (\(binds: ids)) ORDER BY notice_id"
        ).all().map(Self.nodeNotice)
    }

    /// Forgets the notices posted before `time`; returns how many.
    @discardableResult
    public func forgetNotices(before time: Int64) async throws -> Int {
        try await sql.raw("DELETE FROM node_notices WHERE created_at < \(bind: time) RETURNING notice_id").all().count
    }

    /// The node that owns `game`'s matchmaking queue: `nodeID` takes it when nobody holds it, when it holds it
    /// already, or when its holder was not seen alive after `aliveAfter`. Returns the owner.
    public func claimQueue(_ game: String, nodeID: String, aliveAfter: Int64, now: Int64) async throws -> String {
        let claimed = try await sql.raw(
            """
            INSERT INTO queue_owners (game, node_id, claimed_at) VALUES (\(bind: game), \(bind: nodeID), \(bind: now))
            ON CONFLICT (game) DO UPDATE SET node_id = excluded.node_id, claimed_at = excluded.claimed_at
            WHERE queue_owners.node_id = excluded.node_id
               OR queue_owners.node_id NOT IN (SELECT node_id FROM nodes WHERE last_seen > \(bind: aliveAfter))
            RETURNING node_id
            """
        ).first()
        if claimed != nil { return nodeID }
        guard let owner = try await sql.raw("SELECT node_id FROM queue_owners WHERE game = \(bind: game)").first() else {
            throw StorageError.notFound("the owner of queue \(game)")
        }
        return try owner.string("node_id")
    }

    /// The key nodes show each other when one forwards a device's request: `candidate` when no node stored one yet.
    public func clusterKey(candidate: String) async throws -> String {
        try await sql.raw(
            "INSERT INTO cluster_settings (name, value) VALUES ('cluster_key', \(bind: candidate)) ON CONFLICT (name) DO NOTHING"
        ).run()
        guard let row = try await sql.raw("SELECT value FROM cluster_settings WHERE name = 'cluster_key'").first() else {
            throw StorageError.notFound("the cluster key")
        }
        return try row.string("value")
    }

    private static func nodeNotice(_ row: any SQLRow) throws -> NodeNotice {
        NodeNotice(noticeID: try row.int("notice_id"), nodeID: try row.string("node_id"), payload: try row.string("payload"))
    }

    private func node(id: String) async throws -> NodeRecord? {
        try await sql.raw("SELECT node_id, http_address, udp_address, public_url, started_at, last_seen, figures FROM nodes WHERE node_id = \(bind: id)")
            .first().map(Self.nodeRecord)
    }

    private static func nodeRecord(_ row: any SQLRow) throws -> NodeRecord {
        NodeRecord(
            nodeID: try row.string("node_id"), httpAddress: try row.string("http_address"), udpAddress: try row.string("udp_address"),
            publicURL: try row.string("public_url"), startedAt: try row.int("started_at"), lastSeen: try row.int("last_seen"),
            figures: try row.string("figures"))
    }
}

/// A notice a node posted for the others, as stored (nodes that poll instead of using LISTEN/NOTIFY).
public struct NodeNotice: Sendable, Equatable {
    /// Its place in the order notices were posted (with holes: rows can commit out of order).
    public var noticeID: Int64
    /// The node that posted it.
    public var nodeID: String
    /// What it says (the bus's wire form).
    public var payload: String

    /// A notice as stored.
    public init(noticeID: Int64, nodeID: String, payload: String) {
        self.noticeID = noticeID
        self.nodeID = nodeID
        self.payload = payload
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
    /// The base URL devices and other nodes reach it at (`--public-url`); empty until it listens.
    public var publicURL: String
    /// When this run started (milliseconds since 1970); tells runs of one id apart.
    public var startedAt: Int64
    /// When it last said it was alive.
    public var lastSeen: Int64
    /// What it served when it last said so, as JSON (the server's `NodeFigures`); `{}` until its first heartbeat.
    public var figures: String

    /// A node as stored.
    public init(
        nodeID: String, httpAddress: String, udpAddress: String, publicURL: String = "", startedAt: Int64, lastSeen: Int64, figures: String = "{}"
    ) {
        self.nodeID = nodeID
        self.httpAddress = httpAddress
        self.udpAddress = udpAddress
        self.publicURL = publicURL
        self.startedAt = startedAt
        self.lastSeen = lastSeen
        self.figures = figures
    }
}
