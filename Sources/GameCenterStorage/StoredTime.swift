import Foundation

/// Times are stored as milliseconds since 1970 in a 64-bit integer, the same on both engines.
public enum StoredTime {
    /// `date` as stored.
    public static func millis(_ date: Date) -> Int64 { Int64((date.timeIntervalSince1970 * 1000).rounded()) }
    /// A stored time as a date.
    public static func date(_ millis: Int64) -> Date { Date(timeIntervalSince1970: Double(millis) / 1000) }
}
