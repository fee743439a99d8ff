import Foundation
import GameCenterProtocol
import GameCenterStorage
import Logging
import ServiceLifecycle
import Synchronization

/// The server's clock acting on recurring leaderboards: every ``interval`` it records, for each recurring board and
/// environment, that the running occurrence started and that the last one ended, with its final standings. Each is
/// recorded once (a unique key in storage), whichever node sees it first; when every node was down at a boundary,
/// the first one back records it. Studios read the events from the admin API
/// (`GET /admin/v1/games/{bundleID}/occurrence-events`).
final class OccurrenceClock: Service {
    let leaderboards: LeaderboardService
    let registry: GameRegistry
    let interval: Duration
    let logger: Logger
    /// What this node recorded or found recorded: not asked again.
    private let known = Mutex<Set<Key>>([])

    private struct Key: Hashable {
        var bundleID: String
        var environment: Environment
        var category: String
        var occurrence: Int64
        var kind: LeaderboardOccurrenceEventKind
    }

    init(leaderboards: LeaderboardService, registry: GameRegistry, interval: Duration, logger: Logger) {
        self.leaderboards = leaderboards
        self.registry = registry
        self.interval = interval
        self.logger = logger
    }

    func run() async throws {
        while !Task.isShuttingDownGracefully, !Task.isCancelled {
            do {
                try await tick()
            } catch {
                logger.warning("occurrence starts and ends could not be recorded now; trying again", metadata: [LogKey.error: "\(error)"])
            }
            // A graceful shutdown ends the wait, not only the next loop.
            try? await cancelWhenGracefulShutdown { [interval] in try await Task.sleep(for: interval) }
        }
    }

    /// Records what is due now: the running occurrence's start and the last occurrence's end, per board and environment.
    /// With tournament boards, first reads which occurrences other nodes' admins started early.
    func tick() async throws {
        if registry.all.contains(where: { game in game.leaderboards.contains { $0.recurrence?.tournament != nil } }) {
            let now = leaderboards.clock.nowMillis()
            let early = try await leaderboards.database.read { try await $0.tournamentsStartedEarly(scheduledAfter: now) }
            leaderboards.index.occurrences.followStartedEarly(early, now: now)
        }
        for game in registry.all {
            for definition in game.leaderboards {
                guard let recurrence = definition.recurrence else { continue }
                for environment in Environment.allCases {
                    let now = leaderboards.clock.nowMillis()
                    guard let latest = recurrence.schedule.latest(startingAtOrBefore: now) else { continue }
                    if now < latest.end {
                        try await record(.started, latest, category: definition.category, game: game, environment: environment, now: now)
                    }
                    if let ended = latest.end <= now ? latest : recurrence.schedule.previous(latest) {
                        try await record(.ended, ended, category: definition.category, game: game, environment: environment, now: now)
                    }
                }
            }
        }
    }

    private func record(
        _ kind: LeaderboardOccurrenceEventKind, _ occurrence: OccurrenceSchedule.Occurrence, category: String, game: Game,
        environment: Environment, now: Int64
    ) async throws {
        let key = Key(bundleID: game.bundleID, environment: environment, category: category, occurrence: occurrence.start, kind: kind)
        guard !known.withLock({ $0.contains(key) }) else { return }
        let database = leaderboards.database
        let recorded = try await database.read { storage in
            try await storage.hasOccurrenceEvent(
                bundleID: game.bundleID, environment: environment.rawValue, category: category, occurrence: occurrence.start, kind: kind.rawValue)
        }
        if !recorded {
            var standings: [AdminScoreEntry] = []
            if kind == .ended {
                standings =
                    try await leaderboards.adminPage(
                        game: game, environment: environment, category: category, timeScope: .allTime, rangeStart: 1,
                        rangeLength: LeaderboardOccurrenceEvent.standingsLength, locale: game.defaultLocale, occurrence: StoredTime.date(occurrence.start)
                    ).entries
            }
            let event = NewOccurrenceEvent(
                bundleID: game.bundleID, environment: environment.rawValue, category: category, occurrence: occurrence.start,
                occurrenceEnd: occurrence.end, kind: kind.rawValue, recordedAt: now,
                standings: String(decoding: try WireCoding.makeEncoder().encode(standings), as: UTF8.self))
            if let id = try await database.write({ try await $0.recordOccurrenceEvent(event) }) {
                logger.info(
                    "recorded an occurrence \(kind.rawValue == "started" ? "start" : "end")",
                    metadata: [
                        LogKey.bundleID: "\(game.bundleID)", LogKey.category: "\(category)", LogKey.environment: "\(environment.rawValue)",
                        "event": "\(id)",
                    ])
            }
        }
        known.withLock { known in
            // Bounded: a board of one-minute occurrences adds four keys a minute; forgotten keys are asked again once.
            if known.count >= 10_000 { known.removeAll() }
            known.insert(key)
        }
    }
}
