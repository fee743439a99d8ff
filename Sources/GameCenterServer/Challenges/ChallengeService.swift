import Foundation
import GameCenterProtocol
import GameCenterStorage
import Logging

/// Challenges: players challenge each other on one of a game's leaderboards, as the manifest's `challenges` define.
/// A player creates one (inviting friends; anyone else joins with its code), joins, leaves, lists theirs and asks for a
/// rematch. Which scores count follows Apple's rules (``ChallengeDefinition/isRepeatable``) with the studio's attempts
/// and lengths; the server counts the attempts. Every counted score is pushed to every participant as it is stored
/// (``scoresStored(_:game:environment:playerID:)``), and the clock (``ChallengeClock``) sends the one-hour notice and
/// the end with the winners, each once across nodes.
struct ChallengeService: Sendable {
    let database: Database
    let bus: any EventBus
    let clock: ServerClock
    let occurrences: OccurrenceTracker
    let standings: ChallengeStandings
    /// Who may be in a running challenge, so that reports of players in none skip storage.
    let roster = ChallengeRoster()
    let logger: Logger

    /// The most running challenges one player may be in at once (invited or joined).
    static let runningPerPlayer = 100
    /// How long ended challenges stay in a player's list.
    static let endedListedMillis: Int64 = 30 * 86_400_000
    /// The most challenges one list holds.
    static let listLength = 50
    /// When the one-hour notice goes out, before the end.
    static let endingSoonMillis: Int64 = 3_600_000

    // MARK: Definitions

    /// The game's challenge definitions, texts in the device's locale.
    func definitions(device: DeviceIdentity) -> ChallengeDefinitionList {
        let game = device.game
        return ChallengeDefinitionList(
            definitions: game.challenges.map { definition in
                ChallengeDefinitionInfo(
                    identifier: definition.identifier, title: Localization.text(definition.title, locale: device.locale, fallback: game.defaultLocale),
                    details: definition.details.map { Localization.text($0, locale: device.locale, fallback: game.defaultLocale) },
                    leaderboard: definition.leaderboard, isRepeatable: definition.isRepeatable, durationOptions: definition.durations.map(Double.init),
                    attempts: definition.attempts, maxParticipants: definition.maxParticipants)
            })
    }

    // MARK: Creating

    /// Creates a challenge with the signed-in player as its first participant and invites `body.invite` (friends).
    func create(_ body: ChallengeCreateBody, device: DeviceIdentity, session: AuthenticatedSession) async throws -> ChallengeInfo {
        let game = device.game
        guard let definition = game.challenges.first(where: { $0.identifier == body.definition }) else {
            throw APIError.unknownChallengeDefinition(body.definition, known: game.challenges.map(\.identifier))
        }
        let invitees = body.invite ?? []
        try Self.checkInvitees(invitees, creator: session.playerID, definition: definition)
        let (occurrence, endsAt) = try schedule(definition, duration: body.durationSeconds, game: game)
        return try await start(
            definition, occurrence: occurrence, endsAt: endsAt, invitees: invitees, friendsOnly: true, rematchOf: nil, device: device, session: session)
    }

    /// Starts the same challenge again for its players: same definition and length (on a recurring board, the rest of
    /// the running occurrence), the asker joined and the others who had joined invited.
    func rematch(_ challengeID: String, device: DeviceIdentity, session: AuthenticatedSession) async throws -> ChallengeInfo {
        let (challenge, participants) = try await visible(challengeID, device: device, session: session)
        let game = device.game
        guard let definition = game.challenges.first(where: { $0.identifier == challenge.definition }) else {
            throw APIError.unknownChallengeDefinition(challenge.definition, known: game.challenges.map(\.identifier))
        }
        let invitees = participants.filter { $0.playerID != session.playerID && $0.status == ChallengeParticipantStatus.joined.rawValue }
            .map(\.playerID)
        let length = definition.durations.isEmpty ? nil : Double(challenge.endsAt - challenge.createdAt) / 1000
        let (occurrence, endsAt) = try schedule(
            definition, duration: length.map { length in Double(definition.durations.min { abs(Double($0) - length) < abs(Double($1) - length) }!) },
            game: game)
        // They played together: a rematch invites them whether or not they are friends.
        return try await start(
            definition, occurrence: occurrence, endsAt: endsAt, invitees: invitees, friendsOnly: false, rematchOf: challenge.challengeID, device: device,
            session: session)
    }

    private static func checkInvitees(_ invitees: [String], creator: String, definition: ChallengeDefinition) throws {
        guard invitees.count < definition.maxParticipants else {
            throw APIError.challengeInvalidRequest(
                "'\(definition.identifier)' takes \(definition.maxParticipants) players, you included; \(invitees.count) invitees are too many")
        }
        guard Set(invitees).count == invitees.count else { throw APIError.challengeInvalidRequest("an invitee is named twice") }
        guard !invitees.contains(creator) else { throw APIError.challengeInvalidRequest("you cannot invite yourself; you are in it already") }
    }

    /// When a new challenge of `definition` ends: on a recurring board, with the running occurrence; on a classic one,
    /// after `duration` (one of the definition's; default its first).
    private func schedule(_ definition: ChallengeDefinition, duration: Double?, game: Game) throws -> (occurrence: Int64?, endsAt: Int64) {
        let now = clock.nowMillis()
        guard let board = game.leaderboards.first(where: { $0.category == definition.leaderboard }) else {
            throw APIError.unknownCategory(definition.leaderboard, game: game)
        }
        if let recurrence = board.recurrence {
            guard duration == nil else {
                throw APIError.challengeInvalidRequest(
                    "a challenge on the recurring leaderboard '\(board.category)' lasts the rest of its occurrence; leave durationSeconds out")
            }
            guard let running = occurrences.running(recurrence, category: board.category, bundleID: game.bundleID, at: now) else {
                throw APIError.noOccurrence(
                    board.category,
                    next: recurrence.schedule.first(startingAfter: now).map { OccurrenceTracker.localTime($0.start, in: recurrence.schedule.timeZone) })
            }
            return (running.start, running.end)
        }
        let seconds = duration ?? Double(definition.durations[0])
        guard let length = definition.durations.first(where: { Double($0) == seconds }) else {
            throw APIError.challengeInvalidRequest(
                "durationSeconds is one of \(definition.durations.map(String.init).joined(separator: ", ")) for '\(definition.identifier)'; got \(seconds)")
        }
        return (nil, now + length * 1000)
    }

    private func start(
        _ definition: ChallengeDefinition, occurrence: Int64?, endsAt: Int64, invitees: [String], friendsOnly: Bool, rematchOf: String?,
        device: DeviceIdentity, session: AuthenticatedSession
    ) async throws -> ChallengeInfo {
        let game = device.game
        let now = clock.nowMillis()
        let creator = session.playerID
        let (challenge, participants) = try await database.write { storage in
            guard try await storage.runningChallengeCount(of: creator) < Self.runningPerPlayer else {
                throw APIError.challengeInvalidRequest("you are in \(Self.runningPerPlayer) running challenges, the most allowed; leave one first")
            }
            if friendsOnly {
                let friends = try await storage.friends(of: creator, among: invitees)
                if let stranger = invitees.first(where: { !friends.contains($0) }) { throw APIError.challengeNotFriends(stranger) }
            }
            var challenge = ChallengeRecord(
                challengeID: Credentials.newID(prefix: "ch_"), bundleID: game.bundleID, environment: device.environment.rawValue,
                definition: definition.identifier, category: definition.leaderboard, occurrence: occurrence, creatorID: creator, code: ChallengeCode.make(),
                createdAt: now, endsAt: endsAt, rematchOf: rematchOf,
                // A challenge shorter than the notice gets none.
                endingSoonAt: endsAt - now <= Self.endingSoonMillis ? now : nil)
            var attempts = 0
            while !(try await storage.insertChallenge(challenge)) {
                attempts += 1
                guard attempts < 5 else { throw APIError.challengeInvalidRequest("no free challenge code was found; try again") }
                challenge.code = ChallengeCode.make()
            }
            try await storage.joinChallenge(challengeID: challenge.challengeID, playerID: creator, afterScore: try await storage.lastScoreID(), now: now)
            try await storage.inviteToChallenge(challengeID: challenge.challengeID, playerIDs: invitees, now: now)
            let participants = try await storage.challengeParticipants(challengeID: challenge.challengeID)
            try await notify(.invited, by: creator, challenge, participants: participants, to: invitees, game: game, now: now, in: storage)
            return (challenge, participants)
        }
        publish(to: invitees)
        roster.add([Self.join(of: creator, in: challenge)])
        return try await info(challenge, participants: participants, device: device)
    }

    // MARK: Joining and leaving

    /// Joins a challenge the player was invited to (or had left).
    func join(_ challengeID: String, device: DeviceIdentity, session: AuthenticatedSession) async throws -> ChallengeInfo {
        try await join(device: device, session: session) { storage in
            guard let challenge = try await storage.challenge(id: challengeID), challenge.bundleID == device.game.bundleID,
                challenge.environment == device.environment.rawValue
            else { throw APIError.challengeNotFound }
            return (challenge, byCode: false)
        }
    }

    /// Joins the challenge with this code, invited or not.
    func join(code: String, device: DeviceIdentity, session: AuthenticatedSession) async throws -> ChallengeInfo {
        let code = try ChallengeCode.normalized(code)
        return try await join(device: device, session: session) { storage in
            guard let challenge = try await storage.challenge(code: code), challenge.bundleID == device.game.bundleID,
                challenge.environment == device.environment.rawValue
            else { throw APIError.challengeNotFound }
            return (challenge, byCode: true)
        }
    }

    private func join(
        device: DeviceIdentity, session: AuthenticatedSession, find: @escaping @Sendable (StorageSession) async throws -> (ChallengeRecord, byCode: Bool)
    ) async throws -> ChallengeInfo {
        let game = device.game
        let player = session.playerID
        let now = clock.nowMillis()
        let (challenge, participants) = try await database.write { storage in
            let (found, byCode) = try await find(storage)
            try await storage.lockChallenge(id: found.challengeID)
            // Read again under the lock: the clock may have ended it meanwhile.
            guard let challenge = try await storage.challenge(id: found.challengeID) else { throw APIError.challengeNotFound }
            guard challenge.endedAt == nil, challenge.endsAt > now else { throw APIError.challengeEnded }
            var participants = try await storage.challengeParticipants(challengeID: challenge.challengeID)
            let mine = participants.first { $0.playerID == player }
            if mine?.status == ChallengeParticipantStatus.joined.rawValue { return (challenge, participants) }
            guard byCode || mine != nil else { throw APIError.challengeNotInvited }
            let definition = game.challenges.first { $0.identifier == challenge.definition }
            let maximum = definition?.maxParticipants ?? 16
            let seats = participants.filter { $0.status != ChallengeParticipantStatus.left.rawValue && $0.playerID != player }.count
            guard seats < maximum else { throw APIError.challengeFull(maximum) }
            // An invitation counts already among the player's running challenges.
            let invited = mine?.status == ChallengeParticipantStatus.invited.rawValue
            guard try await storage.runningChallengeCount(of: player) < Self.runningPerPlayer + (invited ? 1 : 0) else {
                throw APIError.challengeInvalidRequest("you are in \(Self.runningPerPlayer) running challenges, the most allowed; leave one first")
            }
            try await storage.joinChallenge(challengeID: challenge.challengeID, playerID: player, afterScore: try await storage.lastScoreID(), now: now)
            participants = try await storage.challengeParticipants(challengeID: challenge.challengeID)
            try await notify(.joined, by: player, challenge, participants: participants, to: Self.told(participants), game: game, now: now, in: storage)
            return (challenge, participants)
        }
        publish(to: Self.told(participants))
        roster.add([Self.join(of: player, in: challenge)])
        return try await info(challenge, participants: participants, device: device)
    }

    /// Leaves a challenge (or declines an invitation): the player's scores no longer count.
    func leave(_ challengeID: String, device: DeviceIdentity, session: AuthenticatedSession) async throws -> ChallengeInfo {
        let (found, _) = try await visible(challengeID, device: device, session: session)
        let now = clock.nowMillis()
        let player = session.playerID
        let (challenge, participants, told) = try await database.write { storage in
            try await storage.lockChallenge(id: found.challengeID)
            guard let challenge = try await storage.challenge(id: found.challengeID) else { throw APIError.challengeNotFound }
            guard challenge.endedAt == nil else { throw APIError.challengeEnded }
            let before = try await storage.challengeParticipants(challengeID: challenge.challengeID)
            let told = Self.told(before)
            guard try await storage.leaveChallenge(challengeID: challenge.challengeID, playerID: player) else { return (challenge, before, [String]()) }
            let participants = try await storage.challengeParticipants(challengeID: challenge.challengeID)
            try await notify(.left, by: player, challenge, participants: participants, to: told, game: device.game, now: now, in: storage)
            return (challenge, participants, told)
        }
        publish(to: told)
        return try await info(challenge, participants: participants, device: device)
    }

    // MARK: Reading

    /// The signed-in player's challenges in the game: running ones and those ended in the last 30 days, newest first.
    func list(device: DeviceIdentity, session: AuthenticatedSession) async throws -> ChallengeList {
        let game = device.game
        return ChallengeList(
            challenges: try await overview(
                playerID: session.playerID, bundleID: game.bundleID, environment: device.environment, locale: device.locale, games: { _ in game }
            ).map(\.challenge))
    }

    /// A player's challenges in one game (nil: in every game), as ``list(device:session:)`` orders them, each with its
    /// game (nil when its manifest is gone).
    func overview(
        playerID: String, bundleID: String?, environment: Environment, locale: String, games: @escaping @Sendable (String) -> Game?
    ) async throws -> [(game: Game?, challenge: ChallengeInfo)] {
        let now = clock.nowMillis()
        let shown = try await database.read { storage in
            var shown: [(Game?, ChallengeRecord, [ChallengeParticipantRecord], [String: ChallengeStanding])] = []
            for challenge in try await storage.challenges(
                of: playerID, bundleID: bundleID, environment: environment.rawValue, endedSince: now - Self.endedListedMillis, limit: Self.listLength)
            {
                let game = games(challenge.bundleID)
                let participants = try await storage.challengeParticipants(challengeID: challenge.challengeID)
                shown.append(
                    (game, challenge, participants, try await ChallengeStandings.standings(challenge, participants: participants, game: game, in: storage)))
            }
            return shown
        }
        let order = { (info: ChallengeInfo) in (info.state == .open ? 0 : 1, -info.createdAt.timeIntervalSince1970) }
        return shown.map { game, challenge, participants, current in
            (game, standings.info(challenge, participants: participants, standings: current, game: game, locale: locale))
        }
        .sorted { order($0.challenge) < order($1.challenge) }
    }

    /// The game of the challenge with this id or code (the web app acts as that game's device), or nil.
    func bundleID(ofChallenge challengeID: String?, code: String? = nil) async throws -> String? {
        let code = try code.map(ChallengeCode.normalized)
        return try await database.read { storage in
            if let code { return try await storage.challenge(code: code)?.bundleID }
            guard let challengeID, challengeID.count <= 64 else { return nil }
            return try await storage.challenge(id: challengeID)?.bundleID
        }
    }

    /// One challenge the signed-in player is in (or was invited to).
    func challenge(_ challengeID: String, device: DeviceIdentity, session: AuthenticatedSession) async throws -> ChallengeInfo {
        let (challenge, participants) = try await visible(challengeID, device: device, session: session)
        return try await info(challenge, participants: participants, device: device)
    }

    /// A challenge of the device's game that the player is in, was invited to or left; others are not found.
    private func visible(_ challengeID: String, device: DeviceIdentity, session: AuthenticatedSession) async throws -> (
        ChallengeRecord, [ChallengeParticipantRecord]
    ) {
        guard challengeID.count <= 64 else { throw APIError.challengeNotFound }
        let found = try await database.read { storage -> (ChallengeRecord, [ChallengeParticipantRecord])? in
            guard let challenge = try await storage.challenge(id: challengeID) else { return nil }
            return (challenge, try await storage.challengeParticipants(challengeID: challengeID))
        }
        guard let (challenge, participants) = found, challenge.bundleID == device.game.bundleID, challenge.environment == device.environment.rawValue,
            participants.contains(where: { $0.playerID == session.playerID })
        else { throw APIError.challengeNotFound }
        return (challenge, participants)
    }

    private func info(_ challenge: ChallengeRecord, participants: [ChallengeParticipantRecord], device: DeviceIdentity) async throws -> ChallengeInfo {
        let game = device.game
        let current = try await database.read { storage in
            try await ChallengeStandings.standings(challenge, participants: participants, game: game, in: storage)
        }
        return standings.info(challenge, participants: participants, standings: current, game: game, locale: device.locale)
    }

    /// `playerID` in `challenge`, for the roster.
    static func join(of playerID: String, in challenge: ChallengeRecord) -> ChallengeJoin {
        ChallengeJoin(
            playerID: playerID, bundleID: challenge.bundleID, environment: challenge.environment, category: challenge.category, endsAt: challenge.endsAt)
    }

    // MARK: Notices

    /// The players a challenge's notices go to: those who joined and those invited.
    static func told(_ participants: [ChallengeParticipantRecord]) -> [String] {
        participants.filter { $0.status != ChallengeParticipantStatus.left.rawValue }.map(\.playerID)
    }

    /// Stores a ``ChallengeEventInfo`` of `kind` for each of `recipients` (`overtaken` instead for those in
    /// `overtaken`), in the game's default locale, with the standings (read again unless the caller has them); the
    /// caller publishes after the commit.
    func notify(
        _ kind: ChallengeEventKind, by playerID: String?, _ challenge: ChallengeRecord, participants: [ChallengeParticipantRecord], to recipients: [String],
        overtaken: Set<String> = [], standings known: [String: ChallengeStanding]? = nil, game: Game?, now: Int64, in storage: StorageSession
    ) async throws {
        guard !recipients.isEmpty else { return }
        var current = known ?? [:]
        if known == nil { current = try await ChallengeStandings.standings(challenge, participants: participants, game: game, in: storage) }
        let info = standings.info(challenge, participants: participants, standings: current, game: game, locale: game?.defaultLocale ?? "en")
        let payload = try EventLog.payload(ChallengeEventInfo(bundleID: challenge.bundleID, kind: kind, playerID: playerID, challenge: info))
        let overtakenPayload = try EventLog.payload(ChallengeEventInfo(bundleID: challenge.bundleID, kind: .overtaken, playerID: playerID, challenge: info))
        _ = try await storage.appendEvents(
            recipients.map { ($0, overtaken.contains($0) ? overtakenPayload : payload) }, kind: EventKind.challenge.rawValue, now: now)
    }

    /// Wakes the recipients' event streams (after the commit).
    func publish(to recipients: [String]) {
        for player in recipients { bus.publish(.playerEvents(playerID: player)) }
    }
}

extension APIError {
    static func unknownChallengeDefinition(_ identifier: String, known: [String]) -> APIError {
        APIError(
            .challengeUnknownDefinition,
            "this game has no challenge '\(identifier.prefix(100))'"
                + (known.isEmpty ? "; its manifest defines none" : "; it has \(known.prefix(10).joined(separator: ", "))"))
    }
    static func challengeInvalidRequest(_ message: String) -> APIError { APIError(.challengeInvalidRequest, message) }
    static let challengeNotFound = APIError(.challengeNotFound, "no challenge of this game has this id or code, or you are not in it")
    static let challengeNotInvited = APIError(
        .challengeNotInvited, "you were not invited to this challenge; join with its code (POST /v1/challenges/join)")
    static func challengeFull(_ maximum: Int) -> APIError { APIError(.challengeFull, "this challenge has \(maximum) players, the most it takes") }
    static let challengeEnded = APIError(.challengeEnded, "this challenge is over: it takes no more players or scores")
    static func challengeNotFriends(_ playerID: String) -> APIError {
        APIError(.challengeNotFriends, "\(playerID.prefix(64)) is not your friend: only friends can be invited; others join with the challenge's code")
    }
}
