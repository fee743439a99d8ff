import Foundation
import GameCenterProtocol
import Synchronization

/// A query for one page of a leaderboard: set the properties, then ``loadScores()``.
///
/// Scopes: `global` ranks everyone; `friendsOnly` ranks the local player and their friends among themselves;
/// a leaderboard made with `playerIDs` ranks those players among themselves (`playerScope` is ignored). Time
/// scopes are rolling windows: `today` counts reports of the last 24 hours, `week` of the last 7 days; a player's
/// entry is their best report in the window. Equal values rank by the earlier report first.
///
/// A recurring leaderboard (``type`` `.recurring`) starts empty at each occurrence of its schedule: a load reads the
/// running occurrence (or the last one when none runs), ``loadPreviousOccurrence()`` the one before, and ``startDate``,
/// ``nextStartDate`` and ``duration`` describe the occurrence loaded. A score counts in the occurrence running when the
/// server receives it; time scopes do not apply.
///
/// When a load fails, the error carries the last good result of the same query on this device, if there is
/// one (`error.partialResult(as: [GKScore].self)`), and `localPlayerScore`, `maxRange` and `title` keep it too.
public final class GKLeaderboard: Sendable {
    /// Which players are ranked.
    public enum PlayerScope: Sendable { case global, friendsOnly }
    /// Which reports count: rolling 24 hours, rolling 7 days, or all.
    public enum TimeScope: Sendable { case today, week, allTime }
    /// Whether the board ranks every score ever reported or starts again at each occurrence.
    public enum LeaderboardType: Sendable { case classic, recurring }

    private struct State {
        var category: String?
        var playerScope = PlayerScope.global
        var timeScope = TimeScope.allTime
        var range = 1...25
        var localPlayerScore: GKScore?
        var maxRange = 0
        var title: String?
        var type = LeaderboardType.classic
        var leaderboardDescription: String?
        /// The occurrence described: from the list, or the last load.
        var occurrence: LeaderboardOccurrence?
        /// The occurrence loads read (its start); nil: the current one.
        var pinnedOccurrence: Date?
        var ranksLifetimeBests = false
    }

    /// The players a leaderboard made with ``init(playerIDs:in:)`` ranks.
    public let playerIDs: [String]?
    private let state = Mutex(State())
    private let gameCenter: GKGameCenter

    /// A query of the whole board (or the friends' part of it) on this device.
    public init(in gameCenter: GKGameCenter = .default) {
        self.playerIDs = nil
        self.gameCenter = gameCenter
    }

    /// A query of these players' best scores (at most 100 players), ranked among themselves.
    public init(playerIDs: [String], in gameCenter: GKGameCenter = .default) {
        self.playerIDs = playerIDs
        self.gameCenter = gameCenter
    }

    /// The leaderboard; nil means the game's default one.
    public var category: String? {
        get { state.withLock { $0.category } }
        set { state.withLock { $0.category = newValue } }
    }
    /// Everyone, or the local player and their friends. Default `.global`.
    public var playerScope: PlayerScope {
        get { state.withLock { $0.playerScope } }
        set { state.withLock { $0.playerScope = newValue } }
    }
    /// Default `.allTime`.
    public var timeScope: TimeScope {
        get { state.withLock { $0.timeScope } }
        set { state.withLock { $0.timeScope = newValue } }
    }
    /// The ranks to load, 1-based, at most 100 wide. Default `1...25`.
    public var range: ClosedRange<Int> {
        get { state.withLock { $0.range } }
        set { state.withLock { $0.range = newValue } }
    }
    /// The local player's entry in this scope after the last load (nil when they have none).
    public var localPlayerScore: GKScore? { state.withLock { $0.localPlayerScore } }
    /// How many entries the scope held at the last load.
    public var maxRange: Int { state.withLock { $0.maxRange } }
    /// The leaderboard's title in the device's locale, after a load.
    public var title: String? { state.withLock { $0.title } }
    /// Classic or recurring, as the server said in ``loadLeaderboards(IDs:in:)`` or the last load.
    public var type: LeaderboardType { state.withLock { $0.type } }
    /// The manifest's description in the device's locale, from ``loadLeaderboards(IDs:in:)``.
    public var leaderboardDescription: String? { state.withLock { $0.leaderboardDescription } }
    /// Recurring boards: when the occurrence described starts; nil for classic boards.
    public var startDate: Date? { state.withLock { $0.occurrence?.start } }
    /// Recurring boards: when the next occurrence starts (nil when the schedule names none, or for classic boards).
    public var nextStartDate: Date? { state.withLock { $0.occurrence?.nextStart } }
    /// Recurring boards: how long the occurrence described lasts, in seconds (a daily board in a zone with daylight
    /// saving lasts 23 or 25 hours on the days clocks change); 0 for classic boards.
    public var duration: TimeInterval {
        state.withLock { state in state.occurrence.map { $0.end.timeIntervalSince($0.start) } ?? 0 }
    }
    /// Recurring boards: the occurrence described, with its times in the schedule's time zone.
    public var occurrence: LeaderboardOccurrence? { state.withLock { $0.occurrence } }
    /// Recurring boards whose manifest keeps lifetime bests: when true, loads rank each player's best over every
    /// occurrence instead of one occurrence. Default false.
    public var ranksLifetimeBests: Bool {
        get { state.withLock { $0.ranksLifetimeBests } }
        set { state.withLock { $0.ranksLifetimeBests = newValue } }
    }

    /// The game's leaderboards (hidden ones are never listed) with their type, description and, for recurring ones,
    /// their current occurrence; `IDs` keeps only these categories (nil: all).
    public static func loadLeaderboards(IDs: [String]?, in gameCenter: GKGameCenter = .default) async throws -> [GKLeaderboard] {
        let list = try await gameCenter.authenticated(.get, "/v1/leaderboards", as: LeaderboardList.self)
        return list.leaderboards.filter { IDs?.contains($0.category) ?? true }.map { info in
            let leaderboard = GKLeaderboard(in: gameCenter)
            leaderboard.state.withLock { state in
                state.category = info.category
                state.title = info.title
                state.type = info.kind == .recurring ? .recurring : .classic
                state.leaderboardDescription = info.description
                state.occurrence = info.occurrence
            }
            return leaderboard
        }
    }

    /// Loads ``loadLeaderboards(IDs:in:)`` and calls `completionHandler` with the result or the error.
    public static func loadLeaderboards(
        IDs: [String]?, in gameCenter: GKGameCenter = .default, completionHandler: @escaping @Sendable ([GKLeaderboard]?, (any Error)?) -> Void
    ) {
        CompletionHandler.run(completionHandler) { try await loadLeaderboards(IDs: IDs, in: gameCenter) }
    }

    /// A recurring board's previous occurrence: a leaderboard with the same category, scopes and range whose loads
    /// read the occurrence before the one this one describes, or the most recent one kept if there is none before.
    /// Describes that occurrence once it returns. A classic board answers itself.
    public func loadPreviousOccurrence() async throws -> GKLeaderboard {
        if state.withLock({ $0.occurrence == nil }) {
            if state.withLock({ $0.type == .classic && $0.title != nil }) { return self }
            _ = try await loadScores()
        }
        let current = state.withLock { $0 }
        guard let occurrence = current.occurrence else { return self }
        let previous = GKLeaderboard(playerIDs: playerIDs, in: gameCenter)
        previous.state.withLock { state in
            state = current
            state.localPlayerScore = nil
            state.maxRange = 0
            state.ranksLifetimeBests = false
            state.pinnedOccurrence = occurrence.previousStart ?? occurrence.start
        }
        _ = try await previous.loadScores()
        return previous
    }

    /// Loads the previous occurrence and calls `completionHandler` with it or the error.
    public func loadPreviousOccurrence(completionHandler: @escaping @Sendable (GKLeaderboard?, (any Error)?) -> Void) {
        CompletionHandler.run(completionHandler) { try await self.loadPreviousOccurrence() }
    }

    private init(playerIDs: [String]?, in gameCenter: GKGameCenter) {
        self.playerIDs = playerIDs
        self.gameCenter = gameCenter
    }

    /// Loads the entries whose ranks fall in `range`, best first.
    public func loadScores() async throws -> [GKScore] {
        let query = try makeQuery()
        let playerID = gameCenter.state.withLock { $0.session?.player.playerID }
        let key = playerID.map { LeaderboardPageKey(playerID: $0, query: query) }
        let page: LeaderboardPage
        do {
            page = try await gameCenter.authenticated(.post, "/v1/leaderboards/query", body: query, as: LeaderboardPage.self)
        } catch var error as GKError {
            if error.isTransient, let key, let last = gameCenter.state.withLock({ $0.leaderboardPages[key] }) {
                error.partialResult = show(last)
            }
            throw error
        }
        if let key { gameCenter.state.withLock { $0.leaderboardPages[key] = page } }
        return show(page)
    }

    /// Loads the scores and calls `completionHandler` with them (or the last good ones) and any error, as the
    /// seed's `loadScoresWithCompletionHandler:` does.
    public func loadScores(completionHandler: @escaping @Sendable ([GKScore]?, (any Error)?) -> Void) {
        CompletionHandler.run(completionHandler) { try await self.loadScores() }
    }

    /// The game's leaderboard categories (aggregates last) and their titles in the device's locale.
    ///
    /// When a load fails because the server cannot be reached (or is failing), the error carries the last answer this
    /// device loaded for the player: `error.partialResult(as: (categories: [String], titles: [String]).self)`.
    public static func loadCategories(in gameCenter: GKGameCenter = .default) async throws -> (categories: [String], titles: [String]) {
        try await gameCenter.loadKeepingLast("/v1/leaderboards", as: LeaderboardList.self) { list in
            (list.leaderboards.map(\.category), list.leaderboards.map(\.title))
        }
    }

    /// Loads the categories and titles and calls `completionHandler` once with them (or, after a failure, the last
    /// ones loaded, if any) and any error, as the seed's `loadCategoriesWithCompletionHandler:` does.
    public static func loadCategories(
        in gameCenter: GKGameCenter = .default, completionHandler: @escaping @Sendable ([String]?, [String]?, (any Error)?) -> Void
    ) {
        CompletionHandler.run({ loaded, error in completionHandler(loaded?.categories, loaded?.titles, error) }) {
            try await loadCategories(in: gameCenter)
        }
    }

    private func makeQuery() throws -> LeaderboardQuery {
        let current = state.withLock { $0 }
        guard current.range.lowerBound >= 1 else {
            throw GKError(.invalidParameter, "ranks start at 1; range starts at \(current.range.lowerBound)")
        }
        guard current.range.count <= Limits.maximumLeaderboardRange else {
            throw GKError(.invalidParameter, "a range is at most \(Limits.maximumLeaderboardRange) ranks wide; \(current.range) has \(current.range.count)")
        }
        if let playerIDs, playerIDs.count > Limits.maximumPlayerIDsPerRequest {
            throw GKError(.invalidParameter, "at most \(Limits.maximumPlayerIDsPerRequest) players per query; got \(playerIDs.count)")
        }
        return LeaderboardQuery(
            category: current.category,
            playerScope: current.playerScope == .global ? .global : .friendsOnly,
            timeScope: current.timeScope.wire,
            rangeStart: current.range.lowerBound, rangeLength: current.range.count, playerIDs: playerIDs,
            occurrence: current.ranksLifetimeBests ? nil : current.pinnedOccurrence, lifetimeBest: current.ranksLifetimeBests ? true : nil
        )
    }

    /// Takes a page's metadata and returns its scores.
    private func show(_ page: LeaderboardPage) -> [GKScore] {
        let local = page.localPlayerScore.map { GKScore(entry: $0, in: gameCenter) }
        state.withLock {
            $0.localPlayerScore = local
            $0.maxRange = page.maxRange
            $0.title = page.title
            if let occurrence = page.occurrence {
                $0.occurrence = occurrence
                $0.type = .recurring
            }
        }
        return page.scores.map { GKScore(entry: $0, in: gameCenter) }
    }
}

extension GKLeaderboard.TimeScope {
    /// The scope the server names `wire`.
    init(_ wire: LeaderboardTimeScope) {
        switch wire {
        case .today: self = .today
        case .week: self = .week
        case .allTime: self = .allTime
        }
    }

    /// The scope as the server names it.
    var wire: LeaderboardTimeScope {
        switch self {
        case .today: .today
        case .week: .week
        case .allTime: .allTime
        }
    }
}
