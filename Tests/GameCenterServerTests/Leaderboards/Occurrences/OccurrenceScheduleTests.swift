import Foundation
import Testing
@testable import GameCenterServer

/// Recurring leaderboards' schedules: calendar rules in IANA zones against Python's `zoneinfo` (an independent calendar)
/// over ten years, daylight-saving days, leap days, Apple's start-duration-interval rule with its gaps, and cron.
@Suite struct OccurrenceScheduleTests {
    static func millis(_ text: String) -> Int64 {
        Int64((try! Date(text, strategy: .iso8601)).timeIntervalSince1970 * 1000)
    }

    static func calendar(_ cron: String, _ zone: String, notBefore: Int64? = nil) throws -> OccurrenceSchedule {
        OccurrenceSchedule(rule: .calendar(try CronExpression(cron), notBefore: notBefore), timeZone: TimeZone(identifier: zone)!)
    }

    /// Every start from 2026-01-01 to 2036-01-01 of a local time rule, by Python: `kind` day, week (`arg` 0 = Sunday),
    /// month (`arg` = day) or feb29.
    static func pythonStarts(zone: String, kind: String, hour: Int, minute: Int, arg: Int) async throws -> [Int64] {
        let script = """
            import json, sys
            from datetime import date, datetime, timedelta
            from zoneinfo import ZoneInfo
            zone, kind, hour, minute, arg = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
            z = ZoneInfo(zone)
            d, out = date(2026, 1, 1), set()
            while d < date(2036, 1, 1):
                if (kind == 'day' or (kind == 'week' and d.isoweekday() % 7 == arg) or (kind == 'month' and d.day == arg)
                        or (kind == 'feb29' and d.month == 2 and d.day == 29)):
                    out.add(int(datetime(d.year, d.month, d.day, hour, minute, tzinfo=z).timestamp() * 1000))
                d += timedelta(days=1)
            print(json.dumps(sorted(out)))
            """
        let python = try await ChildProcess.run("/usr/bin/env", ["python3", "-c", script, zone, kind, String(hour), String(minute), String(arg)])
        #expect(python.status == 0, "python3 with zoneinfo is needed (scripts/test.sh installs it)")
        return try JSONDecoder().decode([Int64].self, from: python.output)
    }

    @Test(arguments: [
        ("America/New_York", "day", 0, 0, 0), ("America/New_York", "day", 1, 30, 0), ("America/New_York", "week", 2, 30, 0),
        ("Europe/Berlin", "month", 0, 0, 1), ("Australia/Sydney", "day", 2, 30, 0), ("Asia/Kolkata", "week", 9, 0, 1),
        ("Pacific/Chatham", "month", 2, 45, 28), ("UTC", "feb29", 0, 0, 0), ("America/Sao_Paulo", "day", 0, 0, 0),
    ])
    func tenYearsOfStartsAgreeWithPythonsZoneinfo(zone: String, kind: String, hour: Int, minute: Int, arg: Int) async throws {
        let expected = try await Self.pythonStarts(zone: zone, kind: kind, hour: hour, minute: minute, arg: arg)
        try #require(expected.count > 1)
        let day =
            switch kind {
            case "day": "* * *"
            case "week": "* * \(arg)"
            case "month": "\(arg) * *"
            default: "29 2 *"
            }
        let schedule = try Self.calendar("\(minute) \(hour) \(day)", zone)
        var starts: [Int64] = []
        var occurrence = try #require(schedule.first(startingAfter: expected[0] - 1))
        while occurrence.start <= expected.last! {
            starts.append(occurrence.start)
            let next = try #require(schedule.next(occurrence))
            #expect(next.start == occurrence.end, "occurrences of a calendar rule follow one another without a gap")
            occurrence = next
        }
        // Only the first difference is shown: the lists hold hundreds of starts.
        let difference = zip(starts, expected).enumerated().first { $0.element.0 != $0.element.1 }
        #expect(
            difference == nil && starts.count == expected.count,
            "\(starts.count) starts against Python's \(expected.count); first difference: \(difference.map { "#\($0.offset): \($0.element.0) ≠ \($0.element.1)" } ?? "none")"
        )
        // Walking back from the last start finds the same ones.
        var back = try #require(schedule.latest(startingAtOrBefore: expected.last!))
        var backwards = [back.start]
        for _ in 0..<min(40, expected.count - 1) {
            back = try #require(schedule.previous(back))
            backwards.append(back.start)
        }
        #expect(backwards == Array(expected.reversed().prefix(backwards.count)))
    }

    @Test func aDailyBoardInNewYorkLasts23And25HoursWhenTheClocksChange() throws {
        let schedule = try Self.calendar("0 0 * * *", "America/New_York")
        let spring = try #require(schedule.occurrence(containing: Self.millis("2026-03-08T12:00:00Z")))
        #expect(spring.start == Self.millis("2026-03-08T05:00:00Z"))
        #expect(spring.end - spring.start == 23 * 3_600_000)
        let autumn = try #require(schedule.occurrence(containing: Self.millis("2026-11-01T12:00:00Z")))
        #expect(autumn.start == Self.millis("2026-11-01T04:00:00Z"))
        #expect(autumn.end - autumn.start == 25 * 3_600_000)
        #expect(OccurrenceTracker.localTime(autumn.start, in: schedule.timeZone) == "2026-11-01T00:00:00-04:00")
        #expect(OccurrenceTracker.localTime(autumn.end, in: schedule.timeZone) == "2026-11-02T00:00:00-05:00")
    }

    @Test func aMonthlyBoardSpansEachCalendarMonth() throws {
        let schedule = try Self.calendar("0 0 1 * *", "Europe/Berlin")
        let february = try #require(schedule.occurrence(containing: Self.millis("2028-02-15T00:00:00Z")))
        #expect(february.start == Self.millis("2028-01-31T23:00:00Z"))
        #expect(february.end - february.start == 29 * 86_400_000, "2028 is a leap year")
        let march = try #require(schedule.next(february))
        #expect(march.end - march.start == 31 * 86_400_000 - 3_600_000, "clocks go forward on the last Sunday of March")
        #expect(OccurrenceTracker.localTime(march.start, in: schedule.timeZone) == "2028-03-01T00:00:00+01:00")
    }

    @Test func aStartBelongsToItsOccurrenceAndTheEndToTheNext() throws {
        let schedule = try Self.calendar("0 0 * * *", "UTC")
        let boundary = Self.millis("2026-12-01T00:00:00Z")
        #expect(schedule.occurrence(containing: boundary - 1)?.end == boundary)
        #expect(schedule.occurrence(containing: boundary)?.start == boundary)
        // Not before the rule's own start.
        let later = try Self.calendar("0 0 * * *", "UTC", notBefore: boundary)
        #expect(later.occurrence(containing: boundary - 1) == nil)
        #expect(later.first(startingAfter: boundary - 10)?.start == boundary)
        #expect(later.previous(try #require(later.occurrence(containing: boundary))) == nil)
    }

    @Test func applesRuleHasGapsBetweenOccurrences() {
        let start = Self.millis("2026-01-01T00:00:00Z")
        let schedule = OccurrenceSchedule(
            rule: .fixed(start: start, duration: 3_600_000, interval: 7_200_000), timeZone: TimeZone(identifier: "UTC")!)
        #expect(schedule.occurrence(containing: start - 1) == nil)
        #expect(schedule.occurrence(containing: start) == .init(start: start, end: start + 3_600_000))
        #expect(schedule.occurrence(containing: start + 3_600_000 - 1)?.start == start)
        #expect(schedule.occurrence(containing: start + 3_600_000) == nil, "the hour after each occurrence is a gap")
        #expect(schedule.occurrence(containing: start + 7_200_000)?.start == start + 7_200_000)
        #expect(schedule.latest(startingAtOrBefore: start + 5_000_000)?.start == start)
        #expect(schedule.first(startingAfter: start + 5_000_000)?.start == start + 7_200_000)
        #expect(schedule.previous(.init(start: start + 7_200_000, end: start + 10_800_000))?.start == start)
    }

    @Test func cronReadsVixieSyntaxAndRefusesWhatItCannot() throws {
        let both = try CronExpression("0 12 13 * fri")
        #expect(both.matches(month: 3, day: 13, weekday: 2), "day of month or day of week, when both are set")
        #expect(both.matches(month: 3, day: 6, weekday: 5))
        #expect(!both.matches(month: 3, day: 7, weekday: 6))
        let steps = try CronExpression("*/15 9-17/4 * jan-mar 7")
        #expect(steps.minutes == [0, 15, 30, 45] && steps.hours == [9, 13, 17])
        #expect(steps.matches(month: 2, day: 1, weekday: 0) && !steps.matches(month: 4, day: 5, weekday: 0))
        for bad in ["61 * * * *", "* * *", "5-1 * * * *", "*/0 * * * *", "* * 0 * *", "* * * 13 *", "a * * * *", ", * * * *"] {
            #expect(throws: CronExpression.ParseError.self, "\(bad)") { try CronExpression(bad) }
        }
    }
}
