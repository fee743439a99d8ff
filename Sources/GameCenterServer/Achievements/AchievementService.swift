import Foundation
import GameCenterProtocol
import GameCenterStorage

/// The achievement rules of the seed, enforced here whatever a client sends: progress 0…100 that never goes
/// down, hidden achievements revealed by any report, completion at 100, reset, and points from the manifest.
struct AchievementService: Sendable {
    let database: Database
    let bus: any EventBus
    let clock: ServerClock
    let metrics: ServerMetrics
    let limiter: RateLimiter

    /// The game's achievements localized for the device; hidden ones stay blank until the player reports on them.
    func descriptions(device: DeviceIdentity, session: AuthenticatedSession) async throws -> [AchievementDescriptionInfo] {
        let game = device.game
        let reported = Set(
            try await database.read {
                try await $0.achievementProgress(bundleID: game.bundleID, playerID: session.playerID)
            }.map(\.identifier))
        return game.achievements.map { achievement in
            guard !achievement.hidden || reported.contains(achievement.identifier) else {
                return AchievementDescriptionInfo(
                    identifier: achievement.identifier, title: "", unachievedDescription: "",
                    achievedDescription: "", maximumPoints: 0, isHidden: true, hasImage: false)
            }
            let locale = device.locale
            return AchievementDescriptionInfo(
                identifier: achievement.identifier,
                title: Localization.text(achievement.title, locale: locale, fallback: game.defaultLocale),
                unachievedDescription: Localization.text(achievement.unachievedDescription, locale: locale, fallback: game.defaultLocale),
                achievedDescription: Localization.text(achievement.achievedDescription, locale: locale, fallback: game.defaultLocale),
                maximumPoints: achievement.points, isHidden: achievement.hidden, hasImage: achievement.image != nil
            )
        }
    }

    /// The completed image of a revealed achievement.
    func image(identifier: String, device: DeviceIdentity, session: AuthenticatedSession) async throws -> Data {
        guard let achievement = device.game.achievements.first(where: { $0.identifier == identifier }) else {
            throw APIError.unknownAchievement(identifier)
        }
        if achievement.hidden {
            let reported = try await database.read {
                try await $0.achievementProgress(bundleID: device.game.bundleID, playerID: session.playerID)
            }.contains { $0.identifier == identifier }
            guard reported else { throw APIError.unknownAchievement(identifier) }
        }
        guard let image = achievement.image else { throw APIError.noAchievementImage(identifier) }
        return image
    }

    /// The caller's progress in the device's game.
    func progress(device: DeviceIdentity, playerID: String) async throws -> AchievementList {
        let records = try await database.read { try await $0.achievementProgress(bundleID: device.game.bundleID, playerID: playerID) }
        return Self.list(records, game: device.game)
    }

    /// The points of the achievements `playerID` completed in `games`, in one read. Achievements removed from a
    /// manifest since they were completed are worth nothing now.
    func points(playerID: String, in games: [Game]) async throws -> Int {
        let completed = try await database.read { try await $0.completedAchievements(playerID: playerID, bundleIDs: games.map(\.bundleID)) }
        return games.reduce(0) { total, game in
            let points = Dictionary(uniqueKeysWithValues: game.achievements.map { ($0.identifier, $0.points) })
            return total + (completed[game.bundleID] ?? []).reduce(0) { $0 + (points[$1] ?? 0) }
        }
    }

    /// Applies a batch atomically: every entry is checked first, then all are stored in one transaction (on
    /// PostgreSQL, one statement). Answers the reported achievements' stored progress; a batch whose `reportID` was
    /// applied before changes nothing and answers their current state.
    func report(_ batch: AchievementReportBatch, device: DeviceIdentity, session: AuthenticatedSession) async throws -> AchievementReportResult {
        try Self.validate(batch, game: device.game)
        try limiter.take(.reports, for: session.playerID, cost: batch.achievements.count)
        return try await store(batch, game: device.game, playerID: session.playerID)
    }

    /// Applies progress a studio's game server reported for `playerID`, as a device's report is applied (once per
    /// `reportID`).
    func serverReport(_ batch: AchievementReportBatch, game: Game, playerID: String) async throws -> AchievementReportResult {
        try Self.validate(batch, game: game)
        return try await store(batch, game: game, playerID: playerID)
    }

    private func store(_ batch: AchievementReportBatch, game: Game, playerID: String) async throws -> AchievementReportResult {
        let now = clock.nowMillis()
        let completion = { (identifier: String) in AchievementCompleted(bundleID: game.bundleID, identifier: identifier, completedAt: StoredTime.date(now)) }
        let entries = try batch.achievements.map { entry in
            AchievementReportEntry(
                identifier: entry.identifier, percent: entry.percentComplete,
                completionEvent: entry.percentComplete >= 100 ? try EventLog.payload(completion(entry.identifier)) : "")
        }
        let outcome = try await database.reportAchievements(
            reportID: batch.reportID, entries, bundleID: game.bundleID, playerID: playerID,
            eventKind: EventKind.achievementCompleted.rawValue, now: now)
        if outcome.applied { metrics.achievementReports.increment(by: batch.achievements.count) }
        if !outcome.newlyCompleted.isEmpty { bus.publish(.playerEvents(playerID: playerID)) }
        return AchievementReportResult(achievements: outcome.progress.map(Self.progress))
    }

    /// Erases the caller's progress in the device's game (and environment, which the player belongs to).
    func reset(device: DeviceIdentity, session: AuthenticatedSession) async throws {
        _ = try await reset(game: device.game, playerID: session.playerID)
    }

    /// Erases a player's progress in `game` (the player's own reset, or the studio's); returns how many achievements
    /// had progress.
    func reset(game: Game, playerID: String) async throws -> Int {
        try await database.write { storage in
            try await storage.lockPlayer(playerID)
            return try await storage.resetAchievements(bundleID: game.bundleID, playerID: playerID)
        }
    }

    /// A friend's completed achievements in the device's game; strangers get `invalidPlayer`.
    func friendAchievements(of playerID: String, device: DeviceIdentity, session: AuthenticatedSession) async throws -> AchievementList {
        if playerID != session.playerID {
            let isFriend = try await database.read { try await $0.friends(of: session.playerID, among: [playerID]) }.contains(playerID)
            guard isFriend else { throw APIError.notAFriendsAchievements(playerID) }
        }
        let list = try await progress(device: device, playerID: playerID)
        return AchievementList(achievements: list.achievements.filter { $0.completedAt != nil }, points: list.points)
    }

    static func validate(_ batch: AchievementReportBatch, game: Game) throws {
        try LeaderboardService.validateReportID(batch.reportID)
        guard (1...100).contains(batch.achievements.count) else {
            throw APIError.invalidParameter("a report holds 1 to 100 achievements; this one holds \(batch.achievements.count)")
        }
        let known = Set(game.achievements.map(\.identifier))
        for entry in batch.achievements {
            guard known.contains(entry.identifier) else { throw APIError.unknownAchievement(entry.identifier) }
            guard entry.percentComplete.isFinite, (0...100).contains(entry.percentComplete) else {
                throw APIError.invalidPercent(entry.percentComplete, of: entry.identifier)
            }
        }
    }

    static func progress(_ record: AchievementProgressRecord) -> AchievementProgress {
        AchievementProgress(
            identifier: record.identifier, percentComplete: record.percent,
            completedAt: record.completedAt.map(StoredTime.date), lastReportedAt: StoredTime.date(record.lastReportedAt))
    }

    static func list(_ records: [AchievementProgressRecord], game: Game) -> AchievementList {
        let points = Dictionary(uniqueKeysWithValues: game.achievements.map { ($0.identifier, $0.points) })
        return AchievementList(
            achievements: records.map(progress),
            // Achievements removed from the manifest since they were completed are worth nothing now.
            points: records.filter { $0.completedAt != nil }.reduce(0) { $0 + (points[$1.identifier] ?? 0) }
        )
    }
}

extension APIError {
    /// A progress outside 0…100 (or not a number).
    static func invalidPercent(_ percent: Double, of identifier: String) -> APIError {
        APIError(.achievementInvalidPercent, "percentComplete of '\(identifier)' is \(percent); it must be 0 to 100")
    }
    static func unknownAchievement(_ identifier: String) -> APIError {
        let shown = identifier.count <= 100 ? identifier : String(identifier.prefix(100)) + "…"
        return APIError(.achievementUnknown, "this game has no achievement '\(shown)'")
    }
    static func noAchievementImage(_ identifier: String) -> APIError {
        APIError(.achievementNoImage, "achievement '\(identifier)' has no completed image")
    }
    static func notAFriendsAchievements(_ playerID: String) -> APIError {
        APIError(.achievementNotAFriend, "only friends can compare achievements; \(playerID) is not your friend")
    }
}
