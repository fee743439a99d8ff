import GameCenterProtocol
import GameCenterStorage

/// A pending invitation as the Game Center app lists it: the stored invitation and the inviter's alias now.
struct ReceivedInvitation: Sendable {
    let invitation: InvitationRecord
    let inviterAlias: String
}

/// What the Game Center app asks of the matchmaker: the player's invitations to every game, answered outside any
/// game, and friends chosen to play a game with, kept until the game next starts.
extension MatchmakingService {
    /// `playerID`'s pending, unexpired invitations in `environment`, to every game, oldest first.
    func receivedInvitations(playerID: String, environment: GameCenterProtocol.Environment) async throws -> [ReceivedInvitation] {
        let now = clock.nowMillis()
        return try await database.read { storage in
            let invitations = try await storage.pendingInvitations(invitee: playerID, bundleID: nil, environment: environment.rawValue, now: now)
            let inviters = try await storage.players(ids: Array(Set(invitations.map(\.inviter))), environment: nil)
            let aliases = Dictionary(uniqueKeysWithValues: inviters.map { ($0.playerID, $0.alias) })
            return invitations.map { ReceivedInvitation(invitation: $0, inviterAlias: aliases[$0.inviter] ?? "") }
        }
    }

    /// Accepts one of `playerID`'s invitations outside the game: it is recorded (and pushed to the player's running
    /// devices of the game), and the game joins it when it next starts, through its invitation handler. Until then
    /// the invitation stays open and the inviter's match waits for it; accepting twice changes nothing.
    func acceptInApp(invitationID: String, playerID: String, environment: GameCenterProtocol.Environment) async throws {
        let invitation = try await openInvitation(invitationID, of: playerID, in: environment, game: nil)
        guard try await recorder.acceptInApp(invitation, now: clock.nowMillis()) != nil else { throw APIError.invitationClosed }
    }

    /// Declines one of `playerID`'s invitations outside the game, as the game's decline does: the inviter is told.
    /// Several nodes: the node that owns the game's queue, where the match forms, is told too.
    func declineInApp(invitationID: String, playerID: String, environment: GameCenterProtocol.Environment) async throws {
        let invitation = try await openInvitation(invitationID, of: playerID, in: environment, game: nil)
        try await decline(invitation)
        if case .node(let id, let url)? = try? await queueOwner(bundleID: invitation.bundleID, environment: invitation.environment) {
            await queues.invitationDeclined(invitation.invitationID, owner: (id, url))
        }
    }

    /// Keeps friends `playerID` chose to play `game` with until a device of the game claims them (its invitation
    /// handler gets them; for a turn-based match, its turn-based listener), at most as long as an invitation lasts; a new
    /// choice replaces the last one.
    func playWithFriends(
        _ playerIDs: [String], game: Game, environment: GameCenterProtocol.Environment, playerID: String, turnBased: Bool = false
    ) async throws {
        let friends = try PlayerIDRules.list(playerIDs)
        guard !friends.contains(playerID) else { throw APIError.inviteSelf }
        guard friends.count < Limits.matchPlayers.upperBound else {
            throw APIError.matchRequestInvalid("at most \(Limits.matchPlayers.upperBound - 1) friends can play with you")
        }
        let now = clock.nowMillis()
        try await recorder.playWithFriends(
            friends, bundleID: game.bundleID, environment: environment.rawValue, playerID: playerID, now: now,
            expiresAt: now + Int64(invitationSeconds(for: game)) * 1000, turnBased: turnBased)
    }

    /// `POST /v1/matchmaking/play-with-friends`: ``playWithFriends(_:game:environment:playerID:)`` for the caller's game.
    func playWithFriends(_ playerIDs: [String], device: DeviceIdentity, session: AuthenticatedSession) async throws {
        try await playWithFriends(playerIDs, game: device.game, environment: device.environment, playerID: session.playerID)
    }

    /// The friends `playerID` chose for `game` that wait for it to start, if any.
    func waitingPlayWithFriends(playerID: String, game: Game) async throws -> PlayWithFriendsRecord? {
        let now = clock.nowMillis()
        return try await database.read { try await $0.playWithFriends(playerID: playerID, bundleID: game.bundleID, now: now) }
    }

    /// Hands the device the friends chosen for its game, once: the choice is gone afterwards. Players who stopped
    /// being friends since are left out.
    func claimPlayWithFriends(device: DeviceIdentity, session: AuthenticatedSession) async throws -> [PlayWithFriends] {
        let now = clock.nowMillis()
        return try await database.write { storage -> [PlayWithFriends] in
            guard let choice = try await storage.takePlayWithFriends(playerID: session.playerID, bundleID: device.game.bundleID, now: now)
            else { return [] }
            let stillFriends = try await storage.friends(of: session.playerID, among: choice.friends)
            let friends = choice.friends.filter(stillFriends.contains)
            return friends.isEmpty ? [] : [PlayWithFriends(bundleID: choice.bundleID, playerIDs: friends, turnBased: choice.turnBased ? true : nil)]
        }
    }
}
