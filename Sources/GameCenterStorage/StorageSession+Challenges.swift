import SQLKit

/// A challenge's row.
public struct ChallengeRecord: Sendable, Equatable {
    public var challengeID: String
    public var bundleID: String
    public var environment: String
    public var definition: String
    public var category: String
    /// On a recurring board, the occurrence (its start, milliseconds since 1970).
    public var occurrence: Int64?
    public var creatorID: String
    public var code: String
    public var createdAt: Int64
    public var endsAt: Int64
    public var rematchOf: String?
    public var endingSoonAt: Int64?
    public var endedAt: Int64?

    public init(
        challengeID: String, bundleID: String, environment: String, definition: String, category: String, occurrence: Int64?, creatorID: String,
        code: String, createdAt: Int64, endsAt: Int64, rematchOf: String?, endingSoonAt: Int64? = nil, endedAt: Int64? = nil
    ) {
        self.challengeID = challengeID
        self.bundleID = bundleID
        self.environment = environment
        self.definition = definition
        self.category = category
        self.occurrence = occurrence
        self.creatorID = creatorID
        self.code = code
        self.createdAt = createdAt
        self.endsAt = endsAt
        self.rematchOf = rematchOf
        self.endingSoonAt = endingSoonAt
        self.endedAt = endedAt
    }
}

/// A player of a challenge, as stored.
public struct ChallengeParticipantRecord: Sendable, Equatable {
    public var playerID: String
    public var alias: String
    /// `invited`, `joined` or `left`.
    public var status: String
    public var invitedAt: Int64
    public var joinedAt: Int64?
    /// The last score id stored when they joined.
    public var afterScore: Int64
    /// Their standing frozen when the challenge ended.
    public var finalValue: Int64?
    public var finalAttempts: Int64?
}

/// A player in a running challenge: on which board, until when.
public struct ChallengeJoin: Sendable, Hashable {
    public var playerID: String
    public var bundleID: String
    public var environment: String
    public var category: String
    public var endsAt: Int64

    public init(playerID: String, bundleID: String, environment: String, category: String, endsAt: Int64) {
        self.playerID = playerID
        self.bundleID = bundleID
        self.environment = environment
        self.category = category
        self.endsAt = endsAt
    }
}

/// The scores of one participant that count in a challenge: their best and how many of their scores since joining
/// counted.
public struct ChallengeStanding: Sendable, Equatable {
    public var best: Int64?
    public var attemptsUsed: Int

    public init(best: Int64?, attemptsUsed: Int) {
        self.best = best
        self.attemptsUsed = attemptsUsed
    }
}

/// What a challenge counts of a participant's scores.
public struct ChallengeScoring: Sendable {
    public var bundleID: String
    public var environment: String
    public var category: String
    public var occurrence: Int64?
    /// Scores earned at or after this instant do not count.
    public var endsAt: Int64
    /// Higher values are better.
    public var higherIsBetter: Bool
    /// Count a participant's best from before they joined too (a challenge that is not repeatable).
    public var includesEarlierBest: Bool
    /// The scores after joining that count (nil: all).
    public var attempts: Int?

    public init(
        bundleID: String, environment: String, category: String, occurrence: Int64?, endsAt: Int64, higherIsBetter: Bool, includesEarlierBest: Bool,
        attempts: Int?
    ) {
        self.bundleID = bundleID
        self.environment = environment
        self.category = category
        self.occurrence = occurrence
        self.endsAt = endsAt
        self.higherIsBetter = higherIsBetter
        self.includesEarlierBest = includesEarlierBest
        self.attempts = attempts
    }
}

extension StorageSession {
    /// Stores a new challenge; false (nothing stored) when its code is taken.
    public func insertChallenge(_ challenge: ChallengeRecord) async throws -> Bool {
        try await sql.raw(
            """
            INSERT INTO challenges (challenge_id, bundle_id, environment, definition, category, occurrence, creator_id, code, created_at, ends_at,
                rematch_of, ending_soon_at, ended_at)
            VALUES (\(bind: challenge.challengeID), \(bind: challenge.bundleID), \(bind: challenge.environment), \(bind: challenge.definition),
                \(bind: challenge.category), \(bind: challenge.occurrence), \(bind: challenge.creatorID), \(bind: challenge.code),
                \(bind: challenge.createdAt), \(bind: challenge.endsAt), \(bind: challenge.rematchOf), \(bind: challenge.endingSoonAt), NULL)
            ON CONFLICT DO NOTHING
            RETURNING challenge_id
            """
        ).first() != nil
    }

    /// The challenge with this id, or nil.
    public func challenge(id: String) async throws -> ChallengeRecord? {
        try await sql.raw("SELECT * FROM challenges WHERE challenge_id = \(bind: id)").first().map(Self.challengeRecord)
    }

    /// The challenge with this code, or nil.
    public func challenge(code: String) async throws -> ChallengeRecord? {
        try await sql.raw("SELECT * FROM challenges WHERE code = \(bind: code)").first().map(Self.challengeRecord)
    }

    /// Locks a challenge's row until the transaction ends (joins are counted one after the other on every node).
    public func lockChallenge(id: String) async throws {
        try await sql.raw("UPDATE challenges SET code = code WHERE challenge_id = \(bind: id)").run()
    }

    /// A challenge's players, with their aliases, in the order they were invited.
    public func challengeParticipants(challengeID: String) async throws -> [ChallengeParticipantRecord] {
        try await sql.raw(
            """
            SELECT c.*, p.alias FROM challenge_participants c JOIN players p ON p.player_id = c.player_id
            WHERE c.challenge_id = \(bind: challengeID) ORDER BY c.invited_at, c.player_id
            """
        ).all().map { row in
            ChallengeParticipantRecord(
                playerID: try row.string("player_id"), alias: try row.string("alias"), status: try row.string("status"),
                invitedAt: try row.int("invited_at"), joinedAt: try row.optionalInt("joined_at"), afterScore: try row.int("after_score"),
                finalValue: try row.optionalInt("final_value"), finalAttempts: try row.optionalInt("final_attempts"))
        }
    }

    /// Adds players as invited (those already in the challenge stay as they are).
    public func inviteToChallenge(challengeID: String, playerIDs: [String], now: Int64) async throws {
        for playerID in playerIDs {
            try await sql.raw(
                """
                INSERT INTO challenge_participants (challenge_id, player_id, status, invited_at, joined_at, after_score)
                VALUES (\(bind: challengeID), \(bind: playerID), 'invited', \(bind: now), NULL, 0)
                ON CONFLICT (challenge_id, player_id) DO NOTHING
                """
            ).run()
        }
    }

    /// Makes a player a joined participant from now on: their scores stored after `afterScore` are theirs to count.
    /// Inserts them when they were not invited; one who left and joins again starts over.
    public func joinChallenge(challengeID: String, playerID: String, afterScore: Int64, now: Int64) async throws {
        try await sql.raw(
            """
            INSERT INTO challenge_participants (challenge_id, player_id, status, invited_at, joined_at, after_score)
            VALUES (\(bind: challengeID), \(bind: playerID), 'joined', \(bind: now), \(bind: now), \(bind: afterScore))
            ON CONFLICT (challenge_id, player_id) DO UPDATE SET status = 'joined', joined_at = \(bind: now), after_score = \(bind: afterScore)
            """
        ).run()
    }

    /// Marks a player as having left; false when they were not in the challenge.
    public func leaveChallenge(challengeID: String, playerID: String) async throws -> Bool {
        try await sql.raw(
            """
            UPDATE challenge_participants SET status = 'left'
            WHERE challenge_id = \(bind: challengeID) AND player_id = \(bind: playerID) AND status <> 'left'
            RETURNING player_id
            """
        ).first() != nil
    }

    /// A participant's standing in a challenge from the stored scores: those after `afterScore` (the first
    /// `scoring.attempts` of them) and, when the challenge counts it, their best from before; scores with an id of
    /// `below` or more are left out (to see the standing before a report).
    public func challengeStanding(_ scoring: ChallengeScoring, playerID: String, afterScore: Int64, below: Int64 = .max) async throws
        -> ChallengeStanding
    {
        let best = scoring.higherIsBetter ? "MAX(value)" : "MIN(value)"
        let scope: SQLQueryString = """
            player_id = \(bind: playerID) AND bundle_id = \(bind: scoring.bundleID) AND environment = \(bind: scoring.environment) \
            AND category = \(bind: scoring.category) AND score_id < \(bind: below)
            """
        let occurrence: SQLQueryString = scoring.occurrence.map { "AND occurrence = \(bind: $0)" } ?? ""
        let limit: SQLQueryString = scoring.attempts.map { "LIMIT \(bind: Int64($0))" } ?? ""
        let after = try await sql.raw(
            """
            SELECT COUNT(*) AS used, \(unsafeRaw: best) AS best FROM (
                SELECT value FROM scores WHERE \(scope) AND score_id > \(bind: afterScore) AND reported_at < \(bind: scoring.endsAt) \(occurrence)
                ORDER BY score_id \(limit)
            ) counted
            """
        ).first()
        var standing = ChallengeStanding(best: try after?.optionalInt("best"), attemptsUsed: Int(try after?.int("used") ?? 0))
        if scoring.includesEarlierBest,
            let earlier = try await sql.raw(
                "SELECT \(unsafeRaw: best) AS best FROM scores WHERE \(scope) AND score_id <= \(bind: afterScore) \(occurrence)"
            ).first().flatMap({ try $0.optionalInt("best") })
        {
            standing.best = standing.best.map { scoring.higherIsBetter ? max($0, earlier) : min($0, earlier) } ?? earlier
        }
        return standing
    }

    /// A player's challenges in a game (nil: in every game): every one they are in (or were invited to) that is
    /// running or ended at or after `endedSince`, newest first, at most `limit`.
    public func challenges(of playerID: String, bundleID: String?, environment: String, endedSince: Int64, limit: Int) async throws
        -> [ChallengeRecord]
    {
        let game: SQLQueryString = bundleID.map { "AND c.bundle_id = \(bind: $0)" } ?? ""
        return try await sql.raw(
            """
            SELECT c.* FROM challenges c JOIN challenge_participants p ON p.challenge_id = c.challenge_id
            WHERE p.player_id = \(bind: playerID) \(game) AND c.environment = \(bind: environment)
              AND (c.ended_at IS NULL OR c.ends_at >= \(bind: endedSince))
            ORDER BY c.created_at DESC, c.challenge_id LIMIT \(bind: Int64(limit))
            """
        ).all().map(Self.challengeRecord)
    }

    /// The running challenges a player has joined, on these boards of a game.
    public func runningChallenges(of playerID: String, bundleID: String, environment: String, categories: [String], now: Int64) async throws
        -> [ChallengeRecord]
    {
        try await sql.raw(
            """
            SELECT c.* FROM challenge_participants p JOIN challenges c ON c.challenge_id = p.challenge_id
            WHERE p.player_id = \(bind: playerID) AND p.status = 'joined' AND c.bundle_id = \(bind: bundleID)
              AND c.environment = \(bind: environment) AND c.category IN (\(binds: categories)) AND c.ended_at IS NULL
              AND c.ends_at > \(bind: now)
            """
        ).all().map(Self.challengeRecord)
    }

    /// The players who joined a running challenge at or after `since`, with its board and end: the joins a node
    /// follows.
    public func challengeJoins(since: Int64) async throws -> [ChallengeJoin] {
        try await sql.raw(
            """
            SELECT p.player_id, c.bundle_id, c.environment, c.category, c.ends_at
            FROM challenge_participants p JOIN challenges c ON c.challenge_id = p.challenge_id
            WHERE p.joined_at >= \(bind: since) AND p.status = 'joined' AND c.ended_at IS NULL
            """
        ).all().map { row in
            ChallengeJoin(
                playerID: try row.string("player_id"), bundleID: try row.string("bundle_id"), environment: try row.string("environment"),
                category: try row.string("category"), endsAt: try row.int("ends_at"))
        }
    }

    /// How many running challenges a player is in (invited or joined).
    public func runningChallengeCount(of playerID: String) async throws -> Int {
        Int(
            try await sql.raw(
                """
                SELECT COUNT(*) AS n FROM challenge_participants p JOIN challenges c ON c.challenge_id = p.challenge_id
                WHERE p.player_id = \(bind: playerID) AND p.status <> 'left' AND c.ended_at IS NULL
                """
            ).first()?.int("n") ?? 0)
    }

    /// Running challenges that end before `before` (with `unnoticed`, only those whose one-hour notice has not gone
    /// out), soonest first: the clock's work.
    public func challengesEnding(before: Int64, unnoticed: Bool, limit: Int) async throws -> [ChallengeRecord] {
        let notice: SQLQueryString = unnoticed ? "AND ending_soon_at IS NULL" : ""
        return try await sql.raw(
            """
            SELECT * FROM challenges WHERE ended_at IS NULL AND ends_at < \(bind: before) \(notice) ORDER BY ends_at LIMIT \(bind: Int64(limit))
            """
        ).all().map(Self.challengeRecord)
    }

    /// Records that a challenge's one-hour notice went out; false when it had been (by this node or another).
    public func markChallengeEndingSoon(id: String, now: Int64) async throws -> Bool {
        try await sql.raw(
            "UPDATE challenges SET ending_soon_at = \(bind: now) WHERE challenge_id = \(bind: id) AND ending_soon_at IS NULL RETURNING challenge_id"
        ).first() != nil
    }

    /// Records that a challenge ended; false when it had been (by this node or another).
    public func markChallengeEnded(id: String, now: Int64) async throws -> Bool {
        try await sql.raw(
            "UPDATE challenges SET ended_at = \(bind: now) WHERE challenge_id = \(bind: id) AND ended_at IS NULL RETURNING challenge_id"
        ).first() != nil
    }

    /// Freezes a participant's standing when the challenge ends.
    public func freezeChallengeStanding(challengeID: String, playerID: String, _ standing: ChallengeStanding) async throws {
        try await sql.raw(
            """
            UPDATE challenge_participants SET final_value = \(bind: standing.best), final_attempts = \(bind: Int64(standing.attemptsUsed))
            WHERE challenge_id = \(bind: challengeID) AND player_id = \(bind: playerID)
            """
        ).run()
    }

    fileprivate static func challengeRecord(_ row: any SQLRow) throws -> ChallengeRecord {
        ChallengeRecord(
            challengeID: try row.string("challenge_id"), bundleID: try row.string("bundle_id"), environment: try row.string("environment"),
            definition: try row.string("definition"), category: try row.string("category"), occurrence: try row.optionalInt("occurrence"),
            creatorID: try row.string("creator_id"), code: try row.string("code"), createdAt: try row.int("created_at"), endsAt: try row.int("ends_at"),
            rematchOf: try row.optionalString("rematch_of"), endingSoonAt: try row.optionalInt("ending_soon_at"), endedAt: try row.optionalInt("ended_at"))
    }
}
