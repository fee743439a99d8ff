import Foundation
import Synchronization

/// The server's notion of now. With `--test-clock` the admin route `POST /admin/v1/clock` moves it forward, so
/// tests can watch scores age out of the daily and weekly leaderboards; without it the clock is the system's.
package final class ServerClock: Sendable {
    /// Whether the clock may be moved (`--test-clock`; never on by default).
    let isAdjustable: Bool
    private let offsetMillis = Atomic<Int64>(0)
    /// When frozen (``freeze(atMillis:)``), the time it stands at; `Int64.min` while it runs.
    private let frozenMillis = Atomic<Int64>(Int64.min)

    init(isAdjustable: Bool) {
        self.isAdjustable = isAdjustable
    }

    /// Now.
    func now() -> Date { Date(timeIntervalSince1970: Double(nowMillis()) / 1000) }

    /// Now, as stored.
    package func nowMillis() -> Int64 {
        let frozen = frozenMillis.load(ordering: .relaxed)
        guard frozen == Int64.min else { return frozen }
        return wallMillis() + offsetMillis.load(ordering: .relaxed)
    }

    /// The machine's time, which `--test-clock` never moves: for what nodes judge of each other (whether a node is
    /// alive, who holds a queue, how long a notice is kept), since each node's test clock moves on its own. Moving one
    /// node's clock once made the others look gone to it.
    func wallMillis() -> Int64 {
        Int64((Date().timeIntervalSince1970 * 1000).rounded())
    }

    /// Moves the clock forward; returns the new now.
    func advance(byMillis millis: Int64) -> Date {
        precondition(isAdjustable && millis >= 0)
        if frozenMillis.load(ordering: .relaxed) != Int64.min {
            frozenMillis.add(millis, ordering: .relaxed)
        } else {
            offsetMillis.add(millis, ordering: .relaxed)
        }
        return now()
    }

    /// Stops the clock at `millis` (not before now): it reads that until moved again, so a test can stand on either
    /// side of a boundary to the millisecond, on several servers at once. Returns the new now.
    func freeze(atMillis millis: Int64) -> Date {
        precondition(isAdjustable && millis >= nowMillis())
        frozenMillis.store(millis, ordering: .relaxed)
        return now()
    }
}
