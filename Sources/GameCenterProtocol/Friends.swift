import Foundation

/// `GET /v1/friends`: the caller's friends' player ids.
public struct FriendList: Codable, Sendable {
    public var playerIDs: [String]

    public init(playerIDs: [String]) {
        self.playerIDs = playerIDs
    }
}

/// `POST /v1/friend-requests`: ask players to become friends.
public struct SendFriendRequests: Codable, Sendable {
    public var playerIDs: [String]
    public var message: String?

    public init(playerIDs: [String], message: String?) {
        self.playerIDs = playerIDs
        self.message = message
    }
}

/// Body of `POST /v1/friend-requests/by-name`: recipients by account name or exact alias, as people know them.
public struct SendFriendRequestsByName: Codable, Sendable {
    /// Account names or aliases, 1 to 100 of them, each 1 to 64 characters.
    public var names: [String]
    /// Shown to each recipient with the request (at most 280 characters).
    public var message: String?

    /// A request to `names`, with an optional message.
    public init(names: [String], message: String?) {
        self.names = names
        self.message = message
    }
}

/// A pending friend request addressed to the caller.
public struct FriendRequestInfo: Codable, Sendable, Equatable {
    public var requestID: String
    public var from: String
    public var fromAlias: String
    public var message: String?
    public var createdAt: Date

    public init(requestID: String, from: String, fromAlias: String, message: String?, createdAt: Date) {
        self.requestID = requestID
        self.from = from
        self.fromAlias = fromAlias
        self.message = message
        self.createdAt = createdAt
    }
}

/// `GET /v1/friend-requests`.
public struct FriendRequestList: Codable, Sendable {
    public var requests: [FriendRequestInfo]

    public init(requests: [FriendRequestInfo]) {
        self.requests = requests
    }
}

/// Pushed to a request's sender when the recipient accepts it.
public struct FriendRequestAccepted: Codable, Sendable, Equatable {
    public var requestID: String
    /// The player who accepted: now a friend.
    public var playerID: String

    public init(requestID: String, playerID: String) {
        self.requestID = requestID
        self.playerID = playerID
    }
}

/// Pushed to a player when a friend removes them.
public struct FriendRemoved: Codable, Sendable, Equatable {
    public var playerID: String

    public init(playerID: String) {
        self.playerID = playerID
    }
}
