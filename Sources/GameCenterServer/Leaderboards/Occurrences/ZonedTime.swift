import Foundation

/// Local wall-clock times of an IANA time zone turned into instants the way Python's `zoneinfo` does with `fold=0`:
/// a time that happens twice (the hour repeated when clocks go back) is the first of the two; a time that never
/// happens (the hour skipped when clocks go forward) is read with the offset in force before the change, so 02:30 on
/// a spring-forward night in New York is 03:30 EDT.
struct ZonedTime: Sendable {
    let timeZone: TimeZone

    /// The instant, in milliseconds since 1970, of a local date and time.
    func instant(year: Int, month: Int, day: Int, hour: Int, minute: Int) -> Int64 {
        let local = Self.daysFromCivil(year: year, month: month, day: day) * 86_400 + Int64(hour * 3600 + minute * 60)
        let before = offset(at: local - 86_400 - 14 * 3600)
        let after = offset(at: local + 86_400 + 14 * 3600)
        if before == after { return (local - before) * 1000 }
        if offset(at: local - before) == before { return (local - before) * 1000 }
        if offset(at: local - after) == after { return (local - after) * 1000 }
        return (local - before) * 1000
    }

    /// The local calendar day of an instant (milliseconds since 1970): year, month, day, day of week (0 = Sunday).
    func day(of millis: Int64) -> CivilDay {
        let seconds = Self.floorDivide(millis, 1000)
        return CivilDay(daysSince1970: Self.floorDivide(seconds + offset(at: seconds), 86_400))
    }

    /// The zone's offset from UTC, in seconds, at an instant (seconds since 1970).
    private func offset(at seconds: Int64) -> Int64 {
        Int64(timeZone.secondsFromGMT(for: Date(timeIntervalSince1970: TimeInterval(seconds))))
    }

    static func floorDivide(_ a: Int64, _ b: Int64) -> Int64 {
        a >= 0 ? a / b : -((-a + b - 1) / b)
    }

    /// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
    static func daysFromCivil(year: Int, month: Int, day: Int) -> Int64 {
        let y = Int64(month <= 2 ? year - 1 : year)
        let era = floorDivide(y, 400)
        let yearOfEra = y - era * 400
        let m = Int64(month)
        let dayOfYear = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + Int64(day) - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }
}

/// A calendar day (proleptic Gregorian).
struct CivilDay: Sendable, Equatable {
    let daysSince1970: Int64
    let year: Int
    let month: Int
    let day: Int
    /// 0 = Sunday … 6 = Saturday.
    let weekday: Int

    init(daysSince1970 days: Int64) {
        daysSince1970 = days
        let z = days + 719_468
        let era = ZonedTime.floorDivide(z, 146_097)
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let mp = (5 * dayOfYear + 2) / 153
        day = Int(dayOfYear - (153 * mp + 2) / 5 + 1)
        month = Int(mp < 10 ? mp + 3 : mp - 9)
        year = Int(yearOfEra + era * 400) + (month <= 2 ? 1 : 0)
        weekday = Int(ZonedTime.floorDivide(days + 4, 7) * -7 + days + 4)
    }

    /// The day after (or before, for negative `days`).
    func adding(_ days: Int64) -> CivilDay { CivilDay(daysSince1970: daysSince1970 + days) }
}
