import Foundation
import GameCenterProtocol
import GameCenterStorage
import Hummingbird

/// The invitations page: the player's pending match invitations to every game — who invites (alias), to which game,
/// the message, when it was sent and when it expires — and the answers. Accepting keeps the invitation for the game,
/// whose invitation handler gets it when it next starts (the seed's invitations received while the game is not
/// running); declining is a game's decline, told to the inviter. The rules are ``MatchmakingService``'s.
struct InvitationPages: Sendable {
    let matchmaking: MatchmakingService
    let registry: GameRegistry
    let clock: ServerClock
    let responder: PageResponder
    let renderer: PageRenderer

    /// Adds the routes.
    func add(to router: Router<AppRequestContext>) {
        responder.get("invitations", on: router, .signedIn) { page in try await invitationsPage(page) }
        responder.post("invitations/accept", on: router, .signedIn) { page in
            try await answer(page, done: "accepted") { id, session in
                try await matchmaking.acceptInApp(invitationID: id, playerID: session.session.playerID, environment: session.environment)
            }
        }
        responder.post("invitations/decline", on: router, .signedIn) { page in
            try await answer(page, done: "declined") { id, session in
                try await matchmaking.declineInApp(invitationID: id, playerID: session.session.playerID, environment: session.environment)
            }
        }
    }

    private func answer(
        _ page: PageRequest, done: String, _ action: @Sendable (String, PageSession) async throws -> Void
    ) async throws -> Response {
        let session = try page.requireSession()
        do {
            try await action(page.form["invitation"] ?? "", session)
        } catch let error as APIError {
            return try await invitationsPage(page, error: error)
        }
        return PageRequest.redirect(to: "/invitations?done=\(done)")
    }

    private func invitationsPage(_ page: PageRequest, error: APIError? = nil) async throws -> Response {
        let session = try page.requireSession()
        let now = StoredTime.date(clock.nowMillis())
        let received = try await matchmaking.receivedInvitations(playerID: session.session.playerID, environment: session.environment)
        let invitations = received.map { item -> InvitationsView.Invitation in
            let invitation = item.invitation
            let expires = StoredTime.date(invitation.expiresAt)
            return InvitationsView.Invitation(
                id: invitation.invitationID, inviterAlias: item.inviterAlias,
                gameName: registry.game(bundleID: invitation.bundleID)?.name ?? invitation.bundleID,
                note: invitation.message,
                players: invitation.minPlayers == invitation.maxPlayers
                    ? "\(invitation.maxPlayers) players" : "\(invitation.minPlayers) to \(invitation.maxPlayers) players",
                sent: PageDates.minute(StoredTime.date(invitation.createdAt)),
                expires: PageDates.minute(expires), expiresMachine: PageDates.machine(expires),
                expiresIn: PageDates.remaining(until: expires, from: now),
                accepted: invitation.acceptedInAppAt != nil)
        }
        let done: String? =
            switch page.query("done") {
            case "accepted": "Invitation accepted. Start the game on your device: it joins the match."
            case "declined": "Invitation declined. The inviter is told."
            default: nil
            }
        let content = InvitationsView(
            chrome: PageChrome("Invitations", section: .invitations, for: page), invitations: invitations,
            error: error?.message, done: error == nil ? done : nil)
        return renderer.render("invitations", content, status: error?.status ?? .ok)
    }
}

/// The invitations page's content.
struct InvitationsView {
    /// A pending invitation.
    struct Invitation {
        /// The invitation id (the answer forms' field).
        let id: String
        let inviterAlias: String
        let gameName: String
        /// The inviter's message. (Not `message`: see ``FriendsPage``'s note on names shared with enclosing objects.)
        let note: String?
        /// The match's size, in words.
        let players: String
        /// When it was sent and when it expires (`2026-11-24 17:40 UTC`), the expiry also for `<time datetime>` and
        /// as the time left.
        let sent: String, expires: String, expiresMachine: String, expiresIn: String
        /// Accepted on this page and waiting for the player's game to start.
        let accepted: Bool
    }

    let chrome: PageChrome
    let invitations: [Invitation]
    let error: String?
    let done: String?
}
