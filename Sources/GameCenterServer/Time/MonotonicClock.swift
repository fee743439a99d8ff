import Synchronization

/// The server's monotonic time, for intervals — how long a request waited in the matchmaking queue, when a match's
/// fill time runs out — beside ``ServerClock``'s wall time, which is stored and which `--test-clock` moves. It never
/// goes backwards and nothing moves it but time, except in tests: ``manual(_:)`` gives a clock that moves
/// only when told (``ManualMonotonicTime/advance(byMillis:)``), so rules about time run without waiting for it.
package struct MonotonicClock: Sendable {
    private let readMillis: @Sendable () -> Int64

    /// Milliseconds since an arbitrary, fixed origin.
    package func nowMillis() -> Int64 { readMillis() }

    /// The system's monotonic clock, counted from when this clock was made.
    package static func system() -> MonotonicClock {
        let origin = ContinuousClock.now
        return MonotonicClock {
            let (seconds, attoseconds) = (ContinuousClock.now - origin).components
            return seconds * 1000 + attoseconds / 1_000_000_000_000_000
        }
    }

    /// A clock that reads `time`, which a test moves by hand.
    static func manual(_ time: ManualMonotonicTime) -> MonotonicClock {
        MonotonicClock { time.millis.load(ordering: .relaxed) }
    }

    private init(_ readMillis: @escaping @Sendable () -> Int64) {
        self.readMillis = readMillis
    }
}

/// The time a ``MonotonicClock/manual(_:)`` clock reads; it moves only forward, when a test says so.
final class ManualMonotonicTime: Sendable {
    fileprivate let millis: Atomic<Int64>

    /// Time standing at `start` milliseconds.
    init(startingAt start: Int64 = 0) {
        millis = Atomic(start)
    }

    /// Moves the time forward by `millis` (≥ 0).
    func advance(byMillis millis: Int64) {
        precondition(millis >= 0, "monotonic time does not go back")
        self.millis.add(millis, ordering: .relaxed)
    }
}
