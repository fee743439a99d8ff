import GameCenterProtocol
import GameCenterStorage
import Logging
import Synchronization

/// One signed-in session's view of its player's durable events, as every long-lived connection that carries them
/// consumes it: the device's realtime channel (``RealtimeConnection``) and the web app's `/live`.
///
/// - It subscribes to the bus before the backlog is read, so nothing appended in between is missed; a notice is a
///   wake-up (``Wake/eventsAppended``) and ``catchUp(after:_:)`` reads the stored events after the consumer's cursor,
///   ``batchSize`` at a time.
/// - Wake-ups wait in a bounded buffer (the newest ``bufferedWakes``): a lost notice loses nothing, as the next
///   catch-up reads from the cursor.
/// - It beats with the server's ``HeartbeatTicker``; at a beat, a session past its expiry ends
///   (``Wake/sessionEnded(reason:)`` with `expired`), as does one the bus says was signed out or revoked.
/// - Every write goes through ``watched(_:)``: one that has not finished ``writeTimeout`` after it began (the peer
///   stopped reading) closes the connection at the next beat (`abort`), so neither the beat nor the server's shutdown
///   waits on it.
final class PlayerEventStream: Sendable {
    /// Why the consumer wakes.
    enum Wake: Sendable {
        /// The player's events may have grown: catch up from the cursor.
        case eventsAppended
        /// The session ended (`signed_out`, `revoked`, `expired`, …): say so and close.
        case sessionEnded(reason: String)
        /// A heartbeat interval passed.
        case beat
        /// The consumer's own wake-up (the realtime channel's inbound traffic).
        case heard
        /// The peer closed its side.
        case inboundClosed
        /// The server is shutting down.
        case shutdown
    }

    /// Events read from storage per query while catching up.
    static let batchSize = 200
    /// Wake-ups kept while the consumer is busy (older ones are dropped; catch-up reads from the cursor).
    static let bufferedWakes = 64

    /// The wake-ups, in order.
    let wakes: AsyncStream<Wake>
    private let wake: AsyncStream<Wake>.Continuation
    private let database: Database
    private let session: AuthenticatedSession
    private let ticker: HeartbeatTicker
    private let writes: WriteWatch
    private let subscription: BusSubscription
    private let beat: Mutex<Int?>

    /// Opens `session`'s stream: subscribed to the bus and beating from now on, until ``close()``.
    init(
        session: AuthenticatedSession, database: Database, bus: any EventBus, ticker: HeartbeatTicker, clock: ServerClock,
        writeTimeout: Duration, logger: Logger, abort: @escaping @Sendable () -> Void
    ) {
        let (wakes, wake) = AsyncStream.makeStream(of: Wake.self, bufferingPolicy: .bufferingNewest(Self.bufferedWakes))
        self.wakes = wakes
        self.wake = wake
        self.database = database
        self.session = session
        self.ticker = ticker
        subscription = bus.subscribe(playerID: session.playerID, sessionID: session.sessionID) { notice in
            switch notice {
            case .playerEvents: wake.yield(.eventsAppended)
            case .sessionEnded(_, let reason): wake.yield(.sessionEnded(reason: reason))
            }
        }
        let writes = WriteWatch()
        self.writes = writes
        beat = Mutex(
            ticker.join {
                if writes.isOverdue(writeTimeout) {
                    // The write waits on a peer that does not read: closing the connection ends it (and the stream).
                    logger.info("a device or page stopped reading its events; closing", metadata: [LogKey.playerID: "\(session.playerID)"])
                    abort()
                }
                wake.yield(clock.nowMillis() >= session.expiresAt ? .sessionEnded(reason: "expired") : .beat)
            })
    }

    /// Adds a wake-up of the consumer's own.
    func yield(_ wake: Wake) {
        self.wake.yield(wake)
    }

    /// Leaves the bus and the beat, and ends ``wakes``; later calls do nothing.
    func close() {
        subscription.cancel()
        if let beat = beat.withLock({ $0.take() }) { ticker.leave(beat) }
        wake.finish()
    }

    deinit { close() }

    /// The player's latest event number, and whether the session was revoked meanwhile (the session was checked
    /// before the stream subscribed, perhaps from a cache: one revoked in between would never be told).
    func current() async throws -> (latest: Int64, revoked: Bool) {
        let (database, playerID, sessionID) = (database, session.playerID, session.sessionID)
        // Storage is read in a short-lived task: the long-lived connection task's allocator would otherwise keep the
        // deepest frames it ever held, for as long as the connection is open.
        return try await Task {
            try await database.read { storage in
                (try await storage.player(id: playerID)?.eventSeq ?? 0, try await storage.session(id: sessionID)?.revokedAt != nil)
            }
        }.value
    }

    /// Hands each stored event after `cursor` to `deliver`, in order; returns the last one's number.
    func catchUp(after cursor: Int64, _ deliver: (EventRecord) async throws -> Void) async throws -> Int64 {
        var cursor = cursor
        let (database, playerID) = (database, session.playerID)
        while true {
            let after = cursor
            let batch = try await Task {
                try await database.read { try await $0.events(playerID: playerID, after: after, limit: Self.batchSize) }
            }.value
            for record in batch {
                try await deliver(record)
                cursor = record.seq
            }
            if batch.count < Self.batchSize { return cursor }
        }
    }

    /// Runs one write to the peer under the write deadline.
    func watched(_ write: () async throws -> Void) async throws {
        writes.begin()
        defer { writes.end() }
        try await write()
    }
}
