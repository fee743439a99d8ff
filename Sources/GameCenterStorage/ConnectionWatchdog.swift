import Synchronization

/// Fails PostgreSQL work that has waited ``Database/connectionWait`` for a connection while no work got one either
/// (a stopped or unreachable server), with one ticking task for the whole database.
///
/// Work registers while it waits (``register(cancel:work:)``) and marks the moment it holds a connection
/// (``WaitingWork/acquire()``); the watchdog's ``run()`` looks at the waiting work once per ``tick`` and cancels what
/// waited too long. Before, each query raced a `Task.sleep` of its own: a timer set and cancelled per query on the
/// happy path, where connections come at once.
final class ConnectionWatchdog: Sendable {
    /// How often ``run()`` looks at the waiting work: work is failed between ``Database/connectionWait`` and that
    /// plus one tick after it began to wait.
    static let tick = Duration.seconds(1)

    /// When work last got a connection: a pool that is merely busy keeps handing them out.
    let lastConnection = LastConnection()
    private let waiting = Mutex<Registry>(Registry())

    private struct Registry {
        var next: UInt64 = 0
        var entries: [UInt64: Entry] = [:]
    }

    private struct Entry {
        let since: ContinuousClock.Instant
        let work: WaitingWork
        let cancel: @Sendable () -> Void
    }

    /// Notes work that waits for a connection from now; `cancel` stops it. Returns the work's state and the key that
    /// ``unregister(_:)`` takes once the work ended.
    func register(cancel: @escaping @Sendable () -> Void, work: WaitingWork) -> UInt64 {
        let entry = Entry(since: .now, work: work, cancel: cancel)
        return waiting.withLock { registry in
            registry.next += 1
            registry.entries[registry.next] = entry
            return registry.next
        }
    }

    /// Forgets work registered with ``register(cancel:work:)``.
    func unregister(_ key: UInt64) {
        _ = waiting.withLock { $0.entries.removeValue(forKey: key) }
    }

    /// Until cancelled, cancels once per ``tick`` the work that waited ``Database/connectionWait`` for a connection
    /// while no work got one.
    func run() async {
        while (try? await Task.sleep(for: Self.tick)) != nil {
            expire(now: .now)
        }
    }

    /// Cancels the work that began to wait before `now` minus ``Database/connectionWait`` and still waits, unless
    /// work got a connection within that time.
    func expire(now: ContinuousClock.Instant) {
        guard !lastConnection.within(Database.connectionWait) else { return }
        let expired = waiting.withLock { registry in
            registry.entries.values.filter { now - $0.since >= Database.connectionWait }.filter { $0.work.expire() }
        }
        for entry in expired { entry.cancel() }
    }
}

/// One piece of work waiting for a connection: it either gets one or is expired by the watchdog, never both.
final class WaitingWork: Sendable {
    private let state = Atomic<UInt8>(0)
    private static let (waiting, acquired, expired): (UInt8, UInt8, UInt8) = (0, 1, 2)

    /// Marks the work as holding a connection; false when the watchdog expired it first (then it must not run).
    func acquire() -> Bool {
        state.compareExchange(expected: Self.waiting, desired: Self.acquired, ordering: .relaxed).exchanged
    }

    /// Marks the work as expired; false when it already holds a connection (then it runs to its end).
    func expire() -> Bool {
        state.compareExchange(expected: Self.waiting, desired: Self.expired, ordering: .relaxed).exchanged
    }

    /// Whether the watchdog expired the work.
    var isExpired: Bool { state.load(ordering: .relaxed) == Self.expired }
}
