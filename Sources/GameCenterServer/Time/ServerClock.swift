import Foundation
import Synchronization

/// The server's notion of now. With `--test-clock` the admin route `POST /admin/v1/clock` moves it forward, so
/// tests can watch scores age out of the daily and weekly leaderboards; without it the clock is the system's.
package final class ServerClock: Sendable {
    /// Whether the clock may be moved (`--test-clock`; never on by default).
    let isAdjustable: Bool
    private let offsetMillis = Atomic<Int64>(0)

    init(isAdjustable: Bool) {
        self.isAdjustable = isAdjustable
    }

    /// Now.
    func now() -> Date { Date().addingTimeInterval(Double(offsetMillis.load(ordering: .relaxed)) / 1000) }

    /// Now, as stored.
    package func nowMillis() -> Int64 { Int64((Date().timeIntervalSince1970 * 1000).rounded()) + offsetMillis.load(ordering: .relaxed) }

    /// Moves the clock forward; returns the new now.
    func advance(byMillis millis: Int64) -> Date {
        precondition(isAdjustable && millis >= 0)
        offsetMillis.add(millis, ordering: .relaxed)
        return now()
    }
}
