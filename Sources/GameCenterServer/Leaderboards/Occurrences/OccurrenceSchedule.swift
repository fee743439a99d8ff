import Foundation

/// When a recurring leaderboard's occurrences start and end. Times are milliseconds since 1970; an occurrence is the
/// half-open span `[start, end)`, and a score belongs to the occurrence that contains the moment the server received it.
///
/// Two kinds of rule:
/// - Apple's: a first start, a duration, and a restart interval at least as long (`fixed`); the time between an
///   occurrence's end and the next start is a gap in which no occurrence runs.
/// - A calendar rule in an IANA time zone (`calendar`): an occurrence starts at each local time a cron expression
///   names and lasts until the next one, so a monthly board spans each calendar month and a daily board in
///   `America/New_York` spans 23 hours on the day clocks go forward.
public struct OccurrenceSchedule: Sendable, Equatable {
    /// One occurrence: `[start, end)` in milliseconds since 1970.
    public struct Occurrence: Sendable, Hashable {
        public var start: Int64
        public var end: Int64
    }

    /// How occurrences follow one another.
    public enum Rule: Sendable, Equatable {
        /// From `start`, an occurrence of `duration` every `interval` (milliseconds; interval ≥ duration > 0).
        case fixed(start: Int64, duration: Int64, interval: Int64)
        /// An occurrence starts at each time `cron` names in `timeZone`, at or after `notBefore` when set.
        case calendar(CronExpression, notBefore: Int64?)
    }

    public let rule: Rule
    /// The zone the schedule is written in (UTC for Apple's rule); answers show an occurrence's times in it too.
    public let timeZone: TimeZone
    /// The zone's IANA name as the manifest wrote it (Foundation calls UTC `GMT`).
    public let timeZoneName: String

    /// How far a calendar rule looks for its next start: 8 years covers `0 0 29 2 *` (leap days).
    private static let searchDays: Int64 = 8 * 366

    public init(rule: Rule, timeZone: TimeZone, timeZoneName: String? = nil) {
        self.rule = rule
        self.timeZone = timeZone
        self.timeZoneName = timeZoneName ?? timeZone.identifier
    }

    /// The occurrence running at `time`, or nil before the first one and in a gap between two.
    public func occurrence(containing time: Int64) -> Occurrence? {
        guard let latest = latest(startingAtOrBefore: time), time < latest.end else { return nil }
        return latest
    }

    /// The occurrence that started last at or before `time` (running or over), or nil when none has started.
    public func latest(startingAtOrBefore time: Int64) -> Occurrence? {
        switch rule {
        case .fixed(let start, let duration, let interval):
            guard time >= start else { return nil }
            let begin = start + (time - start) / interval * interval
            return Occurrence(start: begin, end: begin + duration)
        case .calendar(_, let notBefore):
            guard let begin = previousStart(atOrBefore: time), begin >= (notBefore ?? Int64.min) else { return nil }
            guard let end = nextStart(after: begin) else { return nil }
            return Occurrence(start: begin, end: end)
        }
    }

    /// The occurrence before `occurrence`, or nil when it is the first.
    public func previous(_ occurrence: Occurrence) -> Occurrence? {
        latest(startingAtOrBefore: occurrence.start - 1)
    }

    /// The occurrence after `occurrence`.
    public func next(_ occurrence: Occurrence) -> Occurrence? {
        switch rule {
        case .fixed(_, let duration, let interval):
            return Occurrence(start: occurrence.start + interval, end: occurrence.start + interval + duration)
        case .calendar:
            guard let end = nextStart(after: occurrence.end) else { return nil }
            return Occurrence(start: occurrence.end, end: end)
        }
    }

    /// The first occurrence starting after `time`.
    public func first(startingAfter time: Int64) -> Occurrence? {
        if let latest = latest(startingAtOrBefore: time) { return next(latest) }
        switch rule {
        case .fixed(let start, let duration, _):
            return Occurrence(start: start, end: start + duration)
        case .calendar(_, let notBefore):
            guard let begin = nextStart(after: max(time, (notBefore ?? Int64.min) - 1)), let end = nextStart(after: begin) else { return nil }
            return Occurrence(start: begin, end: end)
        }
    }

    // MARK: Calendar rules

    private var zoned: ZonedTime { ZonedTime(timeZone: timeZone) }

    /// The calendar rule's starts on one local day, in time order (a skipped local time lands after the change, so
    /// two local times can share an instant).
    private func starts(on day: CivilDay, cron: CronExpression) -> [Int64] {
        guard cron.matches(month: day.month, day: day.day, weekday: day.weekday) else { return [] }
        var instants: [Int64] = []
        instants.reserveCapacity(cron.hours.count * cron.minutes.count)
        for hour in cron.hours {
            for minute in cron.minutes {
                instants.append(zoned.instant(year: day.year, month: day.month, day: day.day, hour: hour, minute: minute))
            }
        }
        return instants.sorted()
    }

    private func nextStart(after time: Int64) -> Int64? {
        guard case .calendar(let cron, _) = rule else { return nil }
        // The local day of `time`, from the day before: a start on the previous local day can map past midnight.
        var day = zoned.day(of: time).adding(-1)
        for _ in 0..<Self.searchDays {
            if let found = starts(on: day, cron: cron).first(where: { $0 > time }) { return found }
            day = day.adding(1)
        }
        return nil
    }

    private func previousStart(atOrBefore time: Int64) -> Int64? {
        guard case .calendar(let cron, _) = rule else { return nil }
        var day = zoned.day(of: time).adding(1)
        var best: Int64?
        for _ in 0..<Self.searchDays {
            if let found = starts(on: day, cron: cron).last(where: { $0 <= time }) {
                // A day's starts are all later than the previous day's but for a skipped hour at midnight: look one
                // day further and keep the later.
                let earlier = starts(on: day.adding(-1), cron: cron).last(where: { $0 <= time })
                best = max(found, earlier ?? found)
                break
            }
            day = day.adding(-1)
        }
        return best
    }
}
