import Foundation
import SQLKit

/// A device's score on a leaderboard that requires verification, as stored.
public struct ScoreSubmissionRecord: Sendable, Equatable {
    public var submissionID: String
    public var bundleID: String
    public var environment: String
    public var playerID: String
    /// The report it came in, and its place there: a re-sent report finds its rows by them.
    public var reportID: String
    public var position: Int64
    /// The score as it is stored once accepted.
    public var score: NewScore
    /// Up to 64 integers the game attached.
    public var details: [Int64]
    /// `verifying`, `accepted`, `quarantined` or `rejected`.
    public var state: String
    public var reason: String?
    /// The stored score, once accepted.
    public var scoreID: Int64?
    public var createdAt: Int64
    public var decidedAt: Int64?
    /// `verifier`, `admin` or a server key's id.
    public var decidedBy: String?

    /// A submission as storage keeps it.
    public init(
        submissionID: String, bundleID: String, environment: String, playerID: String, reportID: String, position: Int64, score: NewScore,
        details: [Int64], state: String, reason: String? = nil, scoreID: Int64? = nil, createdAt: Int64, decidedAt: Int64? = nil,
        decidedBy: String? = nil
    ) {
        self.submissionID = submissionID
        self.bundleID = bundleID
        self.environment = environment
        self.playerID = playerID
        self.reportID = reportID
        self.position = position
        self.score = score
        self.details = details
        self.state = state
        self.reason = reason
        self.scoreID = scoreID
        self.createdAt = createdAt
        self.decidedAt = decidedAt
        self.decidedBy = decidedBy
    }
}

extension StorageSession {
    /// Stores new submissions in state `verifying`, unless their report's rows exist (a re-sent report): answers the
    /// rows of the report as stored, new or old, in position order.
    public func insertScoreSubmissions(_ submissions: [ScoreSubmissionRecord], attachments: [Data?]) async throws -> [ScoreSubmissionRecord] {
        guard let first = submissions.first else { return [] }
        for (submission, attachment) in zip(submissions, attachments) {
            let details = String(decoding: try JSONEncoder().encode(submission.details), as: UTF8.self)
            let score = submission.score
            try await sql.raw(
                """
                INSERT INTO score_submissions (submission_id, bundle_id, environment, category, player_id, report_id, position, value, context,
                    earned_at, occurrence, higher_is_better, details, attachment, state, created_at)
                VALUES (\(bind: submission.submissionID), \(bind: submission.bundleID), \(bind: submission.environment), \(bind: score.category),
                    \(bind: submission.playerID), \(bind: submission.reportID), \(bind: submission.position), \(bind: score.value),
                    \(bind: Int64(bitPattern: score.context)), \(bind: score.earnedAt), \(bind: score.occurrence), \(bind: score.higherIsBetter ? 1 : 0),
                    \(bind: details), \(bind: attachment), \(bind: submission.state), \(bind: submission.createdAt))
                ON CONFLICT (player_id, report_id, position) DO NOTHING
                """
            ).run()
        }
        return try await sql.raw(
            """
            SELECT \(unsafeRaw: Self.submissionColumns) FROM score_submissions
            WHERE player_id = \(bind: first.playerID) AND report_id = \(bind: first.reportID) ORDER BY position
            """
        ).all().map(Self.submissionRecord)
    }

    /// The submission with this id in a game and environment.
    public func scoreSubmission(id: String, bundleID: String, environment: String) async throws -> ScoreSubmissionRecord? {
        try await sql.raw(
            """
            SELECT \(unsafeRaw: Self.submissionColumns) FROM score_submissions
            WHERE submission_id = \(bind: id) AND bundle_id = \(bind: bundleID) AND environment = \(bind: environment)
            """
        ).first().map(Self.submissionRecord)
    }

    /// A submission's attachment, if it has one.
    public func scoreSubmissionAttachment(id: String) async throws -> Data? {
        try await sql.raw("SELECT attachment FROM score_submissions WHERE submission_id = \(bind: id)").first()?
            .decode(column: "attachment", as: Data?.self)
    }

    /// A game's submissions in an environment, newest first, at most `limit`: in `state` when given, of `playerID`
    /// when given, older than `before` (a creation time) when given.
    public func scoreSubmissions(
        bundleID: String, environment: String, state: String?, playerID: String?, before: Int64?, limit: Int
    ) async throws -> [ScoreSubmissionRecord] {
        try await sql.raw(
            """
            SELECT \(unsafeRaw: Self.submissionColumns) FROM score_submissions
            WHERE bundle_id = \(bind: bundleID) AND environment = \(bind: environment)
              AND (CAST(\(bind: state) AS TEXT) IS NULL OR state = \(bind: state))
              AND (CAST(\(bind: playerID) AS TEXT) IS NULL OR player_id = \(bind: playerID))
              AND (CAST(\(bind: before) AS BIGINT) IS NULL OR created_at < \(bind: before))
            ORDER BY created_at DESC, submission_id DESC LIMIT \(bind: Int64(limit))
            """
        ).all().map(Self.submissionRecord)
    }

    /// Moves a submission from `from` to `state` (with its reason and who decided); false when it was not
    /// in `from` (another node or the studio decided first).
    public func decideScoreSubmission(
        id: String, from: String, to state: String, reason: String?, by decidedBy: String, now: Int64
    ) async throws -> Bool {
        try await sql.raw(
            """
            UPDATE score_submissions SET state = \(bind: state), reason = \(bind: reason),
                decided_at = \(bind: now), decided_by = \(bind: decidedBy)
            WHERE submission_id = \(bind: id) AND state = \(bind: from) RETURNING submission_id
            """
        ).first() != nil
    }

    /// Notes the score an accepted submission was stored as.
    public func setScoreSubmissionScore(id: String, scoreID: Int64) async throws {
        try await sql.raw("UPDATE score_submissions SET score_id = \(bind: scoreID) WHERE submission_id = \(bind: id)").run()
    }

    /// Quarantines submissions left `verifying` since before `before` (their node stopped while it asked the
    /// verifier); answers them.
    public func quarantineStaleSubmissions(before: Int64, reason: String, now: Int64) async throws -> [ScoreSubmissionRecord] {
        try await sql.raw(
            """
            UPDATE score_submissions SET state = 'quarantined', reason = \(bind: reason), decided_by = 'verifier'
            WHERE state = 'verifying' AND created_at < \(bind: before)
            RETURNING \(unsafeRaw: Self.submissionColumns)
            """
        ).all().map(Self.submissionRecord)
    }

    private static let submissionColumns = """
        submission_id, bundle_id, environment, category, player_id, report_id, position, value, context, earned_at, occurrence,
        higher_is_better, details, state, reason, score_id, created_at, decided_at, decided_by
        """

    private static func submissionRecord(_ row: any SQLRow) throws -> ScoreSubmissionRecord {
        ScoreSubmissionRecord(
            submissionID: try row.string("submission_id"), bundleID: try row.string("bundle_id"), environment: try row.string("environment"),
            playerID: try row.string("player_id"), reportID: try row.string("report_id"), position: try row.int("position"),
            score: NewScore(
                category: try row.string("category"), value: try row.int("value"), context: UInt64(bitPattern: try row.int("context")),
                higherIsBetter: try row.int("higher_is_better") != 0, earnedAt: try row.int("earned_at"), occurrence: try row.optionalInt("occurrence")),
            details: (try? JSONDecoder().decode([Int64].self, from: Data(try row.string("details").utf8))) ?? [],
            state: try row.string("state"), reason: try row.optionalString("reason"), scoreID: try row.optionalInt("score_id"),
            createdAt: try row.int("created_at"), decidedAt: try row.optionalInt("decided_at"), decidedBy: try row.optionalString("decided_by"))
    }

    // MARK: Report keys

    /// Gives a session a new report key (replacing its old one and its counter).
    public func setReportKey(sessionID: String, secret: String, now: Int64) async throws {
        try await sql.raw(
            """
            INSERT INTO report_keys (session_id, secret, counter, created_at) VALUES (\(bind: sessionID), \(bind: secret), 0, \(bind: now))
            ON CONFLICT (session_id) DO UPDATE SET secret = excluded.secret, counter = 0, created_at = excluded.created_at
            """
        ).run()
    }

    /// A session's report key, if it has one.
    public func reportKeySecret(sessionID: String) async throws -> String? {
        try await sql.raw("SELECT secret FROM report_keys WHERE session_id = \(bind: sessionID)").first().map { try $0.string("secret") }
    }

    /// Takes counters of several sessions' keys (one per session), each only when above the key's last: answers the
    /// sessions whose counter was taken. One statement whatever the number.
    public func advanceReportCounters(_ counters: [(sessionID: String, counter: Int64)]) async throws -> Set<String> {
        guard !counters.isEmpty else { return [] }
        // A CASE over the sessions rather than a join with a VALUES list: SQLite plans it in a fraction of the time,
        // and the IN list reads each key by its primary key.
        let cases = SQLList(
            counters.map { SQLList([SQLRaw("WHEN"), SQLBind($0.sessionID), SQLRaw("THEN"), SQLBind($0.counter)], separator: SQLRaw(" ")) },
            separator: SQLRaw(" "))
        let sessions = SQLList(counters.map { SQLBind($0.sessionID) })
        let rows = try await sql.raw(
            """
            UPDATE report_keys SET counter = CASE session_id \(cases) END
            WHERE session_id IN (\(sessions)) AND counter < CASE session_id \(cases) END
            RETURNING session_id
            """
        ).all()
        return Set(try rows.map { try $0.string("session_id") })
    }
}
