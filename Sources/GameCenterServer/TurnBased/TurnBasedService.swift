import Foundation
import GameCenterProtocol
import GameCenterStorage
import Logging

/// Turn-based matches: each change reads the match, applies one ``TurnCommand`` to its ``TurnMatchState``, and writes
/// it back only if nobody wrote in between (else it reads again), in one transaction with the events that tell the
/// participants. The events are the players' durable event streams, so a device that was away catches up from its
/// cursor and a lost push costs a delay, never a turn.
struct TurnBasedService: Sendable {
    let database: Database
    let bus: any EventBus
    let clock: ServerClock
    let registry: GameRegistry
    /// Ranks the scores reported with a match's end.
    let leaderboards: LeaderboardService
    let logger: Logger

    /// How often a change is tried again when another write to the same match came first.
    static let attempts = 16
    /// Matches the clock moves on per pass.
    static let duePerPass = 200

    // MARK: Reading

    /// The caller's matches in the device's game, oldest first.
    func matches(device: DeviceIdentity, session: AuthenticatedSession) async throws -> [TurnBasedMatchInfo] {
        let records = try await database.read { try await $0.turnMatches(playerID: session.playerID, bundleID: device.game.bundleID) }
        return try records.compactMap { record in
            let state = try Self.state(record)
            return state.isVisible(to: session.playerID) ? Self.info(state, settings: device.game.turnBased) : nil
        }
    }

    /// One match the caller sees.
    func match(id: String, device: DeviceIdentity, session: AuthenticatedSession) async throws -> TurnBasedMatchInfo {
        Self.info(try await visibleState(id: id, device: device, session: session), settings: device.game.turnBased)
    }

    /// The match's data.
    func matchData(id: String, device: DeviceIdentity, session: AuthenticatedSession) async throws -> Data {
        _ = try await visibleState(id: id, device: device, session: session)
        return try await database.read { try await $0.turnMatchData(id: id) } ?? Data()
    }

    private func visibleState(id: String, device: DeviceIdentity, session: AuthenticatedSession) async throws -> TurnMatchState {
        guard Self.isValidID(id), let record = try await database.read({ try await $0.turnMatch(id: id) }), record.bundleID == device.game.bundleID
        else { throw APIError.turnNoSuchMatch }
        let state = try Self.state(record)
        guard state.isVisible(to: session.playerID) else { throw APIError.turnNoSuchMatch }
        return state
    }

    /// A match as the Game Center app lists it: its state, and the aliases of its players.
    struct Overview: Sendable {
        var state: TurnMatchState
        var settings: TurnBasedSettings
    }

    /// The matches of every game `playerID` sees (the newest 200), with the aliases of everyone in them.
    func overview(playerID: String) async throws -> (matches: [Overview], aliases: [String: String]) {
        let records = try await database.read { try await $0.turnMatches(playerID: playerID, limit: 200) }
        let matches = try records.compactMap { record -> Overview? in
            let state = try Self.state(record)
            guard state.isVisible(to: playerID) else { return nil }
            return Overview(state: state, settings: registry.game(bundleID: state.bundleID)?.turnBased ?? TurnBasedSettings())
        }
        let ids = Array(Set(matches.flatMap { $0.state.seats.compactMap(\.playerID) }))
        let players = try await database.read { try await $0.players(ids: ids, environment: nil) }
        return (matches, Dictionary(players.map { ($0.playerID, $0.alias) }, uniquingKeysWith: { first, _ in first }))
    }

    /// Accepts or declines `playerID`'s invitation to match `id` (the Game Center app's buttons).
    func answerInvitation(id: String, playerID: String, accept: Bool) async throws {
        try await change(id, in: nil, accept ? .accept(player: playerID) : .decline(player: playerID))
    }

    /// `playerID` asked in the Game Center app to leave match `id`: their game hears `quitRequested` (GameKit's
    /// `wantsToQuitMatch`) and quits with the outcome it chooses; the match does not change until it does.
    func requestQuit(id: String, playerID: String) async throws {
        guard Self.isValidID(id), let record = try await database.read({ try await $0.turnMatch(id: id) }) else { throw APIError.turnNoSuchMatch }
        let state = try Self.state(record)
        guard state.isVisible(to: playerID), let seat = state.seatIndex(of: playerID) else { throw APIError.turnNoSuchMatch }
        guard state.status != .ended, state.seats[seat].status == .active else {
            throw APIError(.turnInvalidState, "only a player still playing a running match can leave it")
        }
        let settings = registry.game(bundleID: state.bundleID)?.turnBased ?? TurnBasedSettings()
        let event = TurnBasedEventInfo(
            kind: .quitRequested, match: Self.info(state, settings: settings, exchangeData: false), actorIndex: seat, becameActive: false)
        let payload = try EventLog.payload(event)
        let now = clock.nowMillis()
        _ = try await database.write { try await $0.appendEvents([(playerID, payload)], kind: EventKind.turnBased.rawValue, now: now) }
        bus.publish(.playerEvents(playerID: playerID))
    }

    // MARK: Finding and starting

    /// Puts the caller in the oldest fitting match with an open seat, or starts a match (always, when inviting).
    func find(_ body: TurnBasedFindBody, device: DeviceIdentity, session: AuthenticatedSession) async throws -> TurnBasedMatchInfo {
        let sizes = Limits.matchPlayers
        guard sizes.contains(body.minPlayers), sizes.contains(body.maxPlayers), body.minPlayers <= body.maxPlayers else {
            throw APIError.matchRequestInvalid(
                "minPlayers \(body.minPlayers) and maxPlayers \(body.maxPlayers): turn-based matches have \(sizes.lowerBound) to \(sizes.upperBound) players, minPlayers at most maxPlayers"
            )
        }
        let player = session.playerID
        let invitees = body.playersToInvite.isEmpty ? [] : try PlayerIDRules.list(body.playersToInvite)
        guard !invitees.contains(player) else { throw APIError.inviteSelf }
        guard invitees.count < body.maxPlayers else {
            throw APIError.matchRequestInvalid(
                "\(invitees.count) players invited, but a match of at most \(body.maxPlayers) has room for \(body.maxPlayers - 1) besides you")
        }
        let message = try body.inviteMessage.map(FriendService.message)
        let (game, environment) = (device.game, device.environment.rawValue)
        try await database.read { storage in
            try await MatchRequestRules.checkInvitees(invitees, of: player, environment: environment, in: storage)
            try await Self.checkPlaying(player, below: game.turnBased.openMatchesPerPlayer, of: game.bundleID, in: storage)
        }
        if invitees.isEmpty {
            let candidates = try await database.read { storage in
                try await storage.turnMatchesWithOpenSeats(
                    bundleID: game.bundleID, environment: environment, playerGroup: Int64(body.playerGroup), seats: body.maxPlayers,
                    excluding: player, limit: 8)
            }
            for matchID in candidates {
                do {
                    let state = try await change(matchID, in: game, .join(player: player), playingLimit: (player, game.turnBased.openMatchesPerPlayer))
                    return Self.info(state, settings: game.turnBased)
                } catch let error as APIError where error.code == .turnInvalidState || error.code == .turnNoSuchMatch {
                    continue  // Filled, ended or gone meanwhile: the next one.
                }
            }
        }
        let state = TurnMatchState(
            matchID: Credentials.newID(prefix: "t_"), bundleID: game.bundleID, creator: player, seats: body.maxPlayers, invitees: invitees,
            playerGroup: body.playerGroup, inviteMessage: message, now: clock.nowMillis())
        let record = try Self.record(state, environment: environment)
        let limit = game.turnBased.openMatchesPerPlayer
        try await database.write { storage in
            // Checked again where it counts: two finds at once cannot both take the last allowed match.
            try await Self.checkPlaying(player, below: limit, of: game.bundleID, in: storage)
            try await storage.insertTurnMatch(record, data: Data(), members: Self.members(state))
        }
        return Self.info(state, settings: game.turnBased)
    }

    /// Refuses when `player` already plays `limit` matches of the game.
    private static func checkPlaying(_ player: String, below limit: Int, of bundleID: String, in storage: StorageSession) async throws {
        let playing = try await storage.playingTurnMatchCount(playerID: player, bundleID: bundleID)
        guard playing < limit else { throw APIError.turnTooManyMatches(limit) }
    }

    /// A new match of the same players, the caller first with the turn and the others invited.
    func rematch(id: String, device: DeviceIdentity, session: AuthenticatedSession) async throws -> TurnBasedMatchInfo {
        let old = try await visibleState(id: id, device: device, session: session)
        guard old.status == .ended else { throw APIError(.turnInvalidState, "only an ended match can be played again") }
        let others = old.seats.compactMap { $0.playerID }.filter { $0 != session.playerID }
        let state = TurnMatchState(
            matchID: Credentials.newID(prefix: "t_"), bundleID: old.bundleID, creator: session.playerID, seats: old.seats.count,
            invitees: others, playerGroup: old.playerGroup, inviteMessage: nil, now: clock.nowMillis())
        let record = try Self.record(state, environment: device.environment.rawValue)
        try await database.write { try await $0.insertTurnMatch(record, data: Data(), members: Self.members(state)) }
        return Self.info(state, settings: device.game.turnBased)
    }

    // MARK: Changing

    /// Applies a turn's write (`endTurn`, `saveTurn`, `quit`, `endMatch`, `saveMerged`).
    func turn(id: String, _ body: TurnBasedTurnBody, device: DeviceIdentity, session: AuthenticatedSession) async throws -> TurnBasedMatchInfo {
        let player = session.playerID
        let (size, timeout) = (body.matchData.count, try Self.millis(body.turnTimeout))
        let command: TurnCommand =
            switch body.action {
            case .endTurn:
                .endTurn(
                    player: player, version: body.version, next: body.nextParticipants, timeoutMillis: timeout, dataSize: size, message: body.message,
                    outcomes: body.outcomes)
            case .saveTurn: .saveTurn(player: player, version: body.version, dataSize: size)
            case .quit:
                .quitInTurn(
                    player: player, version: body.version, outcome: body.outcome, next: body.nextParticipants, timeoutMillis: timeout, dataSize: size,
                    message: body.message)
            case .endMatch: .endMatch(player: player, version: body.version, dataSize: size, outcomes: body.outcomes, message: body.message)
            case .saveMerged: .saveMerged(player: player, version: body.version, dataSize: size, resolved: body.resolvedExchangeIDs)
            }
        let reports = try Self.endReports(
            body, game: device.game, environment: device.environment.rawValue, player: player, now: clock.nowMillis(),
            occurrences: leaderboards.index.occurrences)
        let state = try await change(id, in: device.game, command, data: body.matchData, reports: reports)
        return Self.info(state, settings: device.game.turnBased)
    }

    /// Ends a match of `game` as the studio's game server decides (`turns:write`): every seat still in play gets its
    /// outcome, the participants hear `matchEnded` from the server (no acting seat). `version` must be the stored one.
    func arbitrate(id: String, _ body: TurnBasedArbitration, game: Game) async throws -> TurnBasedMatchInfo {
        let state = try await change(id, in: game, .arbitrate(version: body.version, outcomes: body.outcomes, message: body.message))
        return Self.info(state, settings: game.turnBased)
    }

    /// The scores and achievements of an `endMatch`, checked against the game before anything is read; nil when none.
    static func endReports(
        _ body: TurnBasedTurnBody, game: Game, environment: String, player: String, now: Int64, occurrences: OccurrenceTracker
    ) throws -> TurnEndReports? {
        guard !body.scores.isEmpty || !body.achievements.isEmpty else { return nil }
        guard body.action == .endMatch else {
            throw APIError.turnInvalidRequest("scores and achievements are reported only with the match's end (endMatch)")
        }
        guard body.scores.count <= Limits.maximumScoresPerReport else {
            throw APIError.invalidParameter("a match's end reports at most \(Limits.maximumScoresPerReport) scores; this one has \(body.scores.count)")
        }
        let dating = try ScoreDating(now: now, deviceTime: nil)
        var scores: [String: [NewScore]] = [:]
        for score in body.scores {
            scores[score.playerID ?? player, default: []].append(
                try LeaderboardService.newScore(
                    score, game: game, environment: environment, dating: dating, occurrences: occurrences))
        }
        var achievements: [AchievementReportEntry] = []
        if !body.achievements.isEmpty {
            try AchievementService.validate(AchievementReportBatch(reportID: "match-end", achievements: body.achievements), game: game)
            achievements = try body.achievements.map { entry in
                let completed = AchievementCompleted(bundleID: game.bundleID, identifier: entry.identifier, completedAt: StoredTime.date(now))
                return AchievementReportEntry(
                    identifier: entry.identifier, percent: entry.percentComplete,
                    completionEvent: entry.percentComplete >= 100 ? try EventLog.payload(completed) : "")
            }
        }
        return TurnEndReports(scores: scores, achievements: achievements, environment: environment, player: player)
    }

    /// A participant's act out of turn (accept, decline, quit, remove, remind); answers the match as it is after it
    /// (after the last player removed it, as it was when it was forgotten).
    func participant(id: String, _ body: TurnBasedParticipantBody, device: DeviceIdentity, session: AuthenticatedSession) async throws
        -> TurnBasedMatchInfo
    {
        let player = session.playerID
        let command: TurnCommand =
            switch body.action {
            case .accept: .accept(player: player)
            case .decline: .decline(player: player)
            case .quit: .quitOutOfTurn(player: player, outcome: body.outcome)
            case .remove: .remove(player: player)
            case .remind: .remind(player: player, recipients: body.recipients, message: body.message)
            }
        let state = try await change(id, in: device.game, command)
        return Self.info(state, settings: device.game.turnBased)
    }

    /// Starts an exchange; answers it and the match.
    func sendExchange(id: String, _ body: TurnBasedExchangeBody, device: DeviceIdentity, session: AuthenticatedSession) async throws
        -> TurnBasedExchangeSent
    {
        let command = TurnCommand.sendExchange(
            player: session.playerID, recipients: body.recipients, data: body.data, message: body.message, timeoutMillis: try Self.millis(body.timeout))
        let state = try await change(id, in: device.game, command)
        guard let exchange = state.exchanges.last(where: { $0.sender == state.seatIndex(of: session.playerID) }) else {
            throw APIError.internalError
        }
        return TurnBasedExchangeSent(exchange: Self.info(exchange), match: Self.info(state, settings: device.game.turnBased))
    }

    /// Replies to or cancels an exchange.
    func answerExchange(
        id: String, exchangeID: String, _ body: TurnBasedExchangeAnswerBody, device: DeviceIdentity, session: AuthenticatedSession
    ) async throws -> TurnBasedMatchInfo {
        let command: TurnCommand =
            switch body.action {
            case .reply: .reply(player: session.playerID, exchangeID: exchangeID, data: body.data, message: body.message)
            case .cancel: .cancel(player: session.playerID, exchangeID: exchangeID, message: body.message)
            }
        let state = try await change(id, in: device.game, command)
        return Self.info(state, settings: device.game.turnBased)
    }

    /// Moves on every match whose turn or exchange timed out by the server's clock; returns how many changed.
    @discardableResult
    func expireDue() async throws -> Int {
        let due = try await database.read { [now = clock.nowMillis()] in try await $0.turnMatchesDue(now: now, limit: Self.duePerPass) }
        var changed = 0
        for matchID in due {
            do {
                _ = try await change(matchID, in: nil, .expire)
                changed += 1
            } catch let error as APIError where error.code == .turnNoSuchMatch {
                continue  // Removed meanwhile.
            }
        }
        return changed
    }

    /// Applies `command` to match `matchID` of `game` (nil: whichever game, for the clock) with compare-and-set on
    /// its version, retrying when another write came first; stores `data` with it. The match is read and the command
    /// applied outside the transaction (the compare-and-set makes that safe), so the transaction only writes: the
    /// state, the data, the events it causes (announced on the bus after the commit) and an end's reports.
    @discardableResult
    /// `playingLimit` (a join) refuses the change when the player already plays that many of the game's matches,
    /// counted in the transaction.
    private func change(
        _ matchID: String, in game: Game?, _ command: TurnCommand, data: Data? = nil, reports: TurnEndReports? = nil,
        playingLimit: (player: String, limit: Int)? = nil
    ) async throws -> TurnMatchState {
        guard Self.isValidID(matchID) else { throw APIError.turnNoSuchMatch }
        for _ in 0..<Self.attempts {
            let now = clock.nowMillis()
            guard let record = try await database.read({ try await $0.turnMatch(id: matchID) }), game == nil || record.bundleID == game?.bundleID
            else { throw APIError.turnNoSuchMatch }
            let before = try Self.state(record)
            var state = before
            let settings = game?.turnBased ?? registry.game(bundleID: before.bundleID)?.turnBased ?? TurnBasedSettings()
            let notices = try state.apply(command, now: now, limits: settings)
            guard state.version != before.version else { return state }
            let write = try TurnWrite(before: before, after: state, environment: record.environment, notices: notices, settings: settings)
            let after = state
            let store: @Sendable (StorageSession) async throws -> (told: Set<String>, stored: TurnEndReports.Stored)? = { storage in
                if let playingLimit {
                    try await Self.checkPlaying(playingLimit.player, below: playingLimit.limit, of: after.bundleID, in: storage)
                }
                guard try await write.store(expectedVersion: record.version, data: data, now: now, in: storage) else { return nil }
                var told = write.told
                let stored = try await reports?.store(for: after, now: now, in: storage) ?? .init()
                if stored.completedAchievements, let player = reports?.player { told.insert(player) }
                return (told, stored)
            }
            // Most turns are one statement on PostgreSQL (see `TurnWrite.keepsMembers`), which needs no transaction.
            let oneStatement = write.keepsMembers && playingLimit == nil && reports == nil
            let outcome = try await oneStatement ? database.writeStatement(store) : database.write(store)
            guard let outcome else { continue }
            for player in outcome.told { bus.publish(.playerEvents(playerID: player)) }
            if let reports { leaderboards.rank(outcome.stored.scores, bundleID: state.bundleID, environment: reports.environment) }
            return state
        }
        logger.warning("a turn-based match changed under every attempt", metadata: ["match": "\(matchID)"])
        throw APIError.storageUnavailable
    }

    // MARK: Shapes

    static func isValidID(_ id: String) -> Bool { (1...64).contains(id.count) }

    /// Seconds from the wire as milliseconds.
    static func millis(_ seconds: Double) throws -> Int64 {
        guard seconds.isFinite, seconds >= 0, seconds <= Double(TurnBasedSettings.maximumTimeoutMillis) / 1000 else {
            throw APIError.turnInvalidRequest("a timeout must be 0 (none) to 90 days (7776000 seconds); got \(seconds)")
        }
        return Int64((seconds * 1000).rounded())
    }

    static func state(_ record: TurnMatchRecord) throws -> TurnMatchState {
        try JSONDecoder().decode(TurnMatchState.self, from: Data(record.state.utf8))
    }

    static func record(_ state: TurnMatchState, environment: String) throws -> TurnMatchRecord {
        TurnMatchRecord(
            matchID: state.matchID, bundleID: state.bundleID, environment: environment, version: state.version, status: state.status.rawValue,
            seats: state.seats.count, playerGroup: Int64(state.playerGroup), openSeats: state.openSeats, deadline: state.deadline,
            createdAt: state.createdAt, state: String(decoding: try JSONEncoder().encode(state), as: UTF8.self))
    }

    static func members(_ state: TurnMatchState) -> [TurnMatchMember] {
        state.seats.compactMap { seat in
            guard let player = seat.playerID, !seat.removed, seat.status != .declined else { return nil }
            return TurnMatchMember(playerID: player, playing: state.status != .ended && seat.isPlaying)
        }
    }

    static func info(_ state: TurnMatchState, settings: TurnBasedSettings, exchangeData: Bool = true) -> TurnBasedMatchInfo {
        let date = { (millis: Int64) in StoredTime.date(millis) }
        return TurnBasedMatchInfo(
            matchID: state.matchID, bundleID: state.bundleID, createdAt: date(state.createdAt), status: state.status.rawValue, version: state.version,
            participants: state.seats.enumerated().map { index, seat in
                TurnBasedParticipantInfo(
                    playerID: seat.playerID, status: seat.status.rawValue, outcome: seat.outcome, lastTurnDate: seat.lastTurnAt.map(date),
                    timeoutDate: index == state.current ? state.turnDeadline.map(date) : nil)
            },
            currentIndex: state.current, message: state.message, matchDataSize: state.matchDataSize, matchDataMaximumSize: settings.matchDataBytes,
            exchangeDataMaximumSize: settings.exchangeDataBytes, exchangeMaxInitiatedExchangesPerPlayer: settings.exchangesPerPlayer,
            exchanges: state.exchanges.map { info($0, data: exchangeData) })
    }

    static func info(_ exchange: TurnMatchState.Exchange) -> TurnBasedExchangeInfo { info(exchange, data: true) }

    static func info(_ exchange: TurnMatchState.Exchange, data: Bool) -> TurnBasedExchangeInfo {
        TurnBasedExchangeInfo(
            exchangeID: exchange.id, senderIndex: exchange.sender, recipientIndexes: exchange.recipients, data: data ? exchange.data : Data(),
            message: exchange.message, sendDate: StoredTime.date(exchange.sentAt), timeoutDate: exchange.timeoutAt.map(StoredTime.date),
            completionDate: exchange.completedAt.map(StoredTime.date), status: exchange.status.rawValue,
            replies: exchange.replies.map {
                TurnBasedExchangeReplyInfo(
                    recipientIndex: $0.recipient, data: data ? $0.data : Data(), message: $0.message, replyDate: StoredTime.date($0.repliedAt))
            })
    }
}

/// The scores and achievement progress reported with a match's end, checked against the game; stored in the
/// transaction that ends the match, so that they and the end are kept together or not at all.
struct TurnEndReports: Sendable {
    /// Scores by the participant they are for.
    var scores: [String: [NewScore]]
    /// The caller's achievement progress.
    var achievements: [AchievementReportEntry]
    var environment: String
    /// The participant who ends the match.
    var player: String

    /// What was stored.
    struct Stored: Sendable {
        var scores: [ScoreRecord] = []
        var completedAchievements = false
    }

    /// Stores them for the match `state` ended; every score must be a participant's.
    func store(for state: TurnMatchState, now: Int64, in storage: StorageSession) async throws -> Stored {
        var stored = Stored()
        let reportID = "turn-\(state.matchID)-\(state.version)"
        for (player, scores) in scores.sorted(by: { $0.key < $1.key }) {
            guard state.seatIndex(of: player) != nil else {
                throw APIError.turnInvalidParticipant("a score names \(player), who is not a participant of this match")
            }
            stored.scores +=
                try await storage.reportScores(
                    reportID: reportID, scores, bundleID: state.bundleID, environment: environment, playerID: player, now: now) ?? []
        }
        if !achievements.isEmpty {
            let outcome = try await storage.reportAchievements(
                reportID: reportID, achievements, bundleID: state.bundleID, playerID: player, eventKind: EventKind.achievementCompleted.rawValue,
                now: now)
            stored.completedAchievements = !outcome.newlyCompleted.isEmpty
        }
        return stored
    }
}
