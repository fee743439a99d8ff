import Foundation
import Testing

@testable import GameCenterServer

/// The pages' day and minute, computed by arithmetic, agree with Foundation's Gregorian calendar in UTC.
struct PageDatesTests {
    static let calendar: Calendar = {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = .gmt
        return calendar
    }()

    static func expected(_ date: Date) -> (day: String, minute: String) {
        let parts = calendar.dateComponents([.year, .month, .day, .hour, .minute], from: date)
        let day = String(format: "%d-%02d-%02d", parts.year!, parts.month!, parts.day!)
        return (day, day + String(format: " %02d:%02d UTC", parts.hour!, parts.minute!))
    }

    @Test func leapDaysCenturiesAndTheEpochsEdges() {
        let dates = [
            "1970-01-01T00:00:00Z", "1969-12-31T23:59:59Z", "2000-02-29T12:00:00Z", "1900-02-28T23:59:00Z", "1900-03-01T00:00:00Z",
            "2100-02-28T23:59:59Z", "2100-03-01T00:00:00Z", "2024-02-29T23:59:59Z", "2026-12-31T23:59:59Z", "1601-01-01T00:00:00Z",
        ].map { try! Date($0, strategy: .iso8601) }
        for date in dates + [Date(timeIntervalSince1970: -0.5), Date(timeIntervalSince1970: 86_399.999)] {
            #expect(PageDates.day(date) == Self.expected(date).day, "\(date.timeIntervalSince1970)")
            #expect(PageDates.minute(date) == Self.expected(date).minute, "\(date.timeIntervalSince1970)")
        }
        #expect(PageDates.day(try! Date("2000-02-29T12:00:00Z", strategy: .iso8601)) == "2000-02-29")
    }

    /// Foundation's calendar switches to the Julian calendar before 1582; the pages' dates never go that far back.
    @Test func tenThousandDatesSpreadOverFourCenturies() {
        var generator = SystemRandomNumberGenerator()
        let dates = (0..<10_000).map { _ in Date(timeIntervalSince1970: Double.random(in: -11_000_000_000...14_000_000_000, using: &generator)) }
        let wrong = dates.filter { PageDates.day($0) != Self.expected($0).day || PageDates.minute($0) != Self.expected($0).minute }
        #expect(wrong.isEmpty, "\(wrong.count) wrong, first: \(wrong.first.map { "\($0.timeIntervalSince1970) \(PageDates.minute($0))" } ?? "")")
    }
}
