import Foundation
import GameCenterProtocol
import GameCenterStorage
import JMESPath

/// A match request that passed every rule that needs no storage.
struct CheckedMatchRequest: Sendable {
    var requestID: String
    var minPlayers: Int
    var maxPlayers: Int
    var playerGroup: UInt32
    var playerAttributes: UInt32
    var hosted: Bool
    var playersToInvite: [String]
    var inviteMessage: String?
    var matchID: String?
    /// Set when the request names a queue: its rules match it.
    var rules: CheckedRuleFields?
}

/// What a rule-based request brings beyond a classic one, checked.
struct CheckedRuleFields: Sendable {
    var queue: MatchmakingQueueDefinition
    var ruleSet: MatchmakingRuleSet
    var properties: [String: JSONValue]
    /// What the rules see of each invitee, by player id (an invitee not named sees the requester's properties).
    var recipientProperties: [String: [String: JSONValue]]
    var appVersion: String
    var platform: String
}

/// The rules of a match request (`matchRequestInvalid` for sizes and roles, `invalidParameter` for the rest).
enum MatchRequestRules {
    /// Checks `body` for `game`, requested by `playerID`.
    static func check(_ body: MatchRequestBody, game: Game, playerID: String) throws -> CheckedMatchRequest {
        let requestID = try self.requestID(body.requestID)
        let sizes = Limits.matchPlayers
        let kind = body.hosted ? "hosted" : "relayed"
        guard sizes.contains(body.minPlayers), sizes.contains(body.maxPlayers) else {
            throw APIError.matchRequestInvalid(
                "minPlayers \(body.minPlayers) and maxPlayers \(body.maxPlayers): \(kind) matches have \(sizes.lowerBound) to \(sizes.upperBound) players"
            )
        }
        let relayedCap = game.matchmaking.maxRelayedPlayers
        guard body.hosted || body.maxPlayers <= relayedCap else {
            throw APIError.matchRequestInvalid(
                "maxPlayers \(body.maxPlayers): relayed matches of \(game.bundleID) have at most \(relayedCap) players (its manifest's matchmaking.maxRelayedPlayers; hosted matches allow \(sizes.upperBound))"
            )
        }
        guard body.minPlayers <= body.maxPlayers else {
            throw APIError.matchRequestInvalid("minPlayers \(body.minPlayers) is more than maxPlayers \(body.maxPlayers)")
        }
        if game.matchmaking.rolesRequired, body.playerAttributes == 0, body.matchID == nil, body.partyCode == nil {
            throw APIError.matchRequestInvalid(
                "\(game.bundleID) forms matches from roles: set playerAttributes to the mask of the role this player wants (not 0)"
            )
        }
        guard body.playerAttributes != .max else {
            throw APIError.matchRequestInvalid("playerAttributes 0xFFFFFFFF fills every role alone; a role is a part of the mask")
        }
        var invitees: [String] = []
        if !body.playersToInvite.isEmpty {
            invitees = try PlayerIDRules.list(body.playersToInvite)
            guard !invitees.contains(playerID) else { throw APIError.inviteSelf }
            guard invitees.count < body.maxPlayers else {
                throw APIError.matchRequestInvalid(
                    "\(invitees.count) players invited, but a match of at most \(body.maxPlayers) has room for \(body.maxPlayers - 1) besides you"
                )
            }
        }
        let message = try body.inviteMessage.map(FriendService.message)
        if let matchID = body.matchID {
            guard (1...64).contains(matchID.count) else { throw APIError.noSuchMatch }
        }
        return CheckedMatchRequest(
            requestID: requestID, minPlayers: body.minPlayers, maxPlayers: body.maxPlayers, playerGroup: body.playerGroup,
            playerAttributes: body.playerAttributes, hosted: body.hosted, playersToInvite: invitees, inviteMessage: message,
            matchID: body.matchID, rules: try ruleFields(body, game: game)
        )
    }

    /// The queue and properties of a rule-based request: one naming a queue, or a classic one (no `queueName`, adding
    /// to no match, of no party) when the game's classic requests wait in a queue (``MatchmakingSettings/classicQueue``)
    /// and its sizes meet the queue's rule set. Nil for other classic requests, whose properties are ignored.
    static func ruleFields(_ body: MatchRequestBody, game: Game) throws -> CheckedRuleFields? {
        let settings = game.matchmaking
        guard let name = body.queueName else {
            guard let classic = settings.classicQueue, body.matchID == nil, body.partyCode == nil, let queue = settings.queues[classic],
                let ruleSet = settings.ruleSets[queue.ruleSet],
                let range = ruleSet.playerRange(requestMin: body.minPlayers, requestMax: body.maxPlayers),
                body.playersToInvite.count < range.upperBound
            else { return nil }
            var classicBody = body
            (classicBody.properties, classicBody.recipientProperties) = (nil, nil)
            classicBody.queueName = classic
            return try ruleFields(classicBody, game: game)
        }
        guard let queue = settings.queues[name], let ruleSet = settings.ruleSets[queue.ruleSet] else {
            throw APIError.unknownQueue(name, known: settings.queues.keys.sorted())
        }
        guard body.matchID == nil else {
            throw APIError.matchRequestInvalid(
                "a request with a queueName adds to no running match: the queue's rules find its players (add players to a match with a request without queueName)"
            )
        }
        let partySize = 1 + body.playersToInvite.count
        guard let range = ruleSet.playerRange(requestMin: body.minPlayers, requestMax: body.maxPlayers), partySize <= range.upperBound else {
            throw APIError.matchRequestInvalid(
                "queue \(name)'s rule set \(ruleSet.referenceName) matches \(ruleSet.minPlayers) to \(ruleSet.maxPlayers) players; with minPlayers \(body.minPlayers), maxPlayers \(body.maxPlayers) and \(partySize - 1) invited, this request could never be matched"
            )
        }
        let recipients = body.recipientProperties ?? [:]
        let strangers = recipients.keys.filter { !body.playersToInvite.contains($0) }.sorted()
        guard strangers.isEmpty else {
            throw APIError.invalidProperties(
                "recipientProperties name players who are not in playersToInvite: \(strangers.prefix(5).joined(separator: ", "))")
        }
        let properties = body.properties ?? [:]
        try checkProperties(properties)
        for recipient in recipients.values { try checkProperties(recipient) }
        let appVersion = body.appVersion ?? "1.0"
        guard (1...64).contains(appVersion.count) else { throw APIError.invalidParameter("appVersion must be 1 to 64 characters") }
        let platform = body.platform ?? "UNKNOWN"
        guard (1...32).contains(platform.count), platform.allSatisfy({ $0.isASCII && ($0.isUppercase || $0.isNumber || $0 == "_") }) else {
            throw APIError.invalidParameter("platform must be 1 to 32 capital letters, digits or '_', such as LINUX or MAC_OS")
        }
        return CheckedRuleFields(
            queue: queue, ruleSet: ruleSet, properties: properties, recipientProperties: recipients, appVersion: appVersion, platform: platform)
    }

    /// Largest properties of one player, as compact JSON.
    static let maximumPropertyBytes = 4096
    /// Deepest nesting of arrays and objects in one player's properties.
    static let maximumPropertyDepth = 8

    /// One player's match properties: JSON values under keys other than `gc`, small and shallow enough.
    static func checkProperties(_ properties: [String: JSONValue]) throws {
        guard properties["gc"] == nil else { throw APIError.invalidProperties("the key 'gc' is reserved for Game Center's own properties") }
        func depth(_ value: JSONValue) -> Int {
            switch value {
            case .array(let elements): 1 + (elements.map(depth).max() ?? 0)
            case .object(let members): 1 + (members.values.map(depth).max() ?? 0)
            default: 0
            }
        }
        guard depth(.object(properties)) <= maximumPropertyDepth else {
            throw APIError.invalidProperties("properties nest arrays and objects more than \(maximumPropertyDepth) deep")
        }
        let size = (try? JSONEncoder().encode(JSONValue.object(properties)).count) ?? .max
        guard size <= maximumPropertyBytes else {
            throw APIError.invalidProperties("properties are \(size) bytes as JSON; at most \(maximumPropertyBytes) are allowed")
        }
    }

    /// A device-chosen request id: 1…64 letters, digits, `-`, `_` or `.`.
    static func requestID(_ raw: String) throws -> String {
        guard (1...64).contains(raw.count), raw.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "-_.".contains($0)) }) else {
            throw APIError.invalidParameter("requestID must be 1 to 64 letters, digits, '-', '_' or '.'")
        }
        return raw
    }

    /// Invitees must be players of this environment and friends of the inviter.
    static func checkInvitees(_ invitees: [String], of inviter: String, environment: String, in storage: StorageSession) async throws {
        guard !invitees.isEmpty else { return }
        let found = try await storage.players(ids: invitees, environment: environment)
        let unknown = invitees.filter { id in !found.contains { $0.playerID == id } }
        guard unknown.isEmpty else { throw APIError.unknownPlayers(unknown) }
        let friends = try await storage.friends(of: inviter, among: invitees)
        let strangers = invitees.filter { !friends.contains($0) }
        guard strangers.isEmpty else { throw APIError.inviteNonFriends(strangers) }
    }
}

extension APIError {
    static func matchRequestInvalid(_ message: String) -> APIError {
        APIError(.matchmakingInvalidRequest, message)
    }
    static let inviteSelf = APIError(.matchmakingInviteSelf, "you cannot invite yourself to a match")
    static func inviteNonFriends(_ ids: [String]) -> APIError {
        APIError(.matchmakingNotFriends, "only friends can be invited; not your friend: \(ids.prefix(5).joined(separator: ", ")); nothing was sent")
    }
    static func unknownQueue(_ name: String, known: [String]) -> APIError {
        APIError(
            .matchmakingUnknownQueue,
            "no queue is named '\(name)' (names are case sensitive); this game's queues: \(known.isEmpty ? "none" : known.prefix(10).joined(separator: ", "))")
    }
    static func invalidProperties(_ message: String) -> APIError {
        APIError(.matchmakingInvalidProperties, message)
    }
    static let noSuchMatch = APIError(.matchmakingNoSuchMatch, "no match with this id has you as a member")
    static let matchNotRunning = APIError(.matchmakingMatchNotRunning, "players can be added only to a started match you are still in")
    static let noSuchRequest = APIError(.matchmakingNoSuchRequest, "no waiting match request with this id is yours (it was matched, cancelled, or never made)")
    static let requestIDReused = APIError(.matchmakingRequestIDReused, "this requestID was already used; make a new one for each request")
    static let alreadyWaiting = APIError(.matchmakingAlreadyWaiting, "this player already has a waiting match request; cancel it before making another")
    static let channelClosed = APIError(
        .matchmakingOffline, "open the realtime channel (/v1/realtime) first: a match request waits only while its device is connected")
    static let noSuchInvitation = APIError(.matchmakingNoSuchInvitation, "no invitation with this id is addressed to you")
    static let invitationClosed = APIError(
        .matchmakingInvitationClosed, "this invitation can no longer be answered: it expired, was answered, or its match is gone")
}
