import Foundation
import GameCenterProtocol
import GameCenterStorage
import Synchronization

/// The occurrences of recurring leaderboards as the server uses them: the one a score received now belongs to
/// (worked out once per occurrence and game, not per report), which past occurrences are still kept, and how an
/// occurrence is shown. A score belongs to the occurrence that contains the moment the server received it, by the
/// server's clock: never the device's date, which only places it in the rolling windows of classic boards.
final class OccurrenceTracker: Sendable {
    private struct Key: Hashable {
        var bundleID: String
        var category: String
    }

    /// What is known of one board: the occurrence running (or last started) and the oldest one kept.
    private struct Known {
        var schedule: OccurrenceSchedule
        var keep: Int?
        var latest: OccurrenceSchedule.Occurrence
        /// When the next occurrence starts (`Int64.max`: never).
        var nextStart: Int64
        var keptFrom: Int64
    }

    private let known = Mutex<[Key: Known]>([:])

    /// A tournament board in one environment.
    private struct TournamentKey: Hashable {
        var bundleID: String
        var environment: String
        var category: String
    }

    /// Tournament occurrences an admin started before their scheduled start: the scheduled start and when it was
    /// started (this node's, and the other nodes' as ``followStartedEarly(_:now:)`` reads them).
    private let startedEarly = Mutex<[TournamentKey: (start: Int64, openedAt: Int64)]>([:])
    /// Called once per board and node when a new occurrence starts (the first time this node sees it) with the start
    /// before which scores may be erased: the manifest's `keep`, and one occurrence more, whose final standings are
    /// read once it ends (``OccurrenceClock``).
    private let onNewOccurrence: @Sendable (_ bundleID: String, _ category: String, _ erasableBefore: Int64) -> Void

    init(onNewOccurrence: @escaping @Sendable (_ bundleID: String, _ category: String, _ erasableBefore: Int64) -> Void = { _, _, _ in }) {
        self.onNewOccurrence = onNewOccurrence
    }

    /// The occurrence of a recurring board running at `now`; nil before its first occurrence and between two.
    func running(_ recurrence: LeaderboardDefinition.Recurrence, category: String, bundleID: String, at now: Int64) -> OccurrenceSchedule.Occurrence? {
        guard let known = latest(recurrence, category: category, bundleID: bundleID, at: now), now < known.latest.end else { return nil }
        return known.latest
    }

    /// The occurrence a score received at `now` belongs to in `environment`: a tournament's occurrence started early
    /// (from when it was started until its scheduled start), else the running one; nil when none runs.
    func receiving(
        _ recurrence: LeaderboardDefinition.Recurrence, category: String, bundleID: String, environment: String, at now: Int64
    ) -> OccurrenceSchedule.Occurrence? {
        early(recurrence, category: category, bundleID: bundleID, environment: environment, at: now)
            ?? running(recurrence, category: category, bundleID: bundleID, at: now)
    }

    /// The tournament occurrence started early that runs at `now` in `environment`, if any.
    func early(
        _ recurrence: LeaderboardDefinition.Recurrence, category: String, bundleID: String, environment: String, at now: Int64
    ) -> OccurrenceSchedule.Occurrence? {
        guard recurrence.tournament != nil,
            let opened = startedEarly.withLock({ $0[TournamentKey(bundleID: bundleID, environment: environment, category: category)] }),
            opened.openedAt <= now, now < opened.start,
            let occurrence = recurrence.schedule.latest(startingAtOrBefore: opened.start), occurrence.start == opened.start
        else { return nil }
        return occurrence
    }

    /// An admin started a tournament occurrence (scheduled at `start`) early, at `openedAt`.
    func noteStartedEarly(bundleID: String, environment: String, category: String, start: Int64, openedAt: Int64) {
        startedEarly.withLock { $0[TournamentKey(bundleID: bundleID, environment: environment, category: category)] = (start, openedAt) }
    }

    /// The occurrences started early that storage holds (every node's), added to those known; those whose scheduled
    /// start has passed are forgotten (they run on schedule now).
    func followStartedEarly(_ stored: [(board: TournamentOccurrence, openedAt: Int64)], now: Int64) {
        startedEarly.withLock { known in
            for (board, openedAt) in stored {
                known[TournamentKey(bundleID: board.bundleID, environment: board.environment, category: board.category)] = (board.occurrence, openedAt)
            }
            known = known.filter { $0.value.start > now }
        }
    }

    /// The occurrence a query without one reads: the running one, else the last one, else (none has started) the first.
    func current(_ recurrence: LeaderboardDefinition.Recurrence, category: String, bundleID: String, at now: Int64) -> OccurrenceSchedule.Occurrence? {
        latest(recurrence, category: category, bundleID: bundleID, at: now)?.latest ?? recurrence.schedule.first(startingAfter: now)
    }

    /// The start of the oldest occurrence still kept (the manifest's `keep`), or nil when none has started.
    func keptFrom(_ recurrence: LeaderboardDefinition.Recurrence, category: String, bundleID: String, at now: Int64) -> Int64? {
        latest(recurrence, category: category, bundleID: bundleID, at: now)?.keptFrom
    }

    /// How an answer shows `occurrence`: its neighbours (the previous one only when kept) and its times in the zone.
    /// `startedEarly`: a tournament occurrence an admin started before its scheduled start, running now.
    func describe(
        _ occurrence: OccurrenceSchedule.Occurrence, of recurrence: LeaderboardDefinition.Recurrence, keptFrom: Int64?, now: Int64,
        startedEarly: Bool = false
    ) -> LeaderboardOccurrence {
        let schedule = recurrence.schedule
        let previous = schedule.previous(occurrence).flatMap { previous in previous.start >= (keptFrom ?? previous.start) ? previous : nil }
        return LeaderboardOccurrence(
            start: StoredTime.date(occurrence.start), end: StoredTime.date(occurrence.end),
            nextStart: schedule.next(occurrence).map { StoredTime.date($0.start) },
            previousStart: previous.map { StoredTime.date($0.start) },
            timeZone: schedule.timeZoneName,
            localStart: Self.localTime(occurrence.start, in: schedule.timeZone), localEnd: Self.localTime(occurrence.end, in: schedule.timeZone),
            isRunning: startedEarly || (occurrence.start <= now && now < occurrence.end))
    }

    /// `millis` in `zone` as ISO 8601 with the zone's offset then (`2026-11-01T00:00:00-04:00`; `Z` in UTC).
    static func localTime(_ millis: Int64, in zone: TimeZone) -> String {
        StoredTime.date(millis).formatted(Date.ISO8601FormatStyle(timeZoneSeparator: .colon, timeZone: zone))
    }

    /// The latest occurrence started at or before `now`, from the cache while `now` is before the next one's start.
    private func latest(_ recurrence: LeaderboardDefinition.Recurrence, category: String, bundleID: String, at now: Int64) -> Known? {
        let key = Key(bundleID: bundleID, category: category)
        if let cached = known.withLock({ $0[key] }), cached.schedule == recurrence.schedule, cached.keep == recurrence.keep,
            cached.latest.start <= now, now < cached.nextStart
        {
            return cached
        }
        guard let latest = recurrence.schedule.latest(startingAtOrBefore: now) else { return nil }
        var (keptFrom, erasableBefore) = (Int64.min, Int64.min)
        if let keep = recurrence.keep {
            var oldest = latest
            for _ in 1..<max(keep, 1) {
                guard let previous = recurrence.schedule.previous(oldest) else { break }
                oldest = previous
            }
            keptFrom = oldest.start
            erasableBefore = recurrence.schedule.previous(oldest)?.start ?? oldest.start
        }
        let fresh = Known(
            schedule: recurrence.schedule, keep: recurrence.keep, latest: latest,
            nextStart: recurrence.schedule.next(latest)?.start ?? Int64.max, keptFrom: keptFrom)
        let isNew = known.withLock { known in
            let isNew = known[key].map { $0.latest.start < latest.start } ?? true
            if isNew { known[key] = fresh }
            return isNew
        }
        if isNew && recurrence.keep != nil { onNewOccurrence(bundleID, category, erasableBefore) }
        return fresh
    }
}
