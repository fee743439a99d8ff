import Foundation
import GameCenterProtocol
import Synchronization

/// The turn timeout GameKit uses when a game names none: one week.
public let GKTurnTimeoutDefault: TimeInterval = 604_800
/// No turn timeout: the turn waits for its participant.
public let GKTurnTimeoutNone: TimeInterval = 0
/// The exchange timeout GameKit uses when a game names none: one day.
public let GKExchangeTimeoutDefault: TimeInterval = 86_400
/// No exchange timeout: the exchange waits for every reply.
public let GKExchangeTimeoutNone: TimeInterval = 0

/// A turn-based match: kept on the server for as long as its participants keep it, played one turn at a time by
/// whoever's turn it is, whether or not the others' games are running.
///
/// Every write in turn carries the match version this object read; when someone else changed the match first the
/// server refuses it (``GKError/Code/turnBasedInvalidTurn``) and overwrites nothing: load the match again and retry.
/// After each successful call this object shows the match as the server answered it.
public final class GKTurnBasedMatch: Sendable {
    /// GameKit's match states.
    public enum Status: Int, Sendable {
        case unknown = 0, open, ended, matching
    }

    /// A participant's result, with GameKit's raw values; custom outcomes are `customRange.rawValue | n` (n < 0x10000).
    public struct Outcome: RawRepresentable, Sendable, Hashable {
        /// GameKit's raw value.
        public var rawValue: Int
        /// An outcome from its raw value.
        public init(rawValue: Int) { self.rawValue = rawValue }

        /// No outcome yet.
        public static let none = Outcome(rawValue: 0)
        /// The participant quit.
        public static let quit = Outcome(rawValue: 1)
        /// The participant won.
        public static let won = Outcome(rawValue: 2)
        /// The participant lost.
        public static let lost = Outcome(rawValue: 3)
        /// The participant tied.
        public static let tied = Outcome(rawValue: 4)
        /// The participant's turn timed out.
        public static let timeExpired = Outcome(rawValue: 5)
        /// First place.
        public static let first = Outcome(rawValue: 6)
        /// Second place.
        public static let second = Outcome(rawValue: 7)
        /// Third place.
        public static let third = Outcome(rawValue: 8)
        /// Fourth place.
        public static let fourth = Outcome(rawValue: 9)
        /// The range of a game's own outcomes: `customRange.rawValue | n`, n below 0x10000.
        public static let customRange = Outcome(rawValue: 0xFF_0000)
    }

    private struct State {
        var info: TurnBasedMatchInfo
        var participants: [GKTurnBasedParticipant]
        var matchData: Data?
        var message: String?
    }

    let gameCenter: GKGameCenter
    private let state: Mutex<State>

    init(info: TurnBasedMatchInfo, in gameCenter: GKGameCenter) {
        self.gameCenter = gameCenter
        state = Mutex(State(info: info, participants: Self.participants(info), message: info.message))
    }

    private static func participants(_ info: TurnBasedMatchInfo) -> [GKTurnBasedParticipant] {
        info.participants.enumerated().map { GKTurnBasedParticipant(info: $1, index: $0, matchID: info.matchID) }
    }

    /// Shows `info`, a newer answer of the server; `data`, when given, is the match data the answered write stored.
    func update(_ info: TurnBasedMatchInfo, data: Data? = nil) {
        let participants = Self.participants(info)
        state.withLock { state in
            state.info = info
            state.participants = participants
            state.message = info.message
            if let data { state.matchData = data }
        }
    }

    var info: TurnBasedMatchInfo { state.withLock { $0.info } }

    /// The match's id on the server.
    public var matchID: String { info.matchID }
    /// When the match was started.
    public var creationDate: Date { info.createdAt }
    /// Open, ended, or matching (the seat whose turn it is waits for auto-match).
    public var status: Status { Status(rawValue: info.status) ?? .unknown }
    /// The seats, in turn order as the match was made.
    public var participants: [GKTurnBasedParticipant] { state.withLock { $0.participants } }
    /// The participant whose turn it is (nil once the match ended).
    public var currentParticipant: GKTurnBasedParticipant? {
        state.withLock { state in state.info.currentIndex.flatMap { state.participants.indices.contains($0) ? state.participants[$0] : nil } }
    }
    /// The match data as of the last ``loadMatchData()`` or write of this object; nil until then.
    public var matchData: Data? { state.withLock { $0.matchData } }
    /// The most bytes of match data a turn may store (the game's manifest).
    public var matchDataMaximumSize: Int { info.matchDataMaximumSize }
    /// The most bytes an exchange or reply may carry.
    public var exchangeDataMaximumSize: Int { info.exchangeDataMaximumSize }
    /// The most exchanges one player may have active at once.
    public var exchangeMaxInitiatedExchangesPerPlayer: Int { info.exchangeMaxInitiatedExchangesPerPlayer }
    /// The message shown with the match; the next write in turn sends it.
    public var message: String? {
        get { state.withLock { $0.message } }
        set { state.withLock { $0.message = newValue } }
    }
    /// The version of the match this object shows (every change makes a new one).
    public var version: Int64 { info.version }

    /// The exchanges not yet resolved; nil when there are none.
    public var exchanges: [GKTurnBasedExchange]? {
        let all = info.exchanges.map { GKTurnBasedExchange(info: $0, match: self) }
        return all.isEmpty ? nil : all
    }
    /// The exchanges still waiting for replies.
    public var activeExchanges: [GKTurnBasedExchange]? { exchanges?.filter { $0.status == .active } }
    /// The exchanges complete and waiting to be merged by the current participant (``saveMergedMatchData(_:withResolvedExchanges:)``).
    public var completedExchanges: [GKTurnBasedExchange]? { exchanges?.filter { $0.status == .complete } }

    /// Sets ``message`` from a localizable key and its arguments (`%@` placeholders filled in order).
    public func setLocalizableMessageWithKey(_ key: String, arguments: [String]?) {
        message = Self.localized(key, arguments)
    }

    static func localized(_ key: String, _ arguments: [String]?) -> String {
        var text = key
        for argument in arguments ?? [] {
            guard let range = text.range(of: "%@") else { break }
            text.replaceSubrange(range, with: argument)
        }
        return text
    }

    // MARK: Finding and loading

    /// Finds a match with an open seat fitting `request` (same size and group), or starts one with the local player
    /// first; invitees of the request get their invitation when the first turn ends, as GameKit's do.
    public static func find(for request: GKMatchRequest, in gameCenter: GKGameCenter = .default) async throws -> GKTurnBasedMatch {
        try request.check()
        let body = request.turnBasedBody()
        let info = try await gameCenter.authenticated(.post, "/v1/turn-matches", body: body, as: TurnBasedMatchInfo.self)
        return GKTurnBasedMatch(info: info, in: gameCenter)
    }

    /// ``find(for:in:)`` with a completion handler.
    public static func find(
        for request: GKMatchRequest, in gameCenter: GKGameCenter = .default,
        withCompletionHandler completionHandler: @escaping @Sendable (GKTurnBasedMatch?, (any Error)?) -> Void
    ) {
        CompletionHandler.run(completionHandler) { try await find(for: request, in: gameCenter) }
    }

    /// The match with `matchID`, if the local player takes part in it.
    public static func load(withID matchID: String, in gameCenter: GKGameCenter = .default) async throws -> GKTurnBasedMatch {
        GKTurnBasedMatch(info: try await gameCenter.authenticated(.get, path(matchID), as: TurnBasedMatchInfo.self), in: gameCenter)
    }

    /// ``load(withID:in:)`` with a completion handler.
    public static func load(
        withID matchID: String, in gameCenter: GKGameCenter = .default,
        withCompletionHandler completionHandler: @escaping @Sendable (GKTurnBasedMatch?, (any Error)?) -> Void
    ) {
        CompletionHandler.run(completionHandler) { try await load(withID: matchID, in: gameCenter) }
    }

    /// Every match of this game the local player takes part in and has not removed, oldest first.
    public static func loadMatches(in gameCenter: GKGameCenter = .default) async throws -> [GKTurnBasedMatch] {
        try await gameCenter.authenticated(.get, "/v1/turn-matches", as: TurnBasedMatchList.self).matches.map {
            GKTurnBasedMatch(info: $0, in: gameCenter)
        }
    }

    /// ``loadMatches(in:)`` with a completion handler.
    public static func loadMatches(
        in gameCenter: GKGameCenter = .default, withCompletionHandler completionHandler: @escaping @Sendable ([GKTurnBasedMatch]?, (any Error)?) -> Void
    ) {
        CompletionHandler.run(completionHandler) { try await loadMatches(in: gameCenter) }
    }

    /// Loads the match data (also into ``matchData``); nil when no turn stored any yet.
    @discardableResult
    public func loadMatchData() async throws -> Data? {
        let stored = try await gameCenter.authenticated(.get, Self.path(matchID) + "/data", as: Data.self)
        let data = stored.isEmpty ? nil : stored
        state.withLock { $0.matchData = data }
        return data
    }

    /// ``loadMatchData()`` with a completion handler.
    public func loadMatchData(completionHandler: @escaping @Sendable (Data?, (any Error)?) -> Void) {
        CompletionHandler.run({ (data: Data??, error) in completionHandler(data ?? nil, error) }) { try await self.loadMatchData() }
    }

    // MARK: The turn

    /// Stores `data` and passes the turn to the first of `next` who can take it (one who does not take it within
    /// `turnTimeout` seconds is passed over for the next; ``GKTurnTimeoutNone`` for no timeout).
    public func endTurn(withNextParticipants next: [GKTurnBasedParticipant], turnTimeout: TimeInterval, match data: Data) async throws {
        try await writeTurn(
            .endTurn, data: data, next: try indexes(of: next), timeout: turnTimeout,
            outcomes: participants.map { $0.status == .done ? $0.matchOutcome.rawValue : 0 })
    }

    /// Stores `data`; the turn stays the local player's.
    public func saveCurrentTurn(withMatch data: Data) async throws {
        try await writeTurn(.saveTurn, data: data)
    }

    /// Leaves the match in turn with `outcome`, storing `data` and passing the turn as ``endTurn(withNextParticipants:turnTimeout:match:)``.
    public func participantQuitInTurn(
        with outcome: Outcome, nextParticipants: [GKTurnBasedParticipant], turnTimeout: TimeInterval, match data: Data
    ) async throws {
        try await writeTurn(.quit, data: data, next: try indexes(of: nextParticipants), timeout: turnTimeout, outcome: outcome.rawValue)
    }

    /// Leaves the match with `outcome` while it is someone else's turn.
    public func participantQuitOutOfTurn(with outcome: Outcome) async throws {
        try await act(TurnBasedParticipantBody(action: .quit, outcome: outcome.rawValue))
    }

    /// Ends the match with `data`; every participant still playing must have a ``GKTurnBasedParticipant/matchOutcome``.
    public func endMatchInTurn(withMatch data: Data) async throws {
        try await writeTurn(.endMatch, data: data, outcomes: participants.map(\.matchOutcome.rawValue))
    }

    /// Ends the match as ``endMatchInTurn(withMatch:)`` does and, in the same transaction on the server, stores
    /// `scores` (the participants': ``GKScore/init(category:playerID:in:)`` for the others) and the local player's
    /// `achievements`: the end and the reports are kept together or not at all.
    public func endMatchInTurn(withMatch data: Data, scores: [GKScore], achievements: [GKAchievement]) async throws {
        try await writeTurn(
            .endMatch, data: data, outcomes: participants.map(\.matchOutcome.rawValue), scores: scores.map(\.report),
            achievements: achievements.map { AchievementReportBatch.Entry(identifier: $0.identifier, percentComplete: $0.percentComplete) })
    }

    /// Stores `data` merged with the completed `exchanges`, which are then resolved (and leave ``exchanges``).
    public func saveMergedMatchData(_ data: Data, withResolvedExchanges exchanges: [GKTurnBasedExchange]) async throws {
        try await writeTurn(.saveMerged, data: data, resolved: exchanges.map(\.exchangeID))
    }

    /// A new match of the same players: the local player starts it, the others are invited.
    public func rematch() async throws -> GKTurnBasedMatch {
        GKTurnBasedMatch(info: try await gameCenter.authenticated(.post, Self.path(matchID) + "/rematch", as: TurnBasedMatchInfo.self), in: gameCenter)
    }

    /// Hides the match from the local player's list; allowed once the match ended or the player left it.
    public func remove() async throws {
        try await act(TurnBasedParticipantBody(action: .remove))
    }

    /// Accepts the invitation to this match.
    public func acceptInvite() async throws -> GKTurnBasedMatch {
        try await act(TurnBasedParticipantBody(action: .accept))
        return self
    }

    /// Declines the invitation; the seat goes back to auto-match.
    public func declineInvite() async throws {
        try await act(TurnBasedParticipantBody(action: .decline))
    }

    /// Reminds `participants` that the match waits for them (once a minute per match; sooner fails with
    /// `communicationsFailure` and the server's code `turn.reminder_too_soon`, saying when to retry).
    public func sendReminder(to participants: [GKTurnBasedParticipant], localizableMessageKey key: String, arguments: [String]) async throws {
        try await act(TurnBasedParticipantBody(action: .remind, recipients: try indexes(of: participants), message: Self.localized(key, arguments)))
    }

    // MARK: Exchanges

    /// Sends `data` to `participants` outside the turn order; each replies within `timeout` seconds (or the exchange
    /// completes with the replies it has).
    public func sendExchange(
        to participants: [GKTurnBasedParticipant], data: Data, localizableMessageKey key: String, arguments: [String], timeout: TimeInterval
    ) async throws -> GKTurnBasedExchange {
        guard data.count <= exchangeDataMaximumSize else {
            throw GKError(.turnBasedMatchDataTooLarge, "exchange data is \(data.count) bytes; this game allows at most \(exchangeDataMaximumSize)")
        }
        let body = TurnBasedExchangeBody(recipients: try indexes(of: participants), data: data, message: Self.localized(key, arguments), timeout: timeout)
        let sent = try await gameCenter.authenticated(.post, Self.path(matchID) + "/exchanges", body: body, as: TurnBasedExchangeSent.self)
        update(sent.match)
        return GKTurnBasedExchange(info: sent.exchange, match: self)
    }

    func answer(_ exchangeID: String, _ body: TurnBasedExchangeAnswerBody) async throws {
        if body.data.count > exchangeDataMaximumSize {
            throw GKError(.turnBasedMatchDataTooLarge, "a reply is \(body.data.count) bytes; this game allows at most \(exchangeDataMaximumSize)")
        }
        let path = Self.path(matchID) + "/exchanges/" + pathComponent(exchangeID)
        update(try await gameCenter.authenticated(.post, path, body: body, as: TurnBasedMatchInfo.self))
    }

    // MARK: Requests

    private func writeTurn(
        _ action: TurnBasedTurnBody.Action, data: Data, next: [Int] = [], timeout: TimeInterval = 0, outcome: Int = 0, outcomes: [Int] = [],
        resolved: [String] = [], scores: [ScoreReport] = [], achievements: [AchievementReportBatch.Entry] = []
    ) async throws {
        guard data.count <= matchDataMaximumSize else {
            throw GKError(.turnBasedMatchDataTooLarge, "match data is \(data.count) bytes; this game allows at most \(matchDataMaximumSize)")
        }
        let body = TurnBasedTurnBody(
            action: action, version: version, matchData: data, message: message, nextParticipants: next, turnTimeout: timeout, outcome: outcome,
            outcomes: outcomes, resolvedExchangeIDs: resolved, scores: scores, achievements: achievements)
        let info = try await gameCenter.authenticated(.post, Self.path(matchID) + "/turn", body: body, as: TurnBasedMatchInfo.self)
        update(info, data: data)
    }

    private func act(_ body: TurnBasedParticipantBody) async throws {
        update(try await gameCenter.authenticated(.post, Self.path(matchID) + "/participant", body: body, as: TurnBasedMatchInfo.self))
    }

    /// The seat indexes of `participants`, which must be this match's.
    private func indexes(of participants: [GKTurnBasedParticipant]) throws -> [Int] {
        try participants.map { participant in
            guard participant.matchID == matchID else {
                throw GKError(.turnBasedInvalidParticipant, "a participant of match \(participant.matchID) was named in match \(matchID)")
            }
            return participant.index
        }
    }

    static func path(_ matchID: String) -> String { "/v1/turn-matches/" + pathComponent(matchID) }
}

extension GKMatchRequest {
    func turnBasedBody() -> TurnBasedFindBody {
        let body = body(requestID: "turn", hosted: false)
        return TurnBasedFindBody(
            minPlayers: body.minPlayers, maxPlayers: body.maxPlayers, playerGroup: body.playerGroup, playersToInvite: body.playersToInvite,
            inviteMessage: body.inviteMessage)
    }
}
