import Foundation

/// Times are stored as milliseconds since 1970 in a 64-bit integer, the same on both engines.
public enum StoredTime {
    /// `date` as stored.
    public static func millis(_ date: Date) -> Int64 { Int64((date.timeIntervalSince1970 * 1000).rounded()) }
    /// `date` as stored, when it falls in the years 1 to 9999; nil otherwise (a date from the network can be any
    /// number, and one past ±2⁶³ milliseconds cannot be stored).
    public static func checkedMillis(_ date: Date) -> Int64? {
        let millis = (date.timeIntervalSince1970 * 1000).rounded()
        guard millis.isFinite, (-62_135_596_800_000...253_402_300_799_999).contains(millis) else { return nil }
        return Int64(millis)
    }
    /// A stored time as a date.
    public static func date(_ millis: Int64) -> Date { Date(timeIntervalSince1970: Double(millis) / 1000) }
}
