import Foundation
import GameCenterProtocol
import HTTPTypes

/// When reported scores were earned, on the server's clock: the seed's `GKScore.date` is set when the score is made,
/// and a score that waited offline in the device's outbox still lands in the right `today` and `week` windows.
///
/// The device sends each score's date by its own clock and, in ``DeviceHeader/deviceTime``, its clock when it sent the
/// request. The difference is how long ago the score was earned, whatever the device's clock offset, so the server
/// dates the score that long before its own clock. A device clock that was set between earning and sending moves the
/// date by as much; without the header the date is taken as it is. Either way the date is kept in the plausible
/// window: not later than now (a date in the future becomes now: a score earned tomorrow would stay in today's
/// window longest), not earlier than ``Limits/maximumReportAge`` before now (the longest an outbox keeps a report).
struct ScoreDating: Sendable {
    /// The server's clock when the report arrived, in milliseconds since 1970.
    let now: Int64
    /// Server clock minus device clock, in seconds; 0 when the device did not send its clock.
    let offset: Double

    /// Reads the device's clock from `deviceTime` (the header's value, when sent).
    init(now: Int64, deviceTime: String?) throws(APIError) {
        self.now = now
        guard let deviceTime else {
            offset = 0
            return
        }
        guard let seconds = Double(deviceTime.trimmingCharacters(in: .whitespaces)), seconds.isFinite, seconds >= 0 else {
            throw APIError.invalidParameter(
                "\(DeviceHeader.deviceTime) is the device's clock in seconds since 1970 (e.g. 1795500000.25); '\(deviceTime.prefix(40))' is not")
        }
        offset = Double(now) / 1000 - seconds
    }

    /// The server-clock time in milliseconds since 1970 of a score the device dated `date` (nil: now).
    func earnedAt(_ date: Date?) -> Int64 {
        guard let date else { return now }
        let millis = (date.timeIntervalSince1970 + offset) * 1000
        guard !millis.isNaN else { return now }
        let earliest = now - Int64(Limits.maximumReportAge * 1000)
        return Int64(min(max(millis, Double(earliest)), Double(now)))
    }
}

extension HTTPField.Name {
    static let deviceTime = HTTPField.Name(DeviceHeader.deviceTime)!
    /// A signed score report's counter.
    static let reportCounter = HTTPField.Name(ReportSignature.counterHeader)!
    /// A signed score report's signature.
    static let reportSignature = HTTPField.Name(ReportSignature.signatureHeader)!
}
