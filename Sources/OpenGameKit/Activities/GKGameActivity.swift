import Foundation
import GameCenterProtocol
import Synchronization

/// One play of an activity by the local player (Apple's `GKGameActivity`, iOS 26): started, paused, resumed and
/// ended, alone or in a party that others join with its ``partyCode``. Players who share a code are matched together
/// by ``findMatch()``: the party's host first, with the host's friends in the party kept in the host's match.
///
/// Scores and achievement progress set on the activity are reported when it ends (``end()``), through the device's
/// outbox like any report.
public final class GKGameActivity: Sendable {
    /// Where an activity is.
    public enum State: Sendable, Equatable {
        /// Chosen in the Game Center app (a party joined there) and not started here yet: ``start()`` it.
        case initialized
        case active
        case paused
        case ended
    }

    private struct Pending {
        var info: ActivityInfo {
            didSet { loadedAt = Date() }
        }
        /// When ``info`` arrived (its active time counts up to then).
        var loadedAt = Date()
        var scores: [String: (value: Int64, context: UInt64)] = [:]
        var achievements: [String: Double] = [:]
    }

    /// The definition this activity plays.
    public let activityDefinition: GKGameActivityDefinition
    private let pending: Mutex<Pending>
    private let gameCenter: GKGameCenter

    init(_ info: ActivityInfo, definition: GKGameActivityDefinition, in gameCenter: GKGameCenter) {
        activityDefinition = definition
        pending = Mutex(Pending(info: info))
        self.gameCenter = gameCenter
    }

    // MARK: Party codes

    /// The characters of a party code that is not all digits (upper-case letters and digits, without `0`, `1`, `I`
    /// and `O`).
    public static var validPartyCodeAlphabet: [String] { PartyCode.alphabet.map(String.init) }

    /// Whether `partyCode` has the format of a party code: two parts of the same length (2 to 6 characters) joined by
    /// `-`, all digits or all from ``validPartyCodeAlphabet`` (upper case).
    public static func isValidPartyCode(_ partyCode: String) -> Bool { PartyCode.isValid(partyCode) }

    // MARK: Starting

    /// Starts an activity of `definition`: in the party with `partyCode` (letters in either case) when a live party of
    /// the game has it, else in a new party with that code that the local player hosts; without a code, a definition
    /// that supports party codes gets a new party with a code the server makes, and others are played alone.
    public static func start(definition: GKGameActivityDefinition, partyCode: String? = nil, in gameCenter: GKGameCenter = .default) async throws
        -> GKGameActivity
    {
        if let partyCode, PartyCode.normalized(partyCode) == nil {
            throw GKError(.invalidParameter, "'\(partyCode.prefix(20))' is not a party code: \(PartyCode.formatDescription)")
        }
        let body = ActivityStartBody(definition: definition.identifier, partyCode: partyCode)
        let info = try await gameCenter.authenticated(.post, "/v1/activities", body: body, as: ActivityInfo.self)
        gameCenter.pendingActivities.remove(info.activityID)
        return GKGameActivity(info, definition: definition, in: gameCenter)
    }

    /// Activities the local player chose in the Game Center app (a party joined there) that this game has not started
    /// yet; also sent as ``GKGameCenterEvent/wantsToPlay(_:)`` events. Kept until started, so none is lost before the
    /// game listens.
    public static func pendingGameActivities(in gameCenter: GKGameCenter = .default) async throws -> [GKGameActivity] {
        let waiting = gameCenter.pendingActivities.all
        guard !waiting.isEmpty else { return [] }
        let definitions = try await GKGameActivityDefinition.loadGameActivityDefinitions(in: gameCenter)
        return waiting.compactMap { info in
            definitions.first { $0.identifier == info.definition }.map { GKGameActivity(info, definition: $0, in: gameCenter) }
        }
    }

    // MARK: What it is

    /// The activity's id on the server.
    public var identifier: String { pending.withLock { $0.info.activityID } }
    /// Where the activity is, as last loaded or changed here.
    public var state: State {
        switch pending.withLock({ $0.info.state }) {
        case .initialized: .initialized
        case .active: .active
        case .paused: .paused
        case .ended: .ended
        }
    }
    /// The party's code, to share with other players, while the party takes players (nil alone, or once its host ended
    /// it).
    public var partyCode: String? { pending.withLock { $0.info.partyCode } }
    /// The Game Center app's page that joins the party, to share as a link.
    public var partyURL: URL? {
        guard let code = partyCode else { return nil }
        var components = URLComponents(url: gameCenter.api.server, resolvingAgainstBaseURL: false)
        components?.path = "/party"
        components?.queryItems = [URLQueryItem(name: "code", value: code)]
        return components?.url
    }
    /// The player who started the party.
    public var partyHostID: String? { pending.withLock { $0.info.partyHostID } }
    /// The players in the party as last loaded, in the order they joined.
    public var partyPlayerIDs: [String] { pending.withLock { $0.info.partyPlayerIDs } }
    /// The definition's default properties with those set for this activity.
    public var properties: [String: String] { pending.withLock { $0.info.properties } }
    /// When it was made (started on a device, or chosen in the Game Center app).
    public var creationDate: Date { pending.withLock { $0.info.createdAt } }
    /// When it was first started (nil while ``State/initialized``).
    public var startDate: Date? { pending.withLock { $0.info.startedAt } }
    /// The last time it was started or resumed (nil while paused or ended).
    public var lastResumeDate: Date? { pending.withLock { $0.info.resumedAt } }
    /// When it ended (nil until then).
    public var endDate: Date? { pending.withLock { $0.info.endedAt } }
    /// How long it has been active, pauses left out.
    public var duration: TimeInterval {
        pending.withLock { state in
            state.info.activeSeconds + (state.info.resumedAt == nil ? 0 : max(0, Date().timeIntervalSince(state.loadedAt)))
        }
    }

    // MARK: Changing it

    /// Starts an activity chosen in the Game Center app (``State/initialized``).
    public func start() async throws { try await change(to: .active) }

    /// Pauses the activity (its ``duration`` stops growing).
    public func pause() async throws { try await change(to: .paused) }

    /// Resumes a paused activity.
    public func resume() async throws { try await change(to: .active) }

    /// Ends the activity and reports the scores and achievement progress set on it. A host ending their party's
    /// activity closes the party to new players.
    public func end() async throws {
        try await change(to: .ended)
        let (scores, achievements) = pending.withLock { state in
            defer { (state.scores, state.achievements) = ([:], [:]) }
            return (state.scores, state.achievements)
        }
        if !scores.isEmpty {
            try await GKScore.report(
                scores.sorted { $0.key < $1.key }.map { category, score in
                    let report = GKScore(category: category, in: gameCenter)
                    report.value = score.value
                    report.context = score.context
                    return report
                })
        }
        if !achievements.isEmpty {
            try await GKAchievement.report(
                achievements.sorted { $0.key < $1.key }.map { identifier, percent in
                    let achievement = GKAchievement(identifier: identifier, in: gameCenter)
                    achievement.percentComplete = percent
                    return achievement
                })
        }
    }

    /// The activity as the server has it now (its party's players, its state).
    public func reload() async throws {
        let info = try await gameCenter.authenticated(.get, "/v1/activities/\(identifier)", as: ActivityInfo.self)
        pending.withLock { $0.info = info }
    }

    private func change(to state: ActivityState) async throws {
        let info = try await gameCenter.authenticated(
            .post, "/v1/activities/\(identifier)/state", body: ActivityStateBody(state: state), as: ActivityInfo.self)
        pending.withLock { $0.info = info }
        gameCenter.pendingActivities.remove(info.activityID)
    }

    // MARK: Scores and achievements

    /// Sets the score reported on the leaderboard `category` when the activity ends.
    public func setScore(on category: String, to value: Int64, context: UInt64 = 0) {
        pending.withLock { $0.scores[category] = (value, context) }
    }

    /// The score set on `category`, if any.
    public func score(on category: String) -> Int64? { pending.withLock { $0.scores[category]?.value } }

    /// Forgets the scores set on these leaderboards.
    public func removeScores(from categories: [String]) {
        pending.withLock { state in for category in categories { state.scores.removeValue(forKey: category) } }
    }

    /// Sets the progress (0…100) reported for the achievement when the activity ends.
    public func setProgress(on achievementID: String, to percentComplete: Double) {
        pending.withLock { $0.achievements[achievementID] = percentComplete }
    }

    /// Sets the achievement completed when the activity ends.
    public func setAchievementCompleted(_ achievementID: String) { setProgress(on: achievementID, to: 100) }

    /// The progress set on the achievement, if any.
    public func progress(on achievementID: String) -> Double? { pending.withLock { $0.achievements[achievementID] } }

    /// Forgets the progress set on these achievements.
    public func removeAchievements(_ achievementIDs: [String]) {
        pending.withLock { state in for identifier in achievementIDs { state.achievements.removeValue(forKey: identifier) } }
    }

    // MARK: Matches

    /// A request for a match of the activity: its definition's sizes, and its party (only the party's players are
    /// matched with it). Nil when the activity is not played as a match (its definition has no `maxPlayers` of 2 or
    /// more), or when its party no longer takes players (its host ended it).
    public func makeMatchRequest() -> GKMatchRequest? {
        guard let most = activityDefinition.maxPlayers, most >= 2, partyHostID == nil || partyCode != nil else { return nil }
        let request = GKMatchRequest(minPlayers: max(2, activityDefinition.minPlayers ?? 2), maxPlayers: most)
        request.partyCode = partyCode
        return request
    }

    /// Finds a relayed match of the activity: with a party, among the party's players.
    public func findMatch() async throws -> GKMatch {
        try await gameCenter.matchmaker.findMatch(for: try matchRequest())
    }

    /// Finds players for a hosted match of the activity: with a party, among the party's players.
    public func findPlayersForHostedMatch() async throws -> [String] {
        try await gameCenter.matchmaker.findPlayersForHostedMatch(for: try matchRequest())
    }

    /// ``makeMatchRequest()``, or why there is none.
    private func matchRequest() throws -> GKMatchRequest {
        if let request = makeMatchRequest() { return request }
        guard partyHostID == nil || partyCode != nil else {
            throw GKError(.matchRequestInvalid, "the party of this activity takes no more matches: its host ended it (or it is a day old)")
        }
        throw GKError(.matchRequestInvalid, "'\(activityDefinition.identifier)' is not played as a match (its manifest sets no maxPlayers of 2 or more)")
    }
}

/// Activities the player chose in the Game Center app, kept until the game starts them (at most 16, newest kept).
final class PendingActivities: Sendable {
    private let waiting = Mutex<[ActivityInfo]>([])

    var all: [ActivityInfo] { waiting.withLock { $0 } }

    func add(_ info: ActivityInfo) {
        waiting.withLock { waiting in
            waiting.removeAll { $0.activityID == info.activityID }
            waiting.append(info)
            if waiting.count > 16 { waiting.removeFirst(waiting.count - 16) }
        }
    }

    func remove(_ activityID: String) {
        waiting.withLock { $0.removeAll { $0.activityID == activityID } }
    }
}

extension GKGameCenter {
    /// An activity event from the realtime channel: kept (a choice made in the Game Center app) and told to the game.
    /// The event carries the definition's identifier only, so the definitions are loaded first.
    func deliverActivity(_ event: ActivityEventInfo) {
        if event.kind == .wantsToPlay { pendingActivities.add(event.activity) }
        Task {
            guard let definition = try? await GKGameActivityDefinition.loadGameActivityDefinitions(IDs: [event.activity.definition], in: self).first
            else { return }
            let activity = GKGameActivity(event.activity, definition: definition, in: self)
            switch event.kind {
            case .wantsToPlay: eventHub.publish(.wantsToPlay(activity))
            case .playerJoined: eventHub.publish(.partyPlayerJoined(playerID: event.playerID ?? "", activity: activity))
            }
        }
    }
}
