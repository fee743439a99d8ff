import Foundation

/// How pages show dates: day and time in UTC (the server does not know the reader's time zone).
enum PageDates {
    /// `2026-11-24 17:40 UTC`.
    static func minute(_ date: Date) -> String {
        let (day, secondOfDay) = dayAndSecond(date)
        return "\(self.day(daysSinceEpoch: day)) \(twoDigits(secondOfDay / 3600)):\(twoDigits(secondOfDay / 60 % 60)) UTC"
    }

    /// `2026-11-24T17:40:00Z`, for a `<time datetime>` attribute.
    static func machine(_ date: Date) -> String {
        date.formatted(.iso8601)
    }

    /// How long until `date`, counted from `now` in whole units rounded down, as words a reader in any time zone
    /// understands: `in 59 minutes`, `in 5 hours`, `in 2 days`; `in less than a minute` when that is all that is left.
    static func remaining(until date: Date, from now: Date) -> String {
        let minutes = Int(max(0, date.timeIntervalSince(now)) / 60)
        switch minutes {
        case 0: return "in less than a minute"
        case ..<120: return "in \(minutes) minute\(minutes == 1 ? "" : "s")"
        case ..<(48 * 60): return "in \(minutes / 60) hours"
        default: return "in \(minutes / (24 * 60)) days"
        }
    }

    /// `2026-11-24`.
    static func day(_ date: Date) -> String {
        day(daysSinceEpoch: dayAndSecond(date).day)
    }

    /// The UTC day of `date` counted from 1970-01-01, and the second within it.
    private static func dayAndSecond(_ date: Date) -> (day: Int, second: Int) {
        let seconds = Int(date.timeIntervalSince1970.rounded(.down))
        let (day, second) = seconds.quotientAndRemainder(dividingBy: 86_400)
        return second < 0 ? (day - 1, second + 86_400) : (day, second)
    }

    /// The proleptic Gregorian date `days` after 1970-01-01, as `YYYY-MM-DD`: Howard Hinnant's `civil_from_days`
    /// (arithmetic only; Foundation's date formatting was a tenth of the leaderboard page's cost, one date per row).
    private static func day(daysSinceEpoch days: Int) -> String {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1_460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let shiftedMonth = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * shiftedMonth + 2) / 5 + 1
        let month = shiftedMonth < 10 ? shiftedMonth + 3 : shiftedMonth - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        return "\(year)-\(twoDigits(month))-\(twoDigits(day))"
    }

    private static func twoDigits(_ value: Int) -> String {
        value < 10 ? "0\(value)" : "\(value)"
    }
}
