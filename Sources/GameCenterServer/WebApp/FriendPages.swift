import Foundation
import GameCenterProtocol
import Hummingbird

/// The friends page: friends (alias, status and the games they played recently, as the seed's Game Center app shows
/// "the games that their friends are playing"), requests waiting both ways, a request sent by account name or
/// alias, and the answers (accept, decline, remove). The rules are ``FriendService``'s.
struct FriendPages: Sendable {
    let friends: FriendService
    let players: PlayerService
    let registry: GameRegistry
    let responder: PageResponder
    let renderer: PageRenderer

    /// Adds the routes.
    func add(to router: Router<AppRequestContext>) {
        responder.get("friends", on: router, .signedIn) { page in try await friendsPage(page) }
        responder.post("friends/request", on: router, .signedIn) { page in
            let session = try page.requireSession()
            let name = page.form["name"] ?? ""
            do {
                let recipient = try await friends.recipient(named: name, by: session.session, environment: session.environment)
                let message = (page.form["message"] ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
                do {
                    try await friends.send(
                        SendFriendRequests(playerIDs: [recipient.playerID], message: message.isEmpty ? nil : message),
                        from: session.session, device: session.device, senderCharged: true)
                } catch let error as APIError {
                    throw Self.told(error, alias: recipient.alias)
                }
            } catch let error as APIError {
                return try await friendsPage(page, error: error)
            }
            return PageRequest.redirect(to: "/friends?done=sent")
        }
        responder.post("friends/accept", on: router, .signedIn) { page in
            try await answer(page, done: "accepted") { try await friends.accept(requestID: $0, by: $1) }
        }
        responder.post("friends/decline", on: router, .signedIn) { page in
            try await answer(page, done: "declined") { try await friends.decline(requestID: $0, by: $1) }
        }
        responder.post("friends/remove", on: router, .signedIn) { page in
            let session = try page.requireSession()
            do {
                try await friends.remove(friend: page.form["player"] ?? "", by: session.session)
            } catch let error as APIError {
                return try await friendsPage(page, error: error.code == .friendNotAFriend ? .notYourFriend : error)
            }
            return PageRequest.redirect(to: "/friends?done=removed")
        }
    }

    private func answer(
        _ page: PageRequest, done: String,
        _ action: @Sendable (String, AuthenticatedSession) async throws -> Void
    ) async throws -> Response {
        let session = try page.requireSession()
        do {
            try await action(page.form["request"] ?? "", session.session)
        } catch let error as APIError {
            return try await friendsPage(page, error: error)
        }
        return PageRequest.redirect(to: "/friends?done=\(done)")
    }

    /// The friend error `error` told with the recipient's alias instead of their player id.
    private static func told(_ error: APIError, alias: String) -> APIError {
        switch error.code {
        case .friendAlreadyFriends: .alreadyFriends(alias: alias)
        case .friendRequestPending: .requestAlreadyPending(alias: alias)
        case .friendRequestFromRecipient: .requestFromRecipientPending(alias: alias)
        case .friendRecipientUnderage: .recipientCannotBefriend(alias: alias)
        default: error
        }
    }

    private func friendsPage(_ page: PageRequest, error: APIError? = nil) async throws -> Response {
        let session = try page.requireSession()
        let ids = try await friends.friends(of: session.session)
        let profiles = try await players.loadEveryPlayer(ids, caller: session.session, device: session.device)
        let friendList = profiles.map { profile -> FriendsPage.Friend in
            let played = (profile.recentGames ?? []).filter { registry.game(bundleID: $0.bundleID) != nil }.map {
                MePage.Played(bundleID: $0.bundleID, name: $0.name, lastPlayed: PageDates.day($0.lastPlayedAt))
            }
            return FriendsPage.Friend(
                id: profile.playerID, alias: profile.alias, status: profile.status, recentGames: played, playedRecently: !played.isEmpty)
        }
        .sorted { $0.alias.localizedCaseInsensitiveCompare($1.alias) == .orderedAscending }
        let incoming = try await friends.pending(for: session.session).map {
            FriendsPage.Request(id: $0.requestID, alias: $0.fromAlias, message: $0.message, sent: PageDates.day($0.createdAt))
        }
        let outgoing = try await friends.sent(by: session.session).map {
            FriendsPage.Request(
                id: $0.request.requestID, alias: $0.toAlias, message: $0.request.message,
                sent: PageDates.day(Date(timeIntervalSince1970: Double($0.request.createdAt) / 1000)))
        }
        let done: String? =
            switch page.query("done") {
            case "sent": "Your friend request was sent."
            case "accepted": "You are now friends."
            case "declined": "The request was declined."
            case "removed": "The friend was removed."
            default: nil
            }
        let content = FriendsPage(
            chrome: PageChrome("Friends", section: .friends, for: page), friends: friendList, incoming: incoming, outgoing: outgoing,
            typedName: error == nil ? page.query("to") ?? "" : page.form["name"] ?? "",
            typedMessage: error == nil ? page.query("message") ?? "" : page.form["message"] ?? "",
            error: error?.message, done: error == nil ? done : nil)
        return renderer.render("friends", content, status: error?.status ?? .ok)
    }
}

/// The friends page's content.
struct FriendsPage {
    /// A friend.
    struct Friend {
        /// The player id (the remove form's field; the page never shows it).
        let id: String
        let alias: String
        let status: String?
        /// Games of this server the friend played in the last 30 days, most recent first (none in the sandbox, which
        /// does not share them).
        let recentGames: [MePage.Played]
        /// Whether there are any (the template's condition around the list).
        let playedRecently: Bool
    }

    /// A friend request waiting for an answer.
    struct Request {
        /// The request id (the answer forms' field).
        let id: String
        /// The other player's alias.
        let alias: String
        let message: String?
        let sent: String
    }

    let chrome: PageChrome
    let friends: [Friend]
    /// Requests for the player.
    let incoming: [Request]
    /// Requests the player sent.
    let outgoing: [Request]
    /// What the request form held when it failed. (Not `message`: a request without one would show this instead,
    /// as templates look a name up in the enclosing objects when the nearest has it nil.)
    let typedName: String, typedMessage: String
    let error: String?
    let done: String?
}
