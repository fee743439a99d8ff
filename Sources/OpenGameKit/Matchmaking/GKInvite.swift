import Foundation
import GameCenterProtocol

/// An invitation to join another player's match: received (``GKGameCenterEvent/invitationReceived(_:)``,
/// ``GKMatchmaker/receivedInvites``) for the player to answer — ``GKMatchmaker/accept(_:)`` or ``decline()`` — and,
/// once accepted, handed to ``GKMatchmaker/inviteHandler``. Join with ``GKMatchmaker/match(for:)`` (or
/// ``GKMatchmaker/findPlayers(for:)`` when hosted).
public final class GKInvite: Sendable {
    /// The inviting player's id.
    public var inviter: String { info.inviter }
    /// The inviting player's alias when the invitation was sent.
    public var inviterAlias: String { info.inviterAlias }
    /// True when the match is hosted: joining yields player ids, not a ``GKMatch``.
    public var isHosted: Bool { info.hosted }
    /// The invitation's id.
    public var invitationID: String { info.invitationID }
    /// The inviter's message, if any.
    public var message: String? { info.message }
    /// When the invitation can no longer be accepted.
    public var expiresAt: Date { info.expiresAt }
    /// The match's size limits.
    public var minPlayers: Int { info.minPlayers }
    /// The match's size limits.
    public var maxPlayers: Int { info.maxPlayers }
    /// True when the player accepted this invitation (in the Game Center app or with ``GKMatchmaker/accept(_:)``):
    /// join it (``GKMatchmaker/match(for:)``) without asking again. False when it waits for the player's answer.
    public var isAccepted: Bool { info.acceptedAt != nil }

    let info: InvitationInfo
    let device: GKGameCenter

    init(info: InvitationInfo, device: GKGameCenter) {
        self.info = info
        self.device = device
    }

    /// Says no; the inviter sees the invitee as declined. An expired or already answered invitation throws
    /// `invalidParameter`.
    public func decline() async throws {
        let _: APIClient.Empty = try await device.authenticated(.post, "/v1/invitations/\(info.invitationID)/decline")
        device.matchmaker.answered(info.invitationID)
    }

    /// Completion-handler form of ``decline()``: called once with nil or the error.
    public func decline(completionHandler: @escaping @Sendable ((any Error)?) -> Void) {
        CompletionHandler.run(completionHandler) { try await self.decline() }
    }
}
