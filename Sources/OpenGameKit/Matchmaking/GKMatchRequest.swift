import Foundation
import GameCenterProtocol
import Synchronization

/// What kind of match a player wants: its size, group and role, and friends to invite.
///
/// Sizes are 2…16 players for relayed and hosted matches alike (the seed's limit of 4 is gone); the server
/// refuses anything else with `matchRequestInvalid`.
///
/// Safe to share between threads: every property is read and written under one lock.
public final class GKMatchRequest: Sendable {
    private struct State {
        var minPlayers = 2
        var maxPlayers = 2
        var playerGroup: UInt32 = 0
        var playerAttributes: UInt32 = 0
        var playersToInvite: [String]?
        var inviteMessage: String?
        var inviteeResponseHandler: (@Sendable (String, GKInviteeState) -> Void)?
        var relayOnly = false
        var partyCode: String?
        var queueName: String?
        var properties: [String: GKMatchProperty]?
        var recipientProperties: [String: [String: GKMatchProperty]]?
    }

    private let state = Mutex(State())

    /// The fewest players the match may start with, the local player included (default 2).
    public var minPlayers: Int {
        get { state.withLock { $0.minPlayers } }
        set { state.withLock { $0.minPlayers = newValue } }
    }
    /// The most players the match may hold, the local player included (default 2). Hosted matches allow 16; a relayed
    /// match allows the game's manifest setting `matchmaking.maxRelayedPlayers` (the seed's 4 unless it says up to 16),
    /// and the server refuses a request above it with `matchRequestInvalid`.
    public var maxPlayers: Int {
        get { state.withLock { $0.maxPlayers } }
        set { state.withLock { $0.maxPlayers = newValue } }
    }
    /// Only requests with the same group are auto-matched; 0 is the default group.
    public var playerGroup: UInt32 {
        get { state.withLock { $0.playerGroup } }
        set { state.withLock { $0.playerGroup = newValue } }
    }
    /// The role this player wants, as a bit mask (0: no role). Auto-matched players join only when their mask
    /// does not overlap the match's; a match of roles is complete when its mask is `0xFFFFFFFF`.
    public var playerAttributes: UInt32 {
        get { state.withLock { $0.playerAttributes } }
        set { state.withLock { $0.playerAttributes = newValue } }
    }
    /// Friends to invite (player ids); seats left over are filled by auto-match.
    public var playersToInvite: [String]? {
        get { state.withLock { $0.playersToInvite } }
        set { state.withLock { $0.playersToInvite = newValue } }
    }
    /// Shown to invitees with the invitation.
    public var inviteMessage: String? {
        get { state.withLock { $0.inviteMessage } }
        set { state.withLock { $0.inviteMessage = newValue } }
    }
    /// Called on the inviting device as each invitee answers (accepted, declined) and when the match starts
    /// with them (connected).
    public var inviteeResponseHandler: (@Sendable (String, GKInviteeState) -> Void)? {
        get { state.withLock { $0.inviteeResponseHandler } }
        set { state.withLock { $0.inviteeResponseHandler = newValue } }
    }

    /// When true, the match this request finds keeps this device's data on the server's relay: the device tells
    /// nobody its addresses and takes no direct path, so no other player learns where it is (default false: the
    /// members reach each other directly where a direct path works). A game's manifest can make all its matches
    /// relay-only (`matchmaking.relayOnly`).
    public var relayOnly: Bool {
        get { state.withLock { $0.relayOnly } }
        set { state.withLock { $0.relayOnly = newValue } }
    }

    /// Matches only players of the party with this code (set by ``GKGameActivity/makeMatchRequest()``; the sizes must
    /// then be the activity's). Nil: auto-match and invitations as usual.
    public var partyCode: String? {
        get { state.withLock { $0.partyCode } }
        set { state.withLock { $0.partyCode = newValue } }
    }

    /// Apple's rule-based matchmaking: the queue (a reverse-DNS name from the game's manifest, case sensitive) whose
    /// rule set finds this request's players. Nil (the default) is classic matchmaking. With a queue, ``playerGroup``
    /// and ``playerAttributes`` are ignored, and a name the game does not have fails with `matchRequestInvalid`.
    public var queueName: String? {
        get { state.withLock { $0.queueName } }
        set { state.withLock { $0.queueName = newValue } }
    }

    /// What the queue's rules see of the local player (`properties` in rule expressions): JSON values under any key but
    /// `gc`, which Game Center reserves; at most 4 KB as JSON and 8 levels deep. Ignored without a ``queueName``.
    public var properties: [String: GKMatchProperty]? {
        get { state.withLock { $0.properties } }
        set { state.withLock { $0.properties = newValue } }
    }

    /// What the rules see of each invited player, by player id; every player named must also be in
    /// ``playersToInvite``. Nil: the rules see the local player's properties for them.
    public var recipientProperties: [String: [String: GKMatchProperty]]? {
        get { state.withLock { $0.recipientProperties } }
        set { state.withLock { $0.recipientProperties = newValue } }
    }

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
        let (minPlayers, maxPlayers) = state.withLock { ($0.minPlayers, $0.maxPlayers) }
        let sizes = Limits.matchPlayers
        guard sizes.contains(minPlayers), sizes.contains(maxPlayers) else {
            throw GKError(
                .matchRequestInvalid,
                "minPlayers \(minPlayers) and maxPlayers \(maxPlayers): matches have \(sizes.lowerBound) to \(sizes.upperBound) players")
        }
        guard minPlayers <= maxPlayers else {
            throw GKError(.matchRequestInvalid, "minPlayers \(minPlayers) is more than maxPlayers \(maxPlayers)")
        }
        let current = state.withLock { $0 }
        guard let queueName = current.queueName else { return }
        guard (1...255).contains(queueName.count), queueName.wholeMatch(of: /[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*/) != nil else {
            throw GKError(.matchRequestInvalid, "queueName '\(queueName)' must be letters, digits, '-' and '.' in reverse-DNS form")
        }
        for properties in [current.properties ?? [:]] + (current.recipientProperties ?? [:]).values where properties["gc"] != nil {
            throw GKError(.matchRequestInvalid, "the property key 'gc' is reserved for Game Center")
        }
        let invited = Set(current.playersToInvite ?? [])
        if let stranger = current.recipientProperties?.keys.sorted().first(where: { !invited.contains($0) }) {
            throw GKError(.matchRequestInvalid, "recipientProperties names \(stranger), who is not in playersToInvite")
        }
    }

    /// The platform rule expressions see (`platform`).
    static var platform: String {
        #if os(Linux)
        "LINUX"
        #elseif os(macOS)
        "MAC_OS"
        #elseif os(iOS)
        "IOS"
        #elseif os(tvOS)
        "TV_OS"
        #elseif os(visionOS)
        "VISION_OS"
        #else
        "UNKNOWN"
        #endif
    }

    /// The game's version as rules see it (`appVersion`, for `areCompatibleAppVersions`): `GAMECENTER_APP_VERSION`, else
    /// the app bundle's short version, else `1.0`.
    var appVersion: String {
        ProcessInfo.processInfo.environment["GAMECENTER_APP_VERSION"]
            ?? Bundle.main.infoDictionary?["CFBundleShortVersionString"] as? String ?? "1.0"
    }

    func body(requestID: String, hosted: Bool, matchID: String? = nil) -> MatchRequestBody {
        let current = state.withLock { $0 }
        return MatchRequestBody(
            requestID: requestID, minPlayers: current.minPlayers, maxPlayers: current.maxPlayers,
            playerGroup: current.playerGroup, playerAttributes: current.playerAttributes, hosted: hosted,
            playersToInvite: current.playersToInvite ?? [], inviteMessage: current.inviteMessage, matchID: matchID, partyCode: current.partyCode,
            queueName: current.queueName, properties: current.queueName == nil ? nil : current.properties,
            recipientProperties: current.queueName == nil ? nil : current.recipientProperties,
            // Sent with classic requests too: a game's manifest may let them wait in a queue (classicMatchmakingBundleIds).
            appVersion: appVersion, platform: Self.platform)
    }
}
