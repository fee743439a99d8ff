import SQLKit

/// A game's webhook endpoint as stored.
public struct WebhookEndpointRecord: Sendable, Equatable {
    public var endpointID: String
    public var bundleID: String
    public var environment: String
    public var url: String
    /// Signs deliveries (HMAC-SHA256).
    public var secret: String
    /// Event type names, in a stable order.
    public var events: [String]
    /// The endpoint hears of score reports with larger ids only.
    public var afterScoreID: Int64
    /// The endpoint hears of players' events with larger ids only.
    public var afterEventID: Int64
    /// The endpoint hears of games' events (`game_events`) with larger ids only.
    public var afterGameEventID: Int64
    /// The endpoint hears of occurrence starts and ends with larger ids only.
    public var afterOccurrenceID: Int64
    public var createdAt: Int64

    /// An endpoint as stored.
    public init(
        endpointID: String, bundleID: String, environment: String, url: String, secret: String, events: [String], afterScoreID: Int64,
        afterEventID: Int64, afterGameEventID: Int64, afterOccurrenceID: Int64, createdAt: Int64
    ) {
        self.afterEventID = afterEventID
        self.afterGameEventID = afterGameEventID
        self.afterOccurrenceID = afterOccurrenceID
        self.endpointID = endpointID
        self.bundleID = bundleID
        self.environment = environment
        self.url = url
        self.secret = secret
        self.events = events
        self.afterScoreID = afterScoreID
        self.createdAt = createdAt
    }
}

/// An event to deliver to one endpoint.
public struct NewWebhookDelivery: Sendable, Equatable {
    public var endpointID: String
    /// The event's id: the same for every endpoint it goes to, and for every attempt.
    public var eventID: String
    public var eventType: String
    /// Deliveries with the same key are posted in order, one at a time (those of other keys meanwhile).
    public var orderKey: String
    /// The JSON body posted.
    public var payload: String

    public init(endpointID: String, eventID: String, eventType: String, orderKey: String, payload: String) {
        self.endpointID = endpointID
        self.eventID = eventID
        self.eventType = eventType
        self.orderKey = orderKey
        self.payload = payload
    }
}

/// A delivery as stored.
public struct WebhookDeliveryRecord: Sendable, Equatable {
    public var deliveryID: Int64
    public var endpointID: String
    public var eventID: String
    public var eventType: String
    public var orderKey: String
    public var payload: String
    /// `pending`, `delivered` or `dead`.
    public var state: String
    public var attempts: Int64
    public var nextAttemptAt: Int64
    public var expiresAt: Int64
    public var lastError: String?
    public var createdAt: Int64
    public var deliveredAt: Int64?
}

/// A player's event with its place among every player's events, for webhooks.
public struct OrderedPlayerEvent: Sendable, Equatable {
    /// Orders all players' events (with holes on PostgreSQL, where transactions commit in any order).
    public var eventID: Int64
    public var playerID: String
    /// The player's environment.
    public var environment: String
    public var kind: String
    public var payload: String
    public var createdAt: Int64
}

extension StorageSession {
    /// Players' events stored after `eventID`, in order, at most `limit`.
    public func playerEvents(after eventID: Int64, limit: Int) async throws -> [OrderedPlayerEvent] {
        try await sql.raw(
            """
            SELECT e.\(unsafeRaw: eventIDColumn) AS event_id, e.player_id, p.environment, e.kind, e.payload, e.created_at
            FROM events e JOIN players p ON p.player_id = e.player_id
            WHERE e.\(unsafeRaw: eventIDColumn) > \(bind: eventID) ORDER BY e.\(unsafeRaw: eventIDColumn) LIMIT \(bind: Int64(limit))
            """
        ).all().map(Self.orderedEvent)
    }

    /// The players' events with these ids (missing ids are skipped), in order.
    public func playerEvents(ids: [Int64]) async throws -> [OrderedPlayerEvent] {
        guard !ids.isEmpty else { return [] }
        return try await sql.raw(
            """
            SELECT e.\(unsafeRaw: eventIDColumn) AS event_id, e.player_id, p.environment, e.kind, e.payload, e.created_at
            FROM events e JOIN players p ON p.player_id = e.player_id
            WHERE e.\(unsafeRaw: eventIDColumn) IN (\(binds: ids)) ORDER BY e.\(unsafeRaw: eventIDColumn)
            """
        ).all().map(Self.orderedEvent)
    }

    /// The newest event's place; 0 when there is none.
    public func lastPlayerEventID() async throws -> Int64 {
        try await sql.raw("SELECT COALESCE(MAX(\(unsafeRaw: eventIDColumn)), 0) AS last FROM events").first().map { try $0.int("last") } ?? 0
    }

    private var eventIDColumn: String { engine == .sqlite ? "rowid" : "event_id" }

    private static func orderedEvent(_ row: any SQLRow) throws -> OrderedPlayerEvent {
        OrderedPlayerEvent(
            eventID: try row.int("event_id"), playerID: try row.string("player_id"), environment: try row.string("environment"),
            kind: try row.string("kind"), payload: try row.string("payload"), createdAt: try row.int("created_at"))
    }

    /// Stores a new endpoint.
    public func insertWebhookEndpoint(_ endpoint: WebhookEndpointRecord) async throws {
        try await sql.raw(
            """
            INSERT INTO webhook_endpoints
                (endpoint_id, bundle_id, environment, url, secret, events, after_score_id, after_event_id, after_game_event_id,
                 after_occurrence_id, created_at)
            VALUES (\(bind: endpoint.endpointID), \(bind: endpoint.bundleID), \(bind: endpoint.environment), \(bind: endpoint.url),
                \(bind: endpoint.secret), \(bind: endpoint.events.joined(separator: " ")), \(bind: endpoint.afterScoreID), \(bind: endpoint.afterEventID),
                \(bind: endpoint.afterGameEventID), \(bind: endpoint.afterOccurrenceID), \(bind: endpoint.createdAt))
            """
        ).run()
    }

    /// Every endpoint, or a game's, oldest first.
    public func webhookEndpoints(bundleID: String? = nil) async throws -> [WebhookEndpointRecord] {
        let columns =
            "endpoint_id, bundle_id, environment, url, secret, events, after_score_id, after_event_id, after_game_event_id, after_occurrence_id, created_at"
        let rows =
            if let bundleID {
                try await sql.raw(
                    "SELECT \(unsafeRaw: columns) FROM webhook_endpoints WHERE bundle_id = \(bind: bundleID) ORDER BY created_at, endpoint_id"
                ).all()
            } else {
                try await sql.raw("SELECT \(unsafeRaw: columns) FROM webhook_endpoints ORDER BY created_at, endpoint_id").all()
            }
        return try rows.map { row in
            WebhookEndpointRecord(
                endpointID: try row.string("endpoint_id"), bundleID: try row.string("bundle_id"), environment: try row.string("environment"),
                url: try row.string("url"), secret: try row.string("secret"), events: try row.string("events").split(separator: " ").map(String.init),
                afterScoreID: try row.int("after_score_id"), afterEventID: try row.int("after_event_id"),
                afterGameEventID: try row.int("after_game_event_id"), afterOccurrenceID: try row.int("after_occurrence_id"),
                createdAt: try row.int("created_at"))
        }
    }

    /// Removes an endpoint and its deliveries; false when there was none.
    public func deleteWebhookEndpoint(id: String) async throws -> Bool {
        try await sql.raw("DELETE FROM webhook_deliveries WHERE endpoint_id = \(bind: id)").run()
        return try await sql.raw("DELETE FROM webhook_endpoints WHERE endpoint_id = \(bind: id) RETURNING endpoint_id").all().count == 1
    }

    /// Takes or renews the dispatcher's lease for `nodeID` until `until`, unless another node holds it past `now`;
    /// whether `nodeID` holds it.
    public func takeWebhookLease(nodeID: String, now: Int64, until: Int64) async throws -> Bool {
        try await sql.raw(
            """
            INSERT INTO webhook_lease (name, node_id, expires_at) VALUES ('dispatcher', \(bind: nodeID), \(bind: until))
            ON CONFLICT (name) DO UPDATE SET node_id = excluded.node_id, expires_at = excluded.expires_at
            WHERE webhook_lease.node_id = excluded.node_id OR webhook_lease.expires_at < \(bind: now)
            RETURNING node_id
            """
        ).all().count == 1
    }

    /// Gives the lease up, when `nodeID` holds it.
    public func releaseWebhookLease(nodeID: String) async throws {
        try await sql.raw("DELETE FROM webhook_lease WHERE name = 'dispatcher' AND node_id = \(bind: nodeID)").run()
    }

    /// How far the dispatcher turned `source` into deliveries; nil before it first did.
    public func webhookCursor(_ source: String) async throws -> Int64? {
        try await sql.raw("SELECT position FROM webhook_cursors WHERE source = \(bind: source)").first().map { try $0.int("position") }
    }

    /// Moves a source's cursor.
    public func setWebhookCursor(_ source: String, to position: Int64) async throws {
        try await sql.raw(
            """
            INSERT INTO webhook_cursors (source, position) VALUES (\(bind: source), \(bind: position))
            ON CONFLICT (source) DO UPDATE SET position = excluded.position
            """
        ).run()
    }

    /// Stores deliveries due at `now`, in their order, a hundred to a statement; an event already stored for an
    /// endpoint is skipped.
    public func insertWebhookDeliveries(_ deliveries: [NewWebhookDelivery], now: Int64, expiresAt: Int64) async throws {
        for start in stride(from: 0, to: deliveries.count, by: 100) {
            let rows = deliveries[start..<min(start + 100, deliveries.count)].map { delivery -> SQLQueryString in
                """
                (\(bind: delivery.endpointID), \(bind: delivery.eventID), \(bind: delivery.eventType), \(bind: delivery.orderKey), \(bind: delivery.payload),
                 'pending', 0, \(bind: now), \(bind: expiresAt), \(bind: now))
                """
            }
            try await sql.raw(
                """
                INSERT INTO webhook_deliveries
                    (endpoint_id, event_id, event_type, order_key, payload, state, attempts, next_attempt_at, expires_at, created_at)
                VALUES \(rows.joined(separator: ", "))
                ON CONFLICT (endpoint_id, event_id) DO NOTHING
                """
            ).run()
        }
    }

    /// Which of `endpointIDs` have deliveries pending (one probe of the endpoint's index each).
    public func webhookEndpointsWithPendingDeliveries(among endpointIDs: [String]) async throws -> Set<String> {
        var pending: Set<String> = []
        for endpointID in endpointIDs {
            let found = try await sql.raw(
                "SELECT delivery_id FROM webhook_deliveries WHERE endpoint_id = \(bind: endpointID) AND state = 'pending' LIMIT 1"
            ).first()
            if found != nil { pending.insert(endpointID) }
        }
        return pending
    }

    /// Forgets deliveries made before `deliveredBefore` and dead ones that died (expired) before `deadBefore`, at most
    /// `limit` rows; returns how many.
    @discardableResult
    public func forgetWebhookDeliveries(deliveredBefore: Int64, deadBefore: Int64, limit: Int) async throws -> Int {
        try await sql.raw(
            """
            DELETE FROM webhook_deliveries WHERE delivery_id IN (
                SELECT delivery_id FROM webhook_deliveries
                WHERE (state = 'delivered' AND delivered_at < \(bind: deliveredBefore)) OR (state = 'dead' AND expires_at < \(bind: deadBefore))
                LIMIT \(bind: Int64(limit)))
            RETURNING delivery_id
            """
        ).all().count
    }

    /// An endpoint's oldest pending deliveries, in order, at most `limit`.
    public func pendingWebhookDeliveries(endpointID: String, limit: Int) async throws -> [WebhookDeliveryRecord] {
        try await sql.raw(
            """
            SELECT \(unsafeRaw: Self.deliveryColumns) FROM webhook_deliveries
            WHERE endpoint_id = \(bind: endpointID) AND state = 'pending' ORDER BY delivery_id LIMIT \(bind: Int64(limit))
            """
        ).all().map(Self.deliveryRecord)
    }

    /// An endpoint's deliveries in `state` (any when nil), newest first, at most `limit`.
    public func webhookDeliveries(endpointID: String, state: String?, limit: Int) async throws -> [WebhookDeliveryRecord] {
        if let state {
            return try await sql.raw(
                """
                SELECT \(unsafeRaw: Self.deliveryColumns) FROM webhook_deliveries
                WHERE endpoint_id = \(bind: endpointID) AND state = \(bind: state) ORDER BY delivery_id DESC LIMIT \(bind: Int64(limit))
                """
            ).all().map(Self.deliveryRecord)
        }
        return try await sql.raw(
            """
            SELECT \(unsafeRaw: Self.deliveryColumns) FROM webhook_deliveries
            WHERE endpoint_id = \(bind: endpointID) ORDER BY delivery_id DESC LIMIT \(bind: Int64(limit))
            """
        ).all().map(Self.deliveryRecord)
    }

    /// Notes deliveries the endpoint took (each with one more attempt).
    public func markWebhooksDelivered(_ deliveryIDs: [Int64], now: Int64) async throws {
        guard !deliveryIDs.isEmpty else { return }
        try await sql.raw(
            """
            UPDATE webhook_deliveries SET state = 'delivered', attempts = attempts + 1, delivered_at = \(bind: now), last_error = NULL
            WHERE delivery_id IN (\(binds: deliveryIDs))
            """
        ).run()
    }

    /// Notes a failed attempt: the delivery is tried again at `nextAttemptAt`, or is dead.
    public func markWebhookFailed(_ deliveryID: Int64, attempts: Int64, nextAttemptAt: Int64, error: String, dead: Bool) async throws {
        try await sql.raw(
            """
            UPDATE webhook_deliveries SET state = \(bind: dead ? "dead" : "pending"), attempts = \(bind: attempts),
                next_attempt_at = \(bind: nextAttemptAt), last_error = \(bind: error)
            WHERE delivery_id = \(bind: deliveryID)
            """
        ).run()
    }

    /// Puts a dead delivery back in line (tried at once, for another day); false when there is no dead delivery of
    /// this id for this endpoint.
    public func replayWebhookDelivery(_ deliveryID: Int64, endpointID: String, now: Int64, expiresAt: Int64) async throws -> Bool {
        try await sql.raw(
            """
            UPDATE webhook_deliveries SET state = 'pending', attempts = 0, next_attempt_at = \(bind: now), expires_at = \(bind: expiresAt)
            WHERE delivery_id = \(bind: deliveryID) AND endpoint_id = \(bind: endpointID) AND state = 'dead' RETURNING delivery_id
            """
        ).all().count == 1
    }

    private static let deliveryColumns =
        "delivery_id, endpoint_id, event_id, event_type, order_key, payload, state, attempts, next_attempt_at, expires_at, last_error, created_at, delivered_at"

    private static func deliveryRecord(_ row: any SQLRow) throws -> WebhookDeliveryRecord {
        WebhookDeliveryRecord(
            deliveryID: try row.int("delivery_id"), endpointID: try row.string("endpoint_id"), eventID: try row.string("event_id"),
            eventType: try row.string("event_type"), orderKey: try row.string("order_key"), payload: try row.string("payload"),
            state: try row.string("state"),
            attempts: try row.int("attempts"), nextAttemptAt: try row.int("next_attempt_at"), expiresAt: try row.int("expires_at"),
            lastError: try row.optionalString("last_error"), createdAt: try row.int("created_at"), deliveredAt: try row.optionalInt("delivered_at"))
    }
}
