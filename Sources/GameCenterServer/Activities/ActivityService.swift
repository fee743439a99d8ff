import Foundation
import GameCenterProtocol
import GameCenterStorage
import Logging

/// Activities (Apple's `GKGameActivity`): a player starts one of the game's activities, alone or in a party that
/// others join with its code. A party's code is unique among the game's live parties; it takes players until its host
/// ends their activity or ``partyLifetimeMillis`` pass, and the matchmaker forms its matches
/// (`MatchRequestBody.partyCode`). A player who types a code in the Game Center app joins from there: their running
/// game hears `wantsToPlay` and starts the activity.
struct ActivityService: Sendable {
    let database: Database
    let bus: any EventBus
    let clock: ServerClock
    let logger: Logger

    /// How long a party takes players, at most.
    static let partyLifetimeMillis: Int64 = 24 * 3_600_000
    /// The most players in one party (it may need several matches).
    static let maximumPartyPlayers = 64

    // MARK: Definitions

    /// The game's activity definitions, texts in the device's locale.
    func definitions(device: DeviceIdentity) -> ActivityDefinitionList {
        ActivityDefinitionList(definitions: device.game.activities.map { Self.info($0, game: device.game, locale: device.locale) })
    }

    static func info(_ definition: ActivityDefinition, game: Game, locale: String) -> ActivityDefinitionInfo {
        ActivityDefinitionInfo(
            identifier: definition.identifier, title: Localization.text(definition.title, locale: locale, fallback: game.defaultLocale),
            details: definition.details.map { Localization.text($0, locale: locale, fallback: game.defaultLocale) },
            minPlayers: definition.minPlayers, maxPlayers: definition.maxPlayers, playStyle: definition.playStyle,
            supportsPartyCode: definition.supportsPartyCode, defaultProperties: definition.defaultProperties)
    }

    // MARK: Starting

    /// Starts an activity for the signed-in player: in the party with `body.partyCode` (joined, or started with that
    /// code when no live party of the game has it), in a new party with a code the server makes (a definition that
    /// supports party codes), or alone. Starting again in a party the player is in answers their activity there.
    func start(_ body: ActivityStartBody, device: DeviceIdentity, session: AuthenticatedSession) async throws -> ActivityInfo {
        let game = device.game
        let definition = try Self.definition(body.definition, in: game)
        let properties = try Self.properties(body.properties, over: definition.defaultProperties)
        var code: String?
        if let typed = body.partyCode {
            guard definition.supportsPartyCode else {
                throw APIError.activityInvalidRequest("'\(definition.identifier)' does not support party codes (its manifest's supportsPartyCode)")
            }
            guard let normalized = PartyCode.normalized(typed) else {
                throw APIError.activityInvalidRequest("'\(typed.prefix(20))' is not a party code: \(PartyCode.formatDescription)")
            }
            code = normalized
        }
        let place = PlayerPlace(playerID: session.playerID, bundleID: game.bundleID, environment: device.environment.rawValue)
        guard definition.supportsPartyCode else {
            let now = clock.nowMillis()
            let activity = Self.newActivity(place, definition: definition.identifier, partyID: nil, properties: properties, state: .active, now: now)
            try await database.write { try await $0.insertActivity(activity) }
            return try Self.info(activity, party: nil, players: [], now: now)
        }
        let (activity, party, players, told) = try await joinOrHost(
            code: code, definitionID: definition.identifier, properties: properties, place: place, state: .active)
        publish(to: told)
        return try Self.info(activity, party: party, players: players, now: clock.nowMillis())
    }

    /// A player and the game and environment they play in.
    struct PlayerPlace: Sendable {
        var playerID: String
        var bundleID: String
        var environment: String
    }

    /// Joins the live party with `code` (its definition must be `definitionID`), or starts one with that code (or a new
    /// code when nil) hosted by the player. Answers the player's activity, the party, its players' activities and the
    /// players told of the join.
    private func joinOrHost(
        code: String?, definitionID: String, properties: [String: String], place: PlayerPlace, state: ActivityState
    ) async throws -> (ActivityRecord, PartyRecord, [ActivityRecord], [String]) {
        for _ in 0..<5 {
            let now = clock.nowMillis()
            let joined = try await database.write { storage -> (ActivityRecord, PartyRecord, [ActivityRecord], [String])? in
                if let code, let party = try await storage.liveParty(bundleID: place.bundleID, environment: place.environment, code: code, now: now) {
                    return try await join(party, definitionID: definitionID, properties: properties, place: place, state: state, now: now, in: storage)
                }
                let party = PartyRecord(
                    partyID: Credentials.newID(prefix: "pa_"), bundleID: place.bundleID, environment: place.environment, code: code ?? PartyCode.make(),
                    isLive: true, definition: definitionID, hostID: place.playerID, createdAt: now, expiresAt: now + Self.partyLifetimeMillis)
                // Taken meanwhile (another node's player chose the same code): join it on the next round.
                guard try await storage.insertParty(party) else { return nil }
                let activity = Self.newActivity(place, definition: definitionID, partyID: party.partyID, properties: properties, state: state, now: now)
                try await storage.insertActivity(activity)
                return (activity, party, [activity], [])
            }
            if let joined { return joined }
        }
        throw APIError.activityInvalidRequest("no free party code was found; try again")
    }

    /// Adds the player to a live party (within one transaction), or answers their activity in it.
    private func join(
        _ found: PartyRecord, definitionID: String, properties: [String: String], place: PlayerPlace, state: ActivityState, now: Int64,
        in storage: StorageSession
    ) async throws -> (ActivityRecord, PartyRecord, [ActivityRecord], [String]) {
        guard found.definition == definitionID else {
            throw APIError.activityInvalidRequest("the party \(found.code) plays '\(found.definition)', not '\(definitionID)'")
        }
        try await storage.lockParty(id: found.partyID)
        // Read again under the lock: its host may have ended it meanwhile.
        guard let party = try await storage.party(id: found.partyID), party.isLive, party.expiresAt > now else { throw APIError.partyNotFound }
        var players = try await storage.partyActivities(partyID: party.partyID)
        if var mine = players.first(where: { $0.playerID == place.playerID }) {
            if state == .active, mine.state == ActivityState.initialized.rawValue {
                (mine.state, mine.startedAt, mine.resumedAt) = (ActivityState.active.rawValue, now, now)
                _ = try await storage.updateActivity(mine)
                players = try await storage.partyActivities(partyID: party.partyID)
            }
            return (mine, party, players, [])
        }
        guard players.count < Self.maximumPartyPlayers else { throw APIError.partyFull(Self.maximumPartyPlayers) }
        let activity = Self.newActivity(place, definition: definitionID, partyID: party.partyID, properties: properties, state: state, now: now)
        try await storage.insertActivity(activity)
        let told = players.map(\.playerID)
        players.append(activity)
        var events = try players.filter { $0.playerID != place.playerID }.map { other in
            (
                other.playerID,
                try EventLog.payload(
                    ActivityEventInfo(
                        bundleID: party.bundleID, kind: .playerJoined, playerID: place.playerID,
                        activity: Self.info(other, party: party, players: players, now: now)))
            )
        }
        if state == .initialized {
            events.append(
                (
                    place.playerID,
                    try EventLog.payload(
                        ActivityEventInfo(
                            bundleID: party.bundleID, kind: .wantsToPlay, playerID: place.playerID,
                            activity: Self.info(activity, party: party, players: players, now: now)))
                ))
        }
        _ = try await storage.appendEvents(events, kind: EventKind.activity.rawValue, now: now)
        return (activity, party, players, told + (state == .initialized ? [place.playerID] : []))
    }

    // MARK: The Game Center app

    /// A live party as the Game Center app shows it.
    struct PartySummary: Sendable {
        var party: PartyRecord
        var hostAlias: String
        var players: Int
    }

    /// The live parties with this code in the player's environment (the Game Center app joins from outside any game).
    func parties(code typed: String, environment: Environment) async throws -> [PartySummary] {
        guard let code = PartyCode.normalized(typed) else {
            throw APIError.activityInvalidRequest("'\(typed.prefix(20))' is not a party code: \(PartyCode.formatDescription)")
        }
        let now = clock.nowMillis()
        return try await database.read { storage in
            var found: [PartySummary] = []
            for party in try await storage.liveParties(environment: environment.rawValue, code: code, now: now) {
                let alias = try await storage.player(id: party.hostID)?.alias ?? ""
                found.append(PartySummary(party: party, hostAlias: alias, players: try await storage.partyActivities(partyID: party.partyID).count))
            }
            return found
        }
    }

    /// Joins a party from the Game Center app: the player's activity waits (`initialized`) and their running game hears
    /// `wantsToPlay`.
    func joinFromApp(_ party: PartyRecord, playerID: String, game: Game) async throws -> ActivityInfo {
        let definition = try Self.definition(party.definition, in: game)
        let place = PlayerPlace(playerID: playerID, bundleID: party.bundleID, environment: party.environment)
        let now = clock.nowMillis()
        let (activity, joined, players, told) = try await database.write { storage in
            try await join(
                party, definitionID: party.definition, properties: definition.defaultProperties, place: place, state: .initialized, now: now, in: storage)
        }
        publish(to: told)
        return try Self.info(activity, party: joined, players: players, now: now)
    }

    // MARK: Reading and changing

    /// One of the signed-in player's activities in the game.
    func activity(_ activityID: String, device: DeviceIdentity, session: AuthenticatedSession) async throws -> ActivityInfo {
        let now = clock.nowMillis()
        let (activity, party, players) = try await database.read { storage in
            let activity = try await Self.mine(activityID, device: device, session: session, in: storage)
            return try await (activity, Self.party(of: activity, in: storage), Self.players(of: activity, in: storage))
        }
        return try Self.info(activity, party: party, players: players, now: now)
    }

    /// Starts, pauses, resumes or ends an activity (asking for the state it is in changes nothing). Its host ending a
    /// party's activity closes the party to new players.
    func setState(_ activityID: String, _ body: ActivityStateBody, device: DeviceIdentity, session: AuthenticatedSession) async throws -> ActivityInfo {
        let now = clock.nowMillis()
        let (activity, party, players) = try await database.write { storage in
            var activity = try await Self.mine(activityID, device: device, session: session, in: storage)
            guard activity.endedAt == nil else { throw APIError.activityEnded }
            let current = ActivityState(rawValue: activity.state) ?? .active
            switch (current, body.state) {
            case (let from, let to) where from == to:
                break
            case (_, .initialized):
                throw APIError.activityInvalidRequest("an activity cannot go back to initialized; ask for active, paused or ended")
            case (.initialized, .active), (.paused, .active):
                activity.startedAt = activity.startedAt ?? now
                activity.resumedAt = now
            case (.active, .paused), (_, .ended):
                activity.activeMillis += activity.resumedAt.map { max(0, now - $0) } ?? 0
                activity.resumedAt = nil
                if body.state == .ended { activity.endedAt = now }
            case (.initialized, .paused):
                throw APIError.activityInvalidRequest("start the activity (active) before pausing it")
            default:
                throw APIError.activityInvalidRequest("an activity cannot go from \(current.rawValue) to \(body.state.rawValue)")
            }
            activity.state = body.state.rawValue
            guard try await storage.updateActivity(activity) else { throw APIError.activityEnded }
            let party = try await Self.party(of: activity, in: storage)
            if body.state == .ended, let party, party.hostID == activity.playerID, party.isLive { try await storage.closeParty(id: party.partyID) }
            return try await (
                activity, Self.party(of: activity, in: storage), Self.players(of: activity, in: storage)
            )
        }
        return try Self.info(activity, party: party, players: players, now: now)
    }

    /// The player's party in a game (their activity in it has not ended): the matchmaker's check of a party request.
    /// Says whether the player is a friend of its host, and (for the host) which of the party's players are friends.
    func party(code typed: String, device: DeviceIdentity, playerID: String) async throws -> (
        party: PartyRecord, isFriendOfHost: Bool, hostFriends: Set<String>
    ) {
        guard let code = PartyCode.normalized(typed) else {
            throw APIError.matchRequestInvalid("partyCode '\(typed.prefix(20))' is not a party code: \(PartyCode.formatDescription)")
        }
        let now = clock.nowMillis()
        return try await database.read { storage in
            guard let party = try await storage.liveParty(bundleID: device.game.bundleID, environment: device.environment.rawValue, code: code, now: now)
            else { throw APIError.partyNotFound }
            let players = try await storage.partyActivities(partyID: party.partyID).map(\.playerID)
            guard players.contains(playerID) else { throw APIError.notInParty(code) }
            guard party.hostID != playerID else {
                return (party, false, try await storage.friends(of: playerID, among: players.filter { $0 != playerID }))
            }
            return (party, !(try await storage.friends(of: party.hostID, among: [playerID]).isEmpty), [])
        }
    }

    // MARK: Helpers

    static func definition(_ identifier: String, in game: Game) throws -> ActivityDefinition {
        guard let definition = game.activities.first(where: { $0.identifier == identifier }) else {
            throw APIError.unknownActivityDefinition(identifier, known: game.activities.map(\.identifier))
        }
        return definition
    }

    /// The definition's defaults with `given` set over them, checked.
    static func properties(_ given: [String: String]?, over defaults: [String: String]) throws -> [String: String] {
        let merged = defaults.merging(given ?? [:]) { $1 }
        guard merged.count <= ActivityDefinition.maximumProperties else {
            throw APIError.activityInvalidRequest("\(merged.count) properties; at most \(ActivityDefinition.maximumProperties) are allowed")
        }
        for (key, value) in merged
        where !ActivityDefinition.propertyKeyLengths.contains(key.count) || value.count > ActivityDefinition.propertyValueMaximumLength {
            throw APIError.activityInvalidRequest("property '\(key.prefix(64))': keys are 1 to 64 characters and values at most 256")
        }
        return merged
    }

    private static func newActivity(
        _ place: PlayerPlace, definition: String, partyID: String?, properties: [String: String], state: ActivityState, now: Int64
    ) -> ActivityRecord {
        let started = state == .active ? now : nil
        let json = (try? String(decoding: JSONSerialization.data(withJSONObject: properties, options: [.sortedKeys]), as: UTF8.self)) ?? "{}"
        return ActivityRecord(
            activityID: Credentials.newID(prefix: "ac_"), bundleID: place.bundleID, environment: place.environment, playerID: place.playerID,
            definition: definition, partyID: partyID, state: state.rawValue, properties: json, createdAt: now, startedAt: started, resumedAt: started,
            activeMillis: 0, endedAt: nil)
    }

    private static func mine(_ activityID: String, device: DeviceIdentity, session: AuthenticatedSession, in storage: StorageSession) async throws
        -> ActivityRecord
    {
        guard activityID.count <= 64, let activity = try await storage.activity(id: activityID), activity.playerID == session.playerID,
            activity.bundleID == device.game.bundleID, activity.environment == device.environment.rawValue
        else { throw APIError.activityNotFound }
        return activity
    }

    /// The activities in the party of `activity` that have not ended (none outside a party).
    private static func players(of activity: ActivityRecord, in storage: StorageSession) async throws -> [ActivityRecord] {
        guard let partyID = activity.partyID else { return [] }
        return try await storage.partyActivities(partyID: partyID)
    }

    private static func party(of activity: ActivityRecord, in storage: StorageSession) async throws -> PartyRecord? {
        guard let partyID = activity.partyID else { return nil }
        return try await storage.party(id: partyID)
    }

    /// The answer for `activity`: its party's code while the party is live, and the party's players.
    static func info(_ activity: ActivityRecord, party: PartyRecord?, players: [ActivityRecord], now: Int64) throws -> ActivityInfo {
        let properties = (try? JSONDecoder().decode([String: String].self, from: Data(activity.properties.utf8))) ?? [:]
        let running = activity.resumedAt.map { max(0, now - $0) } ?? 0
        let live = party.map { $0.isLive && $0.expiresAt > now } ?? false
        return ActivityInfo(
            activityID: activity.activityID, bundleID: activity.bundleID, definition: activity.definition,
            state: ActivityState(rawValue: activity.state) ?? .active, partyCode: live ? party?.code : nil, partyHostID: party?.hostID,
            partyPlayerIDs: players.map(\.playerID), properties: properties, createdAt: StoredTime.date(activity.createdAt),
            startedAt: activity.startedAt.map(StoredTime.date), resumedAt: activity.resumedAt.map(StoredTime.date),
            endedAt: activity.endedAt.map(StoredTime.date), activeSeconds: Double(activity.activeMillis + running) / 1000)
    }

    /// Wakes the recipients' event streams (after the commit).
    private func publish(to recipients: [String]) {
        for player in recipients { bus.publish(.playerEvents(playerID: player)) }
    }
}

extension APIError {
    static func unknownActivityDefinition(_ identifier: String, known: [String]) -> APIError {
        APIError(
            .activityUnknownDefinition,
            "this game has no activity '\(identifier.prefix(100))'"
                + (known.isEmpty ? "; its manifest defines none" : "; it has \(known.prefix(10).joined(separator: ", "))"))
    }
    static func activityInvalidRequest(_ message: String) -> APIError { APIError(.activityInvalidRequest, message) }
    static let activityNotFound = APIError(.activityNotFound, "no activity of yours in this game has this id")
    static let activityEnded = APIError(.activityEnded, "this activity has ended; start a new one")
    static let partyNotFound = APIError(
        .activityPartyNotFound, "no party of this game has this code now (it was never made, its host ended it, or it expired after 24 hours)")
    static func partyFull(_ maximum: Int) -> APIError {
        APIError(.activityPartyFull, "this party has \(maximum) players, the most one party takes")
    }
    static func notInParty(_ code: String) -> APIError {
        APIError(.activityNotInParty, "you are not in the party \(code): start its activity with the code first (POST /v1/activities)")
    }
}
