import Foundation

/// How pages show dates: day and time in UTC (the server does not know the reader's time zone).
enum PageDates {
    /// `2026-11-24 17:40 UTC`.
    static func minute(_ date: Date) -> String {
        date.formatted(
            Date.VerbatimFormatStyle(
                format:
                    "\(year: .defaultDigits)-\(month: .twoDigits)-\(day: .twoDigits) \(hour: .twoDigits(clock: .twentyFourHour, hourCycle: .zeroBased)):\(minute: .twoDigits) UTC",
                timeZone: .gmt, calendar: Calendar(identifier: .gregorian)))
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
        date.formatted(
            Date.VerbatimFormatStyle(
                format: "\(year: .defaultDigits)-\(month: .twoDigits)-\(day: .twoDigits)", timeZone: .gmt, calendar: Calendar(identifier: .gregorian)))
    }
}
