/// A five-field cron expression — minute, hour, day of month, month, day of week — as Vixie cron reads it: each field
/// `*`, a number, a range `a-b`, a step `*/n` or `a-b/n`, or a comma list of those; months 1–12 or `jan`…`dec`, days of
/// the week 0–7 (0 and 7 are Sunday) or `sun`…`sat`. When both day fields are restricted, a day matches either one.
public struct CronExpression: Sendable, Equatable, CustomStringConvertible {
    /// The expression as written.
    public let description: String
    /// Sorted, distinct values of each field.
    let minutes: [Int]
    let hours: [Int]
    let daysOfMonth: Set<Int>
    let months: Set<Int>
    /// 0 (Sunday) … 6.
    let daysOfWeek: Set<Int>
    /// Whether the day-of-month and day-of-week fields were written as `*` (a `*` field does not restrict the day).
    let anyDayOfMonth: Bool
    let anyDayOfWeek: Bool

    /// A field that cannot be read, with what is allowed.
    public struct ParseError: Error, Equatable, CustomStringConvertible {
        public let description: String
    }

    private static let monthNames = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]
    private static let dayNames = ["sun", "mon", "tue", "wed", "thu", "fri", "sat"]

    /// Reads `text`; throws a ``ParseError`` naming the field that is wrong.
    public init(_ text: String) throws(ParseError) {
        let fields = text.split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init)
        guard fields.count == 5 else {
            throw ParseError(description: "a cron expression has 5 fields (minute hour day-of-month month day-of-week); '\(text)' has \(fields.count)")
        }
        description = fields.joined(separator: " ")
        minutes = try Self.field(fields[0], name: "minute", range: 0...59, names: [])
        hours = try Self.field(fields[1], name: "hour", range: 0...23, names: [])
        daysOfMonth = Set(try Self.field(fields[2], name: "day of month", range: 1...31, names: []))
        months = Set(try Self.field(fields[3], name: "month", range: 1...12, names: Self.monthNames, firstName: 1))
        daysOfWeek = Set(try Self.field(fields[4], name: "day of week", range: 0...7, names: Self.dayNames, firstName: 0).map { $0 % 7 })
        anyDayOfMonth = fields[2] == "*"
        anyDayOfWeek = fields[4] == "*"
    }

    /// Whether the expression fires on a day (month 1–12, day of month 1–31, day of week 0 = Sunday).
    func matches(month: Int, day: Int, weekday: Int) -> Bool {
        guard months.contains(month) else { return false }
        switch (anyDayOfMonth, anyDayOfWeek) {
        case (true, true): return true
        case (false, true): return daysOfMonth.contains(day)
        case (true, false): return daysOfWeek.contains(weekday)
        case (false, false): return daysOfMonth.contains(day) || daysOfWeek.contains(weekday)
        }
    }

    private static func field(_ text: String, name: String, range: ClosedRange<Int>, names: [String], firstName: Int = 0) throws(ParseError) -> [Int] {
        func fail(_ why: String) -> ParseError {
            ParseError(
                description: "the \(name) field '\(text)' \(why); allowed: \(range.lowerBound)–\(range.upperBound), *, a-b, */n, a-b/n and lists of these")
        }
        func value(_ part: Substring) throws(ParseError) -> Int {
            if let index = names.firstIndex(of: part.lowercased()) { return index + firstName }
            guard let number = Int(part), range.contains(number) else { throw fail("has '\(part)', which is out of range") }
            return number
        }
        var values = Set<Int>()
        for item in text.split(separator: ",", omittingEmptySubsequences: false) {
            let pieces = item.split(separator: "/", omittingEmptySubsequences: false)
            guard (1...2).contains(pieces.count), !pieces[0].isEmpty else { throw fail("is not well formed") }
            var step = 1
            if pieces.count == 2 {
                guard let parsed = Int(pieces[1]), parsed >= 1 else { throw fail("has a step that is not a positive number") }
                step = parsed
            }
            let span: ClosedRange<Int>
            if pieces[0] == "*" {
                span = range
            } else {
                let bounds = pieces[0].split(separator: "-", omittingEmptySubsequences: false)
                guard (1...2).contains(bounds.count) else { throw fail("is not well formed") }
                let low = try value(bounds[0])
                let high = bounds.count == 2 ? try value(bounds[1]) : (pieces.count == 2 ? range.upperBound : low)
                guard low <= high else { throw fail("has a range that runs backwards") }
                span = low...high
            }
            values.formUnion(stride(from: span.lowerBound, through: span.upperBound, by: step))
        }
        return values.sorted()
    }
}
