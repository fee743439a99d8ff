import SQLKit

extension StorageSession {
    /// Stores a link to a page of the Game Center app, and forgets links that expired before `now`.
    public func insertAppTicket(_ ticket: AppTicketRecord, now: Int64) async throws {
        try await sql.raw("DELETE FROM app_tickets WHERE expires_at <= \(bind: now)").run()
        try await sql.raw(
            """
            INSERT INTO app_tickets (ticket_hash, session_id, player_id, target, expires_at)
            VALUES (\(bind: ticket.ticketHash), \(bind: ticket.sessionID), \(bind: ticket.playerID), \(bind: ticket.target), \(bind: ticket.expiresAt))
            """
        ).run()
    }

    /// How many of a player's links work at `now`.
    public func liveAppTicketCount(playerID: String, now: Int64) async throws -> Int {
        try await sql.raw("SELECT COUNT(*) AS n FROM app_tickets WHERE player_id = \(bind: playerID) AND expires_at > \(bind: now)")
            .first().map { Int(try $0.int("n")) } ?? 0
    }

    /// Takes the link with this hash: it is gone afterwards, whether or not it was still valid (it works once).
    public func takeAppTicket(ticketHash: String) async throws -> AppTicketRecord? {
        try await sql.raw(
            """
            DELETE FROM app_tickets WHERE ticket_hash = \(bind: ticketHash)
            RETURNING ticket_hash, session_id, player_id, target, expires_at
            """
        ).first().map { row in
            AppTicketRecord(
                ticketHash: try row.string("ticket_hash"), sessionID: try row.string("session_id"),
                playerID: try row.string("player_id"), target: try row.string("target"), expiresAt: try row.int("expires_at"))
        }
    }
}

/// A single-use link to a page of the Game Center app.
public struct AppTicketRecord: Sendable, Equatable {
    /// The hash of the link's secret (the secret itself is never stored).
    public var ticketHash: String
    /// The game session that asked for it.
    public var sessionID: String
    public var playerID: String
    /// The page's path and query.
    public var target: String
    public var expiresAt: Int64

    public init(ticketHash: String, sessionID: String, playerID: String, target: String, expiresAt: Int64) {
        self.ticketHash = ticketHash
        self.sessionID = sessionID
        self.playerID = playerID
        self.target = target
        self.expiresAt = expiresAt
    }
}
