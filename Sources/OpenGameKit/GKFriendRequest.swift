import Foundation
import GameCenterProtocol

/// A request from another player to become friends, or the way to send one.
public final class GKFriendRequest: Sendable, CustomStringConvertible {
    private let info: FriendRequestInfo
    private let device: GKGameCenter

    init(info: FriendRequestInfo, device: GKGameCenter) {
        self.info = info
        self.device = device
    }

    /// Identifies the request.
    public var requestID: String { info.requestID }
    /// The sender's player id.
    public var from: String { info.from }
    /// The sender's alias when the request was sent.
    public var fromAlias: String { info.fromAlias }
    /// The sender's message, if any.
    public var message: String? { info.message }
    /// When the request was sent.
    public var date: Date { info.createdAt }

    public var description: String { "friend request \(requestID) from \(fromAlias) (\(from))" }

    /// Asks each player to become the local player's friend: all are sent, or none (any unknown id, an existing
    /// friendship or a pending request fails the whole call). Underage players cannot send requests.
    public static func send(to playerIDs: [String], message: String?, in gameCenter: GKGameCenter = .default) async throws {
        _ = try await gameCenter.authenticated(
            .post, "/v1/friend-requests", body: SendFriendRequests(playerIDs: playerIDs, message: message),
            as: APIClient.Empty.self)
    }

    /// Sends friend requests as ``send(to:message:in:)`` does and calls `completionHandler` once with nil or the error.
    public static func send(
        to playerIDs: [String], message: String?, in gameCenter: GKGameCenter = .default,
        completionHandler: @escaping @Sendable ((any Error)?) -> Void
    ) {
        CompletionHandler.run(completionHandler) { try await send(to: playerIDs, message: message, in: gameCenter) }
    }

    /// Asks each player named by account name or alias to become the local player's friend, as people know each other
    /// (the seed never shows player ids): all are sent, or none.
    ///
    /// A name is an account name (unique) or else an exact alias; an alias several players share is refused with
    /// `invalidParameter` saying to ask for the account name, and a name nobody has with `invalidPlayer`. Every name
    /// counts against the sender's friend-request limit (30 an hour by default) whether or not it is found, so names
    /// cannot be tried faster than requests are sent; past it the server answers `communicationsFailure` with
    /// `retryAfterSeconds`.
    public static func send(toAccounts names: [String], message: String?, in gameCenter: GKGameCenter = .default) async throws {
        let most = Limits.maximumPlayerIDsPerRequest
        guard (1...most).contains(names.count) else {
            throw GKError(.invalidParameter, "name 1 to \(most) players by account name or alias; got \(names.count)")
        }
        _ = try await gameCenter.authenticated(
            .post, "/v1/friend-requests/by-name", body: SendFriendRequestsByName(names: names, message: message), as: APIClient.Empty.self)
    }

    /// Sends friend requests by name as ``send(toAccounts:message:in:)`` does and calls `completionHandler` once with
    /// nil or the error.
    public static func send(
        toAccounts names: [String], message: String?, in gameCenter: GKGameCenter = .default,
        completionHandler: @escaping @Sendable ((any Error)?) -> Void
    ) {
        CompletionHandler.run(completionHandler) { try await send(toAccounts: names, message: message, in: gameCenter) }
    }

    /// Requests waiting for the local player's answer, oldest first.
    public static func loadPending(in gameCenter: GKGameCenter = .default) async throws -> [GKFriendRequest] {
        try await gameCenter.authenticated(.get, "/v1/friend-requests", as: FriendRequestList.self).requests.map {
            GKFriendRequest(info: $0, device: gameCenter)
        }
    }

    /// Loads the requests waiting for an answer and calls `completionHandler` once with them, or nil and the error.
    public static func loadPending(
        in gameCenter: GKGameCenter = .default, completionHandler: @escaping @Sendable ([GKFriendRequest]?, (any Error)?) -> Void
    ) {
        CompletionHandler.run(completionHandler) { try await loadPending(in: gameCenter) }
    }

    /// Accepts: the sender becomes a friend and is told. A request can be answered once.
    public func accept() async throws {
        _ = try await device.authenticated(.post, "/v1/friend-requests/\(pathComponent(requestID))/accept", as: APIClient.Empty.self)
        device.localPlayer.updateFriends { if !$0.contains(from) { $0.append(from) } }
    }

    /// Accepts and calls `completionHandler` once with nil or the error.
    public func accept(completionHandler: @escaping @Sendable ((any Error)?) -> Void) {
        CompletionHandler.run(completionHandler) { try await self.accept() }
    }

    /// Declines; the sender is not told. A request can be answered once.
    public func decline() async throws {
        _ = try await device.authenticated(.post, "/v1/friend-requests/\(pathComponent(requestID))/decline", as: APIClient.Empty.self)
    }

    /// Declines and calls `completionHandler` once with nil or the error.
    public func decline(completionHandler: @escaping @Sendable ((any Error)?) -> Void) {
        CompletionHandler.run(completionHandler) { try await self.decline() }
    }

    /// Ends a friendship; the former friend is told.
    public static func removeFriend(_ playerID: String, in gameCenter: GKGameCenter = .default) async throws {
        _ = try await gameCenter.authenticated(.delete, "/v1/friends/\(pathComponent(playerID))", as: APIClient.Empty.self)
        gameCenter.localPlayer.updateFriends { $0.removeAll { $0 == playerID } }
    }

    /// Ends a friendship and calls `completionHandler` once with nil or the error.
    public static func removeFriend(
        _ playerID: String, in gameCenter: GKGameCenter = .default, completionHandler: @escaping @Sendable ((any Error)?) -> Void
    ) {
        CompletionHandler.run(completionHandler) { try await removeFriend(playerID, in: gameCenter) }
    }
}

/// `text` percent-encoded for use as one path segment.
func pathComponent(_ text: String) -> String {
    text.addingPercentEncoding(withAllowedCharacters: .alphanumerics.union(CharacterSet(charactersIn: "-._~:"))) ?? text
}
