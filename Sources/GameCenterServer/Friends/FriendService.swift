import Foundation
import GameCenterProtocol
import GameCenterStorage

/// The friend rules: requests (with underage and duplicate checks), answers, removal. Each change is stored
/// together with the realtime events it causes, in one transaction.
struct FriendService: Sendable {
    let database: Database
    let bus: any EventBus
    /// Told when friendships change.
    let players: PlayerCache
    let clock: ServerClock
    let limiter: RateLimiter

    func friends(of session: AuthenticatedSession) async throws -> [String] {
        try await database.read { try await $0.friendIDs(of: session.playerID) }
    }

    /// Sends one request to each player, all or none. Each recipient counts against the sender's
    /// `friend-requests` limit and the pair's `friend-requests-to-one-player` limit, whether or not it is sent.
    ///
    /// `senderCharged`: the caller already took the sender's `friend-requests` tokens (a request by name takes them
    /// before looking the names up); only the pairs' limits are charged here.
    func send(
        _ request: SendFriendRequests, from session: AuthenticatedSession, device: DeviceIdentity, senderCharged: Bool = false
    ) async throws {
        let recipients = try PlayerIDRules.list(request.playerIDs)
        let message = try request.message.map(Self.message)
        let sender: [RateLimiter.Charge] = senderCharged ? [] : [.init(name: .friendRequests, subject: session.playerID, cost: recipients.count)]
        try limiter.take(sender + recipients.map { .init(name: .friendRequestsToOnePlayer, subject: "\(session.playerID) \($0)") })
        let now = clock.nowMillis()
        try await database.write { storage in
            guard let sender = try await storage.player(id: session.playerID) else { throw APIError.notAuthenticated }
            guard !sender.underage else { throw APIError.underageCannotBefriend }
            if recipients.contains(sender.playerID) { throw APIError.friendRequestToSelf }
            let found = try await storage.players(ids: recipients, environment: device.environment.rawValue)
            let unknown = recipients.filter { id in !found.contains { $0.playerID == id } }
            guard unknown.isEmpty else { throw APIError.unknownPlayers(unknown) }
            if let underage = found.first(where: \.underage) { throw APIError.recipientCannotBefriend(underage.playerID) }
            let alreadyFriends = try await storage.friends(of: sender.playerID, among: recipients)
            if let friend = alreadyFriends.first { throw APIError.alreadyFriends(friend) }
            for recipient in recipients {
                if let reverse = try await storage.pendingFriendRequest(from: recipient, to: sender.playerID) {
                    throw APIError.requestFromRecipientPending(recipient, requestID: reverse.requestID)
                }
                let record = FriendRequestRecord(
                    requestID: Credentials.newID(prefix: "fr_"), fromPlayer: sender.playerID, toPlayer: recipient,
                    message: message, status: .pending, createdAt: now
                )
                guard try await storage.insertFriendRequest(record) else { throw APIError.requestAlreadyPending(recipient) }
                let info = FriendRequestInfo(
                    requestID: record.requestID, from: sender.playerID, fromAlias: sender.alias,
                    message: message, createdAt: StoredTime.date(now))
                _ = try await EventLog.append(.friendRequestReceived, info, to: recipient, now: now, in: storage)
            }
        }
        for recipient in recipients { bus.publish(.playerEvents(playerID: recipient)) }
    }

    /// Requests waiting for the caller's answer, oldest first.
    func pending(for session: AuthenticatedSession) async throws -> [FriendRequestInfo] {
        try await database.read { storage in
            let requests = try await storage.pendingFriendRequests(to: session.playerID)
            let senders = try await storage.players(ids: Array(Set(requests.map(\.fromPlayer))), environment: nil)
            let aliases = Dictionary(uniqueKeysWithValues: senders.map { ($0.playerID, $0.alias) })
            return requests.map {
                FriendRequestInfo(
                    requestID: $0.requestID, from: $0.fromPlayer, fromAlias: aliases[$0.fromPlayer] ?? "",
                    message: $0.message, createdAt: StoredTime.date($0.createdAt))
            }
        }
    }

    /// Accepts a pending request addressed to the caller: both become friends and the sender is told.
    func accept(requestID: String, by session: AuthenticatedSession) async throws {
        let now = clock.nowMillis()
        let sender = try await database.write { storage in
            guard let me = try await storage.player(id: session.playerID) else { throw APIError.notAuthenticated }
            guard !me.underage else { throw APIError.underageCannotBefriend }
            let request = try await answer(requestID, as: .accepted, by: session.playerID, now: now, in: storage)
            try await storage.insertFriendship(request.fromPlayer, request.toPlayer, now: now)
            _ = try await EventLog.append(
                .friendRequestAccepted, FriendRequestAccepted(requestID: requestID, playerID: me.playerID),
                to: request.fromPlayer, now: now, in: storage)
            return request.fromPlayer
        }
        players.friendshipChanged(sender, session.playerID)
        bus.publish(.playerEvents(playerID: sender))
    }

    /// Declines a pending request addressed to the caller. The sender is not told.
    func decline(requestID: String, by session: AuthenticatedSession) async throws {
        let now = clock.nowMillis()
        try await database.write { storage in
            _ = try await answer(requestID, as: .declined, by: session.playerID, now: now, in: storage)
        }
    }

    private func answer(
        _ requestID: String, as status: FriendRequestRecord.Status, by playerID: String, now: Int64, in storage: StorageSession
    ) async throws -> FriendRequestRecord {
        guard requestID.count <= 64 else { throw APIError.noSuchFriendRequest }
        if let answered = try await storage.answerFriendRequest(id: requestID, recipient: playerID, status: status, now: now) {
            return answered
        }
        if let existing = try await storage.friendRequest(id: requestID), existing.toPlayer == playerID {
            throw APIError.friendRequestAlreadyAnswered(existing.status)
        }
        throw APIError.noSuchFriendRequest
    }

    /// Ends a friendship; the other player is told.
    func remove(friend friendID: String, by session: AuthenticatedSession) async throws {
        let now = clock.nowMillis()
        try await database.write { storage in
            guard try await storage.deleteFriendship(session.playerID, friendID) else { throw APIError.notAFriend(friendID) }
            _ = try await EventLog.append(.friendRemoved, FriendRemoved(playerID: session.playerID), to: friendID, now: now, in: storage)
        }
        players.friendshipChanged(session.playerID, friendID)
        bus.publish(.playerEvents(playerID: friendID))
    }

    static func message(_ raw: String) throws -> String {
        guard raw.count <= Limits.maximumFriendRequestMessageLength else {
            throw APIError.invalidParameter("friend request messages are at most \(Limits.maximumFriendRequestMessageLength) characters")
        }
        guard !raw.unicodeScalars.contains(where: { $0.properties.generalCategory == .control && $0 != "\n" }) else {
            throw APIError.invalidParameter("friend request messages cannot contain control characters other than new lines")
        }
        return raw
    }
}

extension APIError {
    static let underageCannotBefriend = APIError(.friendUnderage, "underage accounts cannot send or accept friend requests")
    static func recipientCannotBefriend(_ playerID: String) -> APIError {
        APIError(.friendRecipientUnderage, "player \(playerID) cannot receive friend requests")
    }
    static let friendRequestToSelf = APIError(.friendToSelf, "you cannot send a friend request to yourself")
    static func unknownPlayers(_ ids: [String]) -> APIError {
        APIError(.playerUnknown, "no player with id \(ids.prefix(5).joined(separator: ", ")) in this environment; nothing was sent")
    }
    static func alreadyFriends(_ id: String) -> APIError {
        APIError(.friendAlreadyFriends, "you and \(id) are already friends; nothing was sent")
    }
    static func requestAlreadyPending(_ id: String) -> APIError {
        APIError(.friendRequestPending, "a friend request to \(id) is already waiting for an answer; nothing was sent")
    }
    static func requestFromRecipientPending(_ id: String, requestID: String) -> APIError {
        APIError(.friendRequestFromRecipient, "\(id) already sent you a friend request (\(requestID)); accept it instead")
    }
    static let noSuchFriendRequest = APIError(.friendNoSuchRequest, "no friend request with this id is addressed to you")
    static func friendRequestAlreadyAnswered(_ status: FriendRequestRecord.Status) -> APIError {
        APIError(.friendRequestAnswered, "this friend request was already \(status.rawValue); it can be answered once")
    }
    static func notAFriend(_ id: String) -> APIError {
        APIError(.friendNotAFriend, "\(id) is not your friend")
    }
}
