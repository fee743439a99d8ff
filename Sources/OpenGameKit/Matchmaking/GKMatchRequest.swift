import GameCenterProtocol

/// What kind of match a player wants: its size, group and role, and friends to invite.
///
/// Sizes are 2…16 players for relayed and hosted matches alike (the seed's limit of 4 is gone); the server
/// refuses anything else with `matchRequestInvalid`.
public final class GKMatchRequest: @unchecked Sendable {
    /// The fewest players the match may start with, the local player included (default 2).
    public var minPlayers = 2
    /// The most players the match may hold, the local player included (default 2).
    public var maxPlayers = 2
    /// Only requests with the same group are auto-matched; 0 is the default group.
    public var playerGroup: UInt32 = 0
    /// The role this player wants, as a bit mask (0: no role). Auto-matched players join only when their mask
    /// does not overlap the match's; a match of roles is complete when its mask is `0xFFFFFFFF`.
    public var playerAttributes: UInt32 = 0
    /// Friends to invite (player ids); seats left over are filled by auto-match.
    public var playersToInvite: [String]?
    /// Shown to invitees with the invitation.
    public var inviteMessage: String?
    /// Called on the inviting device as each invitee answers (accepted, declined) and when the match starts
    /// with them (connected).
    public var inviteeResponseHandler: (@Sendable (String, GKInviteeState) -> Void)?

    /// A request for a two-player match.
    public init() {}

    /// A request with the given sizes.
    public convenience init(minPlayers: Int, maxPlayers: Int) {
        self.init()
        self.minPlayers = minPlayers
        self.maxPlayers = maxPlayers
    }

    /// The sizes checked before anything is sent (the server checks them again).
    func check() throws {
        let sizes = Limits.matchPlayers
        guard sizes.contains(minPlayers), sizes.contains(maxPlayers) else {
            throw GKError(.matchRequestInvalid,
                          "minPlayers \(minPlayers) and maxPlayers \(maxPlayers): matches have \(sizes.lowerBound) to \(sizes.upperBound) players")
        }
        guard minPlayers <= maxPlayers else {
            throw GKError(.matchRequestInvalid, "minPlayers \(minPlayers) is more than maxPlayers \(maxPlayers)")
        }
    }

    func body(requestID: String, hosted: Bool, matchID: String? = nil) -> MatchRequestBody {
        MatchRequestBody(requestID: requestID, minPlayers: minPlayers, maxPlayers: maxPlayers, playerGroup: playerGroup,
                         playerAttributes: playerAttributes, hosted: hosted, playersToInvite: playersToInvite ?? [],
                         inviteMessage: inviteMessage, matchID: matchID)
    }
}
