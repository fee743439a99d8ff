/// A condition a test waited for did not hold in time.
public struct WaitTimeout: Error, CustomStringConvertible {
    /// What the test waited for, as the test put it.
    public let condition: String
    /// How long the test waited.
    public let waited: Duration

    /// Creates the error for `condition`, given up on after `waited`.
    public init(condition: String, waited: Duration) {
        self.condition = condition
        self.waited = waited
    }

    /// "timed out after … waiting for: …", for the test's failure.
    public var description: String { "timed out after \(waited) waiting for: \(condition)" }
}

/// Waits until `condition` holds, checking it again and again; throws ``WaitTimeout`` with `description` and the time
/// waited when it still does not hold after `timeout`. The one way the test targets wait for something to happen
/// (instead of sleeping and hoping it did): fast when the machine is fast, patient when it is loaded.
///
/// The condition is checked at once, then after 1 ms, the pause doubling up to 50 ms, and once more at the
/// deadline. An error the condition throws ends the wait with that error. `description` says what should happen
/// ("B heard A"); deadlines are generous (10 s by default), as a loaded CI machine is slow but a broken product
/// never gets there.
public func waitUntil(
    _ description: String,
    within timeout: Duration = .seconds(10),
    isolation: isolated (any Actor)? = #isolation,
    _ condition: () async throws -> Bool
) async throws {
    let clock = ContinuousClock()
    let start = clock.now
    var pause = Duration.milliseconds(1)
    while !(try await condition()) {
        let waited = clock.now - start
        guard waited < timeout else { throw WaitTimeout(condition: description, waited: waited) }
        try await Task.sleep(for: min(pause, timeout - waited))
        pause = min(pause * 2, .milliseconds(50))
    }
}

/// Lets `duration` pass before a test checks that something did NOT happen, where nothing observable tells when it
/// could no longer happen. `reason` says why no event, counter or marker can end the wait; prefer one of those
/// (then use ``waitUntil(_:within:isolation:_:)``): a quiet window only slows the test down, and a loaded machine
/// may still be too slow to show the fault within it.
public func quietPeriod(_ duration: Duration, because reason: String) async throws {
    try await Task.sleep(for: duration)
}
