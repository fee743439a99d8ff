import SQLKit

extension StorageSession {
    /// The ids of a player's friends, oldest friendship first.
    public func friendIDs(of playerID: String) async throws -> [String] {
        try await sql.raw(
            """
            SELECT friend_id FROM friendships WHERE player_id = \(bind: playerID) ORDER BY created_at, friend_id
            """
        ).all().map { try $0.string("friend_id") }
    }

    /// Which of `candidates` are friends of `playerID`.
    public func friends(of playerID: String, among candidates: [String]) async throws -> Set<String> {
        guard !candidates.isEmpty else { return [] }
        return Set(
            try await sql.raw(
                """
                SELECT friend_id FROM friendships WHERE player_id = \(bind: playerID) AND friend_id IN (\(binds: candidates))
                """
            ).all().map { try $0.string("friend_id") })
    }

    /// Makes two players friends (both directions). Idempotent.
    public func insertFriendship(_ a: String, _ b: String, now: Int64) async throws {
        for (player, friend) in [(a, b), (b, a)] {
            try await sql.raw(
                """
                INSERT INTO friendships (player_id, friend_id, created_at) VALUES (\(bind: player), \(bind: friend), \(bind: now))
                ON CONFLICT DO NOTHING
                """
            ).run()
        }
    }

    /// Ends a friendship (both directions); returns false when they were not friends.
    public func deleteFriendship(_ a: String, _ b: String) async throws -> Bool {
        let removed = try await sql.raw(
            """
            DELETE FROM friendships WHERE (player_id = \(bind: a) AND friend_id = \(bind: b))
                                       OR (player_id = \(bind: b) AND friend_id = \(bind: a))
            RETURNING player_id
            """
        ).all()
        return !removed.isEmpty
    }

    /// Stores a pending request; returns false when one from the same sender to the same recipient is pending.
    public func insertFriendRequest(_ request: FriendRequestRecord) async throws -> Bool {
        try await sql.raw(
            """
            INSERT INTO friend_requests (request_id, from_player, to_player, message, status, created_at)
            VALUES (\(bind: request.requestID), \(bind: request.fromPlayer), \(bind: request.toPlayer), \(bind: request.message),
                    \(bind: request.status.rawValue), \(bind: request.createdAt))
            ON CONFLICT DO NOTHING
            RETURNING request_id
            """
        ).first() != nil
    }

    /// The pending request from one player to another, if any.
    public func pendingFriendRequest(from: String, to: String) async throws -> FriendRequestRecord? {
        try await sql.raw(
            """
            SELECT * FROM friend_requests WHERE from_player = \(bind: from) AND to_player = \(bind: to) AND status = 'pending'
            """
        ).first().map(Self.friendRequest(from:))
    }

    /// Pending requests addressed to a player, oldest first.
    public func pendingFriendRequests(to playerID: String) async throws -> [FriendRequestRecord] {
        try await sql.raw(
            """
            SELECT * FROM friend_requests WHERE to_player = \(bind: playerID) AND status = 'pending'
            ORDER BY created_at, request_id
            """
        ).all().map(Self.friendRequest(from:))
    }

    /// Pending requests a player sent, oldest first.
    public func pendingFriendRequests(from playerID: String) async throws -> [FriendRequestRecord] {
        try await sql.raw(
            """
            SELECT * FROM friend_requests WHERE from_player = \(bind: playerID) AND status = 'pending'
            ORDER BY created_at, request_id
            """
        ).all().map(Self.friendRequest(from:))
    }

    /// The request with this id.
    public func friendRequest(id: String) async throws -> FriendRequestRecord? {
        try await sql.raw("SELECT * FROM friend_requests WHERE request_id = \(bind: id)").first().map(Self.friendRequest(from:))
    }

    /// Answers a pending request addressed to `recipient`; returns the request, or nil when it was not pending.
    public func answerFriendRequest(
        id: String, recipient: String, status: FriendRequestRecord.Status, now: Int64
    ) async throws -> FriendRequestRecord? {
        try await sql.raw(
            """
            UPDATE friend_requests SET status = \(bind: status.rawValue), answered_at = \(bind: now)
            WHERE request_id = \(bind: id) AND to_player = \(bind: recipient) AND status = 'pending'
            RETURNING *
            """
        ).first().map(Self.friendRequest(from:))
    }

    static func friendRequest(from row: any SQLRow) throws -> FriendRequestRecord {
        FriendRequestRecord(
            requestID: try row.string("request_id"), fromPlayer: try row.string("from_player"),
            toPlayer: try row.string("to_player"), message: try row.optionalString("message"),
            status: FriendRequestRecord.Status(rawValue: try row.string("status")) ?? .pending,
            createdAt: try row.int("created_at")
        )
    }
}
