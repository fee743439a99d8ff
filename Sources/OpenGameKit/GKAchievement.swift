import Foundation
import GameCenterProtocol
import Synchronization

/// The local player's progress on one achievement. Report it; load the stored progress; reset it all.
///
/// The server enforces the seed's rules: progress is 0…100 and never goes down (reporting 30 after 50 keeps 50),
/// any report reveals a hidden achievement (even 0.0), and 100 completes it. After a report or load this object
/// holds what the server stored. A report that cannot reach the server is kept in the device's outbox and
/// re-sent automatically: the thrown error then has `queued == true`.
///
/// `Codable`, so games can archive it; decoding attaches it to the device in
/// `decoder.userInfo[GKGameCenter.codingUserInfoKey]`, or to `GKGameCenter.default`.
public final class GKAchievement: Codable, Sendable, CustomStringConvertible {
    private struct State {
        var percentComplete: Double
        var completedAt: Date?
        var lastReportedDate: Date?
    }

    /// The achievement's identifier in the game's manifest.
    public let identifier: String
    private let state: Mutex<State>
    private let gameCenter: GKGameCenter

    /// A new achievement object with no progress, for the given device.
    public init(identifier: String, in gameCenter: GKGameCenter = .default) {
        self.identifier = identifier
        self.state = Mutex(State(percentComplete: 0))
        self.gameCenter = gameCenter
    }

    init(progress: AchievementProgress, in gameCenter: GKGameCenter) {
        self.identifier = progress.identifier
        self.state = Mutex(State(percentComplete: progress.percentComplete, completedAt: progress.completedAt, lastReportedDate: progress.lastReportedAt))
        self.gameCenter = gameCenter
    }

    /// Progress, 0…100. Set it, then ``report()``.
    public var percentComplete: Double {
        get { state.withLock { $0.percentComplete } }
        set { state.withLock { $0.percentComplete = newValue } }
    }

    /// Whether the server has recorded 100 percent.
    public var isCompleted: Bool { state.withLock { $0.completedAt != nil } }
    /// When the achievement was completed, if it was.
    public var completedDate: Date? { state.withLock { $0.completedAt } }
    /// Achievements the player has progress on are revealed, so this is false for loaded and reported ones.
    public var isHidden: Bool { false }
    /// When progress was last reported, per the server.
    public var lastReportedDate: Date? { state.withLock { $0.lastReportedDate } }

    public var description: String { "\(identifier): \(percentComplete) %\(isCompleted ? " (completed)" : "")" }

    /// Reports this achievement's progress.
    public func report() async throws {
        try await Self.report([self])
    }

    /// Reports this achievement's progress and calls `completionHandler` once with nil or the error, as the seed's
    /// `reportAchievementWithCompletionHandler:` does (a queued report's error has `queued == true`).
    public func report(completionHandler: @escaping @Sendable ((any Error)?) -> Void) {
        CompletionHandler.run(completionHandler) { try await self.report() }
    }

    /// Reports several achievements of one device in one request, applied all or none.
    public static func report(_ achievements: [GKAchievement]) async throws {
        guard let device = achievements.first?.gameCenter else { return }
        guard achievements.allSatisfy({ $0.gameCenter === device }) else {
            throw GKError(.invalidParameter, "achievements reported together must belong to one GKGameCenter")
        }
        let entries = achievements.map { AchievementReportBatch.Entry(identifier: $0.identifier, percentComplete: $0.percentComplete) }
        if let bad = entries.first(where: { !$0.percentComplete.isFinite || !(0...100).contains($0.percentComplete) }) {
            throw GKError(.invalidParameter, "percentComplete of '\(bad.identifier)' is \(bad.percentComplete); it must be 0 to 100")
        }
        let batch = AchievementReportBatch(reportID: UUID().uuidString, achievements: entries)
        let list = try await device.sendReport("/v1/achievements", body: batch, reportID: batch.reportID, as: AchievementReportResult.self)
        let stored = Dictionary(uniqueKeysWithValues: list.achievements.map { ($0.identifier, $0) })
        for achievement in achievements {
            guard let progress = stored[achievement.identifier] else { continue }
            achievement.state.withLock {
                $0 = State(percentComplete: progress.percentComplete, completedAt: progress.completedAt, lastReportedDate: progress.lastReportedAt)
            }
        }
    }

    /// Reports several achievements of one device in one request and calls `completionHandler` once with nil or the
    /// error.
    public static func report(_ achievements: [GKAchievement], completionHandler: @escaping @Sendable ((any Error)?) -> Void) {
        CompletionHandler.run(completionHandler) { try await report(achievements) }
    }

    /// The local player's achievements with progress in this game (the ones ever reported).
    ///
    /// When a load fails because the server cannot be reached (or is failing), the error carries the last
    /// achievements this device loaded for the player: `error.partialResult(as: [GKAchievement].self)`.
    public static func loadAchievements(in gameCenter: GKGameCenter = .default) async throws -> [GKAchievement] {
        try await gameCenter.loadKeepingLast("/v1/achievements", as: AchievementList.self) { list in
            list.achievements.map { GKAchievement(progress: $0, in: gameCenter) }
        }
    }

    /// Loads the local player's achievements and calls `completionHandler` once with them (or, after a failure, the
    /// last ones loaded, if any) and any error, as the seed's `loadAchievementsWithCompletionHandler:` does.
    public static func loadAchievements(
        in gameCenter: GKGameCenter = .default, completionHandler: @escaping @Sendable ([GKAchievement]?, (any Error)?) -> Void
    ) {
        CompletionHandler.run(completionHandler) { try await loadAchievements(in: gameCenter) }
    }

    /// A friend's completed achievements in this game and their points; strangers get `invalidPlayer`.
    public static func loadCompletedAchievements(
        forPlayer playerID: String, in gameCenter: GKGameCenter = .default
    ) async throws -> (achievements: [GKAchievement], points: Int) {
        let list = try await gameCenter.authenticated(.get, "/v1/players/\(pathComponent(playerID))/achievements", as: AchievementList.self)
        return (list.achievements.map { GKAchievement(progress: $0, in: gameCenter) }, list.points)
    }

    /// Loads a friend's completed achievements and points and calls `completionHandler` once with them, or nil and
    /// the error.
    public static func loadCompletedAchievements(
        forPlayer playerID: String, in gameCenter: GKGameCenter = .default,
        completionHandler: @escaping @Sendable ((achievements: [GKAchievement], points: Int)?, (any Error)?) -> Void
    ) {
        CompletionHandler.run(completionHandler) { try await loadCompletedAchievements(forPlayer: playerID, in: gameCenter) }
    }

    /// The local player's achievement points in this game.
    public static func loadPoints(in gameCenter: GKGameCenter = .default) async throws -> Int {
        try await gameCenter.authenticated(.get, "/v1/achievements", as: AchievementList.self).points
    }

    /// Loads the local player's achievement points and calls `completionHandler` once with them, or nil and the error.
    public static func loadPoints(in gameCenter: GKGameCenter = .default, completionHandler: @escaping @Sendable (Int?, (any Error)?) -> Void) {
        CompletionHandler.run(completionHandler) { try await loadPoints(in: gameCenter) }
    }

    /// Erases the local player's progress in this game; hidden achievements are hidden again.
    public static func resetAchievements(in gameCenter: GKGameCenter = .default) async throws {
        _ = try await gameCenter.authenticated(.delete, "/v1/achievements", as: APIClient.Empty.self)
    }

    /// Erases the local player's progress in this game and calls `completionHandler` once with nil or the error, as
    /// the seed's `resetAchievementsWithCompletionHandler:` does.
    public static func resetAchievements(in gameCenter: GKGameCenter = .default, completionHandler: @escaping @Sendable ((any Error)?) -> Void) {
        CompletionHandler.run(completionHandler) { try await resetAchievements(in: gameCenter) }
    }

    private enum CodingKeys: String, CodingKey {
        case identifier, percentComplete, completedDate, lastReportedDate
    }

    public convenience init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let device = decoder.userInfo[GKGameCenter.codingUserInfoKey] as? GKGameCenter ?? .default
        self.init(identifier: try container.decode(String.self, forKey: .identifier), in: device)
        let percent = try container.decode(Double.self, forKey: .percentComplete)
        let completed = try container.decodeIfPresent(Date.self, forKey: .completedDate)
        let reported = try container.decodeIfPresent(Date.self, forKey: .lastReportedDate)
        state.withLock { $0 = State(percentComplete: percent, completedAt: completed, lastReportedDate: reported) }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        let current = state.withLock { $0 }
        try container.encode(identifier, forKey: .identifier)
        try container.encode(current.percentComplete, forKey: .percentComplete)
        try container.encodeIfPresent(current.completedAt, forKey: .completedDate)
        try container.encodeIfPresent(current.lastReportedDate, forKey: .lastReportedDate)
    }
}

extension GKGameCenter {
    /// Put a device here in a decoder's `userInfo` to decode `GKAchievement`s (and scores) for it.
    public static let codingUserInfoKey = CodingUserInfoKey(rawValue: "OpenGameKit.GKGameCenter")!
}
