import SQLKit

extension StorageSession {
    /// A player's entry in one occurrence of a tournament board, or nil when they have not joined it.
    public func tournamentEntry(_ board: TournamentOccurrence, playerID: String) async throws -> TournamentEntryRecord? {
        try await sql.raw(
            """
            SELECT attempts_used, extra_attempts, joined_at FROM tournament_entries
            WHERE bundle_id = \(bind: board.bundleID) AND environment = \(bind: board.environment) AND category = \(bind: board.category)
              AND occurrence = \(bind: board.occurrence) AND player_id = \(bind: playerID)
            """
        ).first().map(Self.tournamentEntry)
    }

    /// Enters a player in one occurrence of a tournament board unless `maxSize` players are in already: returns their
    /// entry (the one they had, when they had joined), or nil when the occurrence is full. The entry is inserted
    /// first (a second join of the same player, even at once, finds it), then the count, a row every join updates,
    /// so joins at once on any node are counted one after the other; a join past the size takes both back.
    public func joinTournament(_ board: TournamentOccurrence, playerID: String, maxSize: Int?, now: Int64) async throws -> TournamentEntryRecord? {
        let inserted = try await sql.raw(
            """
            INSERT INTO tournament_entries (bundle_id, environment, category, occurrence, player_id, attempts_used, extra_attempts, joined_at)
            VALUES (\(bind: board.bundleID), \(bind: board.environment), \(bind: board.category), \(bind: board.occurrence), \(bind: playerID), 0, 0,
                \(bind: now))
            ON CONFLICT (bundle_id, environment, category, occurrence, player_id) DO NOTHING
            RETURNING joined_at
            """
        ).first()
        guard inserted != nil else { return try await tournamentEntry(board, playerID: playerID) }
        let entrants =
            try await sql.raw(
                """
                INSERT INTO tournament_sizes (bundle_id, environment, category, occurrence, entrants)
                VALUES (\(bind: board.bundleID), \(bind: board.environment), \(bind: board.category), \(bind: board.occurrence), 1)
                ON CONFLICT (bundle_id, environment, category, occurrence) DO UPDATE SET entrants = tournament_sizes.entrants + 1
                RETURNING entrants
                """
            ).first().map { try $0.int("entrants") } ?? 0
        if let maxSize, entrants > Int64(maxSize) {
            try await sql.raw(
                """
                DELETE FROM tournament_entries
                WHERE bundle_id = \(bind: board.bundleID) AND environment = \(bind: board.environment) AND category = \(bind: board.category)
                  AND occurrence = \(bind: board.occurrence) AND player_id = \(bind: playerID)
                """
            ).run()
            try await sql.raw(
                """
                UPDATE tournament_sizes SET entrants = entrants - 1
                WHERE bundle_id = \(bind: board.bundleID) AND environment = \(bind: board.environment) AND category = \(bind: board.category)
                  AND occurrence = \(bind: board.occurrence)
                """
            ).run()
            return nil
        }
        return TournamentEntryRecord(attemptsUsed: 0, extraAttempts: 0, joinedAt: now)
    }

    /// Starts one occurrence of a tournament board now, before its scheduled start; false when it had been started
    /// early before.
    public func openTournament(_ board: TournamentOccurrence, now: Int64) async throws -> Bool {
        try await sql.raw(
            """
            INSERT INTO tournament_sizes (bundle_id, environment, category, occurrence, entrants, opened_at)
            VALUES (\(bind: board.bundleID), \(bind: board.environment), \(bind: board.category), \(bind: board.occurrence), 0, \(bind: now))
            ON CONFLICT (bundle_id, environment, category, occurrence) DO UPDATE SET opened_at = \(bind: now)
            WHERE tournament_sizes.opened_at IS NULL
            RETURNING opened_at
            """
        ).first() != nil
    }

    /// The tournament occurrences started early whose scheduled start is after `now`, with when each was started.
    public func tournamentsStartedEarly(scheduledAfter now: Int64) async throws -> [(board: TournamentOccurrence, openedAt: Int64)] {
        try await sql.raw(
            """
            SELECT bundle_id, environment, category, occurrence, opened_at FROM tournament_sizes
            WHERE opened_at IS NOT NULL AND occurrence > \(bind: now)
            """
        ).all().map { row in
            (
                TournamentOccurrence(
                    bundleID: try row.string("bundle_id"), environment: try row.string("environment"), category: try row.string("category"),
                    occurrence: try row.int("occurrence")),
                try row.int("opened_at")
            )
        }
    }

    /// Ends one occurrence of a tournament board now; false when it had been ended before.
    public func closeTournament(_ board: TournamentOccurrence, now: Int64) async throws -> Bool {
        try await sql.raw(
            """
            INSERT INTO tournament_sizes (bundle_id, environment, category, occurrence, entrants, closed_at)
            VALUES (\(bind: board.bundleID), \(bind: board.environment), \(bind: board.category), \(bind: board.occurrence), 0, \(bind: now))
            ON CONFLICT (bundle_id, environment, category, occurrence) DO UPDATE SET closed_at = \(bind: now)
            WHERE tournament_sizes.closed_at IS NULL
            RETURNING closed_at
            """
        ).first() != nil
    }

    /// When one occurrence of a tournament board was ended early, or nil while it runs. With `locking`, on PostgreSQL
    /// the row is read with a shared lock held to the end of the transaction: a report checking it commits before an
    /// end that waits for it, or waits for the end and sees it.
    public func tournamentClosedAt(_ board: TournamentOccurrence, locking: Bool = true) async throws -> Int64? {
        let lock: SQLQueryString = locking && engine == .postgres ? "FOR SHARE" : ""
        return try await sql.raw(
            """
            SELECT closed_at FROM tournament_sizes
            WHERE bundle_id = \(bind: board.bundleID) AND environment = \(bind: board.environment) AND category = \(bind: board.category)
              AND occurrence = \(bind: board.occurrence) \(lock)
            """
        ).first().flatMap { try $0.optionalInt("closed_at") }
    }

    /// How many players are in one occurrence of a tournament board.
    public func tournamentEntrants(_ board: TournamentOccurrence) async throws -> Int64 {
        try await sql.raw(
            """
            SELECT entrants FROM tournament_sizes
            WHERE bundle_id = \(bind: board.bundleID) AND environment = \(bind: board.environment) AND category = \(bind: board.category)
              AND occurrence = \(bind: board.occurrence)
            """
        ).first().map { try $0.int("entrants") } ?? 0
    }

    /// Counts `count` attempts of a joined player, when the board's `attempts` and their extra ones allow them (nil: no
    /// limit); returns the entry after, or nil when they are not allowed (nothing is counted then).
    public func useTournamentAttempts(_ board: TournamentOccurrence, playerID: String, count: Int, attempts: Int?) async throws
        -> TournamentEntryRecord?
    {
        let limit = attempts.map { SQLRaw(" AND attempts_used + \(count) <= \($0) + extra_attempts") } ?? SQLRaw("")
        return try await sql.raw(
            """
            UPDATE tournament_entries SET attempts_used = attempts_used + \(bind: Int64(count))
            WHERE bundle_id = \(bind: board.bundleID) AND environment = \(bind: board.environment) AND category = \(bind: board.category)
              AND occurrence = \(bind: board.occurrence) AND player_id = \(bind: playerID)\(limit)
            RETURNING attempts_used, extra_attempts, joined_at
            """
        ).first().map(Self.tournamentEntry)
    }

    /// Grants a joined player `extra` attempts more in one occurrence; returns the entry after, or nil when they have
    /// not joined it.
    public func grantTournamentAttempts(_ board: TournamentOccurrence, playerID: String, extra: Int) async throws -> TournamentEntryRecord? {
        try await sql.raw(
            """
            UPDATE tournament_entries SET extra_attempts = extra_attempts + \(bind: Int64(extra))
            WHERE bundle_id = \(bind: board.bundleID) AND environment = \(bind: board.environment) AND category = \(bind: board.category)
              AND occurrence = \(bind: board.occurrence) AND player_id = \(bind: playerID)
            RETURNING attempts_used, extra_attempts, joined_at
            """
        ).first().map(Self.tournamentEntry)
    }
}

extension StorageSession {
    /// A row of `tournament_entries` (attempts used, extra attempts, when joined).
    fileprivate static func tournamentEntry(_ row: any SQLRow) throws -> TournamentEntryRecord {
        TournamentEntryRecord(
            attemptsUsed: try row.int("attempts_used"), extraAttempts: try row.int("extra_attempts"), joinedAt: try row.int("joined_at"))
    }
}

/// One occurrence of a tournament board.
public struct TournamentOccurrence: Sendable, Hashable {
    public var bundleID: String
    public var environment: String
    public var category: String
    /// Its start, in milliseconds since 1970.
    public var occurrence: Int64

    public init(bundleID: String, environment: String, category: String, occurrence: Int64) {
        self.bundleID = bundleID
        self.environment = environment
        self.category = category
        self.occurrence = occurrence
    }
}

/// A player's entry in one occurrence of a tournament board.
public struct TournamentEntryRecord: Sendable, Equatable {
    public var attemptsUsed: Int64
    /// Granted beyond the board's attempts.
    public var extraAttempts: Int64
    public var joinedAt: Int64
}
