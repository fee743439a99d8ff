import Foundation
import Synchronization
import Testing

@testable import GameCenterStorage

/// The watchdog's verdicts on PostgreSQL work, on an injected clock (no database), and a long statement on a database
/// that answers (the shared test PostgreSQL).
@Suite struct ConnectionWatchdogTests {
    /// Counts what the watchdog did to one piece of work: its caller answered (with the reason), its connection closed.
    final class Effects: HeldConnection {
        let reasons = Mutex<[String]>([])
        let closed = Atomic(0)
        /// Whether the connection closed by itself (its peer reset it).
        let reset = Atomic(false)

        var isClosed: Bool { reset.load(ordering: .relaxed) || closed.load(ordering: .relaxed) > 0 }

        func closeAtOnce() { closed.add(1, ordering: .relaxed) }
    }

    /// Registers work that began to wait at `start` and, when `held`, got its connection then.
    static func register(
        _ watchdog: ConnectionWatchdog, at start: ContinuousClock.Instant, held: Bool, limit: Duration? = Database.holdLimit
    ) -> Effects {
        let effects = Effects()
        let work = PooledWork(limit: limit, started: start)
        if held {
            let acquired = work.acquire(effects, at: start)
            #expect(acquired)
        }
        _ = watchdog.register(work) { reason in effects.reasons.withLock { $0.append(reason) } }
        return effects
    }

    @Test func workOnAConnectionIsGivenUpOnWhenTheDatabaseAnswersNothing() {
        let watchdog = ConnectionWatchdog()
        let start = ContinuousClock.now
        watchdog.lastAnswer.record(at: start)
        let effects = Self.register(watchdog, at: start, held: true)
        // Nothing answered for probeAfter: the watchdog asks the database, and gives up on nothing yet.
        #expect(watchdog.expire(now: start + ConnectionWatchdog.probeAfter))
        #expect(effects.reasons.withLock { $0 }.isEmpty)
        // Still nothing after connectionWait: the caller is answered and the connection closed, once.
        #expect(!watchdog.expire(now: start + Database.connectionWait))
        #expect(!watchdog.expire(now: start + Database.connectionWait + .seconds(1)))
        #expect(effects.reasons.withLock { $0 } == ["no answer from PostgreSQL within \(Database.connectionWait)"])
        #expect(effects.closed.load(ordering: .relaxed) == 1)
    }

    @Test func aLongStatementRunsOnWhileTheDatabaseAnswers() {
        let watchdog = ConnectionWatchdog()
        let start = ContinuousClock.now
        let effects = Self.register(watchdog, at: start, held: true)
        for second in 1...20 {
            let now = start + .seconds(second)
            // The database answers (other work, or the watchdog's question) a moment before each look.
            watchdog.lastAnswer.record(at: now - .milliseconds(500))
            #expect(!watchdog.expire(now: now))
        }
        #expect(effects.reasons.withLock { $0 }.isEmpty)
        #expect(effects.closed.load(ordering: .relaxed) == 0)
    }

    @Test func workHeldLongerThanItsLimitIsGivenUpOnWhateverTheDatabaseAnswers() {
        let watchdog = ConnectionWatchdog()
        let start = ContinuousClock.now
        let bound = Self.register(watchdog, at: start, held: true)
        let unbound = Self.register(watchdog, at: start, held: true, limit: nil)
        let now = start + Database.holdLimit
        watchdog.lastAnswer.record(at: now)
        watchdog.expire(now: now)
        #expect(bound.reasons.withLock { $0 } == ["work held a PostgreSQL connection longer than \(Database.holdLimit)"])
        #expect(bound.closed.load(ordering: .relaxed) == 1)
        #expect(unbound.reasons.withLock { $0 }.isEmpty, "migrations have no limit")
    }

    @Test func workWhoseConnectionClosedIsGivenUpOnAtOnceWhileTheDatabaseAnswers() {
        let watchdog = ConnectionWatchdog()
        let start = ContinuousClock.now
        let effects = Self.register(watchdog, at: start, held: true)
        effects.reset.store(true, ordering: .relaxed)
        watchdog.lastAnswer.record(at: start + .seconds(1))
        watchdog.expire(now: start + .seconds(1))
        #expect(effects.reasons.withLock { $0 } == ["the connection to PostgreSQL closed"])
    }

    @Test func workWaitingForAConnectionIsGivenUpOnOnlyWhileNoneAreHandedOut() {
        let watchdog = ConnectionWatchdog()
        let start = ContinuousClock.now
        let effects = Self.register(watchdog, at: start, held: false)
        // A busy pool: others got connections meanwhile.
        watchdog.lastConnection.record(at: start + .seconds(4))
        watchdog.expire(now: start + Database.connectionWait)
        #expect(effects.reasons.withLock { $0 }.isEmpty)
        watchdog.expire(now: start + .seconds(10))
        #expect(effects.reasons.withLock { $0 } == ["no connection to PostgreSQL within \(Database.connectionWait)"])
        #expect(effects.closed.load(ordering: .relaxed) == 0, "it held no connection")
    }

    @Test func workThatWasGivenUpOnNeverRuns() {
        let work = PooledWork(limit: nil, started: .now - .seconds(10))
        let expiry = work.expire(now: .now, connectionsFlow: false, databaseAnswers: false)
        #expect(expiry?.reason == "no connection to PostgreSQL within \(Database.connectionWait)")
        let acquired = work.acquire(Effects())
        #expect(!acquired)
    }

    @Test func theFirstSettlementOfAnOutcomeCounts() async throws {
        let outcome = Outcome<Int>()
        outcome.settle(.success(1))
        outcome.settle(.failure(StorageError.unavailable("late")))
        #expect(try await outcome.value == 1)
        let awaited = Outcome<Int>()
        let waiter = Task { try await awaited.value }
        awaited.settle(.failure(StorageError.unavailable("first")))
        awaited.settle(.success(2))
        await #expect(throws: StorageError.unavailable("first")) { try await waiter.value }
    }

    @Test(.enabled(if: TestDatabases.all.contains("postgres"), "needs GAMECENTER_TEST_POSTGRES_URL"))
    func aStatementLongerThanTheWaitOnAnAnsweringDatabaseSucceeds() async throws {
        try await TestDatabases.with("postgres") { database in
            let started = ContinuousClock.now
            try await database.read { try await $0.sql.raw("SELECT pg_sleep(8)").run() }
            #expect(ContinuousClock.now - started >= .seconds(8))
            try await database.checkReady()
        }
    }

    /// A migration is one transaction of a hundred statements: the watchdog hears each answered, not only the end of
    /// the work (before, a long one on a loaded machine was given up on when the watchdog's question came late).
    @Test(.enabled(if: TestDatabases.all.contains("postgres"), "needs GAMECENTER_TEST_POSTGRES_URL"))
    func eachStatementAnsweredInsideWorkTellsTheWatchdogTheDatabaseAnswers() async throws {
        try await TestDatabases.with("postgres") { database in
            try await database.write { session in
                // Longer than a look's window, shorter than the wait for the watchdog's own question.
                try await session.sql.raw("SELECT pg_sleep(1.5)").run()
                #expect(database.watchdog.lastAnswer.within(.milliseconds(500), of: .now), "the statement's answer was heard")
            }
        }
    }
}
