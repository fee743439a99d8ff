import Foundation
import GameCenterProtocol
import Synchronization

/// Hears when the player is done with an invitation screen.
public protocol GKInvitationViewControllerDelegate: AnyObject, Sendable {
    /// The player accepted, declined or closed the screen: dismiss it. An accepted invitation reaches
    /// ``GKMatchmaker/inviteHandler`` as `(invite, nil)`, as the seed says, whichever screen it was accepted on.
    func invitationViewControllerDidFinish(_ viewController: GKInvitationViewController)
}

/// The standard screen for an invitation the player received while the game runs
/// (``GKGameCenterEvent/invitationReceived(_:)``, ``GKMatchmaker/receivedInvites``), as a model: who invites, to what,
/// and Accept or Decline. A game draws it in a few lines from ``headline``, ``message`` and ``expiresAt`` with two
/// buttons calling ``accept()`` and ``decline()``, or calls ``present()`` to show the Game Center app's invitations
/// page in the player's browser, signed in. Accepted either way, the invitation reaches
/// ``GKMatchmaker/inviteHandler`` as `(invite, nil)` — the seed's "Game Kit calls your invitation handler ... after
/// the player accepts it" — and the game joins with ``GKMatchmaker/match(for:)``.
public final class GKInvitationViewController: Sendable {
    /// The invitation shown.
    public let invite: GKInvite
    private let delegate = Mutex(WeakInvitationDelegate())

    /// A screen for `invite`.
    public init(invite: GKInvite) {
        self.invite = invite
    }

    /// Hears when the screen is done.
    public weak var invitationDelegate: (any GKInvitationViewControllerDelegate)? {
        get { delegate.withLock { $0.value } }
        set { delegate.withLock { $0.value = newValue } }
    }

    /// Who invites, to what: "Ann invites you to a match of 2 to 4 players".
    public var headline: String {
        let players =
            invite.minPlayers == invite.maxPlayers ? "\(invite.maxPlayers) players" : "\(invite.minPlayers) to \(invite.maxPlayers) players"
        return "\(invite.inviterAlias) invites you to a match of \(players)"
    }

    /// The inviter's message, if any.
    public var message: String? { invite.message }

    /// When the invitation can no longer be accepted.
    public var expiresAt: Date { invite.expiresAt }

    /// The player tapped Accept: the invitation goes to ``GKMatchmaker/inviteHandler`` as `(invite, nil)`, accepted,
    /// and the delegate hears that the screen is done.
    public func accept() {
        invite.device.matchmaker.accept(invite)
        dismiss()
    }

    /// The player tapped Decline: the inviter hears it, and the delegate hears that the screen is done. Throws (and the
    /// screen stays) when the server refuses: the invitation expired or was answered on another device.
    public func decline() async throws {
        try await invite.decline()
        dismiss()
    }

    /// A link to the Game Center app's invitations page, signed in as the player, for the game's own web view. It works
    /// once, within a minute. Accepting there reaches ``GKMatchmaker/inviteHandler``; when the player presses Done or
    /// closes the page, the delegate hears that the screen is done.
    public func presentationURL() async throws -> URL {
        try await GameCenterAppLink.url(AppTicketRequest(screen: .invitations), in: invite.device, finished: { [weak self] in self?.dismiss() })
    }

    /// Opens the invitations page in the player's browser (``presentationURL()``).
    public func present() async throws {
        try GameCenterAppLink.open(try await presentationURL())
    }

    /// Closes the screen: the delegate hears `invitationViewControllerDidFinish`.
    public func dismiss() {
        invitationDelegate?.invitationViewControllerDidFinish(self)
    }
}

private struct WeakInvitationDelegate: Sendable {
    weak var value: (any GKInvitationViewControllerDelegate)?
}
