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

    /// `2026-11-24`.
    static func day(_ date: Date) -> String {
        date.formatted(
            Date.VerbatimFormatStyle(
                format: "\(year: .defaultDigits)-\(month: .twoDigits)-\(day: .twoDigits)", timeZone: .gmt, calendar: Calendar(identifier: .gregorian)))
    }
}
