import Foundation
import SQLKit

/// Friends a player chose in the Game Center app to play a game with, kept for that game until one of its devices
/// takes them or they expire. One per player and game: a new choice replaces the previous one.
public struct PlayWithFriendsRecord: Sendable, Equatable {
    /// The player who chose.
    public var playerID: String
    /// The game they chose the friends for.
    public var bundleID: String
    /// The friends' player ids, in the order chosen.
    public var friends: [String]
    /// When the choice was made, in milliseconds since 1970.
    public var createdAt: Int64
    /// When the choice lapses unclaimed, in milliseconds since 1970.
    public var expiresAt: Int64
    /// The friends were chosen for a turn-based match, not a real-time one.
    public var turnBased: Bool

    /// A choice as stored.
    public init(playerID: String, bundleID: String, friends: [String], createdAt: Int64, expiresAt: Int64, turnBased: Bool = false) {
        self.turnBased = turnBased
        self.playerID = playerID
        self.bundleID = bundleID
        self.friends = friends
        self.createdAt = createdAt
        self.expiresAt = expiresAt
    }
}

extension StorageSession {
    /// Stores a player's choice of friends for a game, replacing the one they made before (taken or not).
    public func savePlayWithFriends(_ choice: PlayWithFriendsRecord) async throws {
        let friends = String(decoding: try JSONEncoder().encode(choice.friends), as: UTF8.self)
        try await sql.raw(
            """
            INSERT INTO play_with_friends (player_id, bundle_id, friends, created_at, expires_at, turn_based)
            VALUES (\(bind: choice.playerID), \(bind: choice.bundleID), \(bind: friends), \(bind: choice.createdAt), \(bind: choice.expiresAt),
                \(bind: choice.turnBased ? 1 : 0))
            ON CONFLICT (player_id, bundle_id) DO UPDATE
            SET friends = excluded.friends, created_at = excluded.created_at, expires_at = excluded.expires_at, turn_based = excluded.turn_based
            """
        ).run()
    }

    /// A player's choice for a game that has not expired at `now` and was not taken yet, if any.
    public func playWithFriends(playerID: String, bundleID: String, now: Int64) async throws -> PlayWithFriendsRecord? {
        try await sql.raw(
            """
            SELECT * FROM play_with_friends
            WHERE player_id = \(bind: playerID) AND bundle_id = \(bind: bundleID) AND expires_at > \(bind: now)
            """
        ).first().map(Self.playWithFriends(from:))
    }

    /// Removes a player's choice for a game and returns it when it had not expired at `now`: of two devices taking
    /// it at once, one gets it. An expired choice is removed and not returned.
    public func takePlayWithFriends(playerID: String, bundleID: String, now: Int64) async throws -> PlayWithFriendsRecord? {
        try await sql.raw(
            """
            DELETE FROM play_with_friends WHERE player_id = \(bind: playerID) AND bundle_id = \(bind: bundleID)
            RETURNING *
            """
        ).first().map(Self.playWithFriends(from:)).flatMap { $0.expiresAt > now ? $0 : nil }
    }

    static func playWithFriends(from row: any SQLRow) throws -> PlayWithFriendsRecord {
        PlayWithFriendsRecord(
            playerID: try row.string("player_id"), bundleID: try row.string("bundle_id"),
            friends: try JSONDecoder().decode([String].self, from: Data(try row.string("friends").utf8)),
            createdAt: try row.int("created_at"), expiresAt: try row.int("expires_at"), turnBased: try row.int("turn_based") != 0)
    }
}
