import Synchronization

/// Gives up on PostgreSQL work that a stopped, unreachable or silent database holds, with one ticking task for the
/// whole database: work that has waited ``Database/connectionWait`` for a connection while no work got one, work whose
/// connection closed under it (PostgresNIO never answers a query sent on a closed connection), work that has held its
/// connection ``Database/connectionWait`` while the database answered nothing, and work that has held it longer than
/// its limit (``Database/holdLimit``).
///
/// Work registers from its start (``register(_:giveUp:)``) and marks the moment it holds a connection
/// (``PooledWork/acquire(_:at:)``); the watchdog's ``run(probe:)`` looks at the registered work once per ``tick``
/// and gives up on what is stuck: its caller is answered, its connection closed. Before, each query raced a
/// `Task.sleep` of its own: a timer set and cancelled per query on the happy path, where connections come at once.
/// Work on a long statement is not stuck while the database answers: when work has held its connection ``probeAfter``
/// while nothing was answered, the watchdog asks the database a question of its own (`SELECT 1`).
final class ConnectionWatchdog: Sendable {
    /// How often ``run(probe:)`` looks at the registered work: work is given up on between ``Database/connectionWait``
    /// and that plus one tick after it began to wait (or got its connection).
    static let tick = Duration.seconds(1)

    /// How long work holds a connection while the database answers nothing before the watchdog asks it a question of
    /// its own: a lone long statement on a database that answers is not a silent database.
    static let probeAfter = Duration.seconds(2)

    /// When work last got a connection: a pool that is merely busy keeps handing them out.
    let lastConnection = LastOccurrence()
    /// When the database last answered a statement (the watchdog's question included), or work on a connection ended:
    /// a database that answers.
    let lastAnswer = LastOccurrence()
    private let registered = Mutex<Registry>(Registry())
    private let probing = Atomic(false)

    private struct Registry {
        var next: UInt64 = 0
        var entries: [UInt64: Entry] = [:]
    }

    private struct Entry {
        let work: PooledWork
        let giveUp: @Sendable (_ reason: String) -> Void
    }

    /// Notes `work`, which starts now; `giveUp` answers its caller with the reason and stops it. Returns the key that
    /// ``unregister(_:)`` takes once the work ended.
    func register(_ work: PooledWork, giveUp: @escaping @Sendable (_ reason: String) -> Void) -> UInt64 {
        let entry = Entry(work: work, giveUp: giveUp)
        return registered.withLock { registry in
            registry.next += 1
            registry.entries[registry.next] = entry
            return registry.next
        }
    }

    /// Forgets work registered with ``register(_:giveUp:)``.
    func unregister(_ key: UInt64) {
        _ = registered.withLock { $0.entries.removeValue(forKey: key) }
    }

    /// Until cancelled, gives up once per ``tick`` on the stuck work, and runs `probe` (a trivial query, one at a
    /// time) when work has held its connection ``probeAfter`` while the database answered nothing.
    ///
    /// The probe runs in a task of its own: it is work like any other, which only this loop gives up on when the
    /// database is silent, so the loop must not wait for it when it ends (the database closing would hang).
    func run(probe: @escaping @Sendable () async -> Void) async {
        while (try? await Task.sleep(for: Self.tick)) != nil {
            guard expire(now: .now), probing.compareExchange(expected: false, desired: true, ordering: .relaxed).exchanged else { continue }
            Task {
                await probe()
                self.probing.store(false, ordering: .relaxed)
            }
        }
    }

    /// Gives up on the work that is stuck at `now` (see ``PooledWork/expire(now:connectionsFlow:databaseAnswers:)``);
    /// returns whether the database should be asked whether it answers: work has held its connection ``probeAfter``
    /// while nothing was answered.
    @discardableResult
    func expire(now: ContinuousClock.Instant) -> Bool {
        let connectionsFlow = lastConnection.within(Database.connectionWait, of: now)
        let databaseAnswers = lastAnswer.within(Database.connectionWait, of: now)
        let quiet = !lastAnswer.within(Self.probeAfter, of: now)
        let (expired, probe) = registered.withLock { registry in
            var probe = false
            var expired: [(Entry, PooledWork.Expiry)] = []
            for entry in registry.entries.values {
                if let expiry = entry.work.expire(now: now, connectionsFlow: connectionsFlow, databaseAnswers: databaseAnswers) {
                    expired.append((entry, expiry))
                } else if quiet && entry.work.holds(since: now - Self.probeAfter) {
                    probe = true
                }
            }
            return (expired, probe)
        }
        for (entry, expiry) in expired {
            entry.giveUp(expiry.reason)
            expiry.connection?.closeAtOnce()
        }
        return probe
    }
}

/// One piece of PostgreSQL work, from its start to the watchdog's verdict: it waits for a connection, holds one, or
/// was given up on (expired) — holding and expired exclude each other.
final class PooledWork: Sendable {
    /// Why the watchdog gave up on work, and the connection to close (nil when it held none, or that one closed).
    struct Expiry: Sendable {
        /// For the caller's `StorageError.unavailable`.
        let reason: String
        /// The connection the work holds, to close so that the pool never hands it out again (nil: nothing to close).
        let connection: (any HeldConnection)?
    }

    private enum State {
        case waiting
        case holding(since: ContinuousClock.Instant, connection: any HeldConnection)
        case expired
    }

    /// When the work began to wait for a connection.
    let started: ContinuousClock.Instant
    /// The longest the work may hold a connection (nil: no limit).
    let limit: Duration?
    private let state = Mutex<State>(.waiting)

    /// Work that begins to wait for a connection at `started` and may hold it for `limit` at most.
    init(limit: Duration?, started: ContinuousClock.Instant = .now) {
        self.limit = limit
        self.started = started
    }

    /// Marks the work as holding `connection` from `instant`; false when the watchdog expired it first (then it must
    /// not run).
    func acquire(_ connection: any HeldConnection, at instant: ContinuousClock.Instant = .now) -> Bool {
        state.withLock { state in
            guard case .waiting = state else { return false }
            state = .holding(since: instant, connection: connection)
            return true
        }
    }

    /// Whether the work holds a connection it got at `instant` or before.
    func holds(since instant: ContinuousClock.Instant) -> Bool {
        state.withLock { state in
            guard case .holding(let since, _) = state else { return false }
            return since <= instant
        }
    }

    /// Marks the work as expired if it is stuck at `now`: it has waited ``Database/connectionWait`` for a connection
    /// while none were handed out (`connectionsFlow` false), its connection closed, it has held one
    /// ``Database/connectionWait`` while the database answered nothing (`databaseAnswers` false), or it has held one
    /// longer than its ``limit``. Returns why, or nil when the work runs on.
    func expire(now: ContinuousClock.Instant, connectionsFlow: Bool, databaseAnswers: Bool) -> Expiry? {
        state.withLock { state in
            switch state {
            case .waiting where !connectionsFlow && now - started >= Database.connectionWait:
                state = .expired
                return Expiry(reason: "no connection to PostgreSQL within \(Database.connectionWait)", connection: nil)
            case .holding(_, let connection) where connection.isClosed:
                state = .expired
                return Expiry(reason: "the connection to PostgreSQL closed", connection: nil)
            case .holding(let since, let connection) where !databaseAnswers && now - since >= Database.connectionWait:
                state = .expired
                return Expiry(reason: "no answer from PostgreSQL within \(Database.connectionWait)", connection: connection)
            case .holding(let since, let connection) where limit.map { now - since >= $0 } ?? false:
                state = .expired
                return Expiry(reason: "work held a PostgreSQL connection longer than \(limit ?? .zero)", connection: connection)
            case .waiting, .holding, .expired:
                return nil
            }
        }
    }
}

/// A connection work holds, as the watchdog sees it (a PostgreSQL connection; a stand-in in tests).
protocol HeldConnection: Sendable {
    /// Whether the connection is closed: no query sent on it will be answered.
    var isClosed: Bool { get }

    /// Closes the connection without waiting for the server: the query it runs fails at once, and the pool drops it.
    func closeAtOnce()
}
