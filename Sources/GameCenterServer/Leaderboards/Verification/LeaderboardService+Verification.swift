import Foundation
import GameCenterProtocol
import GameCenterStorage

/// Scores that count only once the studio's verifier accepts them (boards with `verification`): each is stored as a
/// submission before the verifier is asked, so a crash loses none (a submission left `verifying` is quarantined by
/// ``SubmissionSweeper``); accepted ones are stored and ranked in the same write that notes the decision; rejected
/// ones keep their reason; quarantined ones wait for the studio, who releases (stores and ranks) or rejects them. Every
/// decision of the studio is in the audit log.
extension LeaderboardService {
    /// A checked score of a report, on a board that requires verification.
    struct ScoreToVerify: Sendable {
        /// Its place in the report.
        var position: Int
        var score: NewScore
        var details: [Int64]
        var attachment: Data?
        var timeoutMillis: Int64
    }

    /// Stores `scores` as submissions of report `reportID` and asks the verifier about each (at once); answers the
    /// entries of those accepted and every submission's state. A re-sent report answers its stored submissions as they
    /// stand and asks nothing again.
    func verify(
        _ scores: [ScoreToVerify], reportID: String, game: Game, environment: String, playerID: String, now: Int64, locale: String
    ) async throws -> (entries: [ScoreEntry], submissions: [ScoreSubmissionInfo]) {
        let new = scores.map { score in
            ScoreSubmissionRecord(
                submissionID: "sub_" + Credentials.randomBase64URL(bytes: 15), bundleID: game.bundleID, environment: environment, playerID: playerID,
                reportID: reportID, position: Int64(score.position), score: score.score, details: score.details, state: "verifying", createdAt: now)
        }
        let stored = try await database.write { try await $0.insertScoreSubmissions(new, attachments: scores.map(\.attachment)) }
        let made = Set(new.map(\.submissionID))
        let decided = await withTaskGroup(of: (ScoreSubmissionRecord, ScoreRecord?).self) { group in
            for (record, score) in zip(stored, scores) {
                guard made.contains(record.submissionID) else {
                    group.addTask { (record, nil) }
                    continue
                }
                group.addTask {
                    let verdict = await verifier.verify(record, attachment: score.attachment, timeoutMillis: score.timeoutMillis, database: database)
                    do {
                        return try await decide(record, verdict: verdict, from: "verifying", by: "verifier", game: game) ?? (record, nil)
                    } catch {
                        // The decision could not be stored: the submission stays verifying until the sweeper quarantines it.
                        return (record, nil)
                    }
                }
            }
            var decided: [String: (ScoreSubmissionRecord, ScoreRecord?)] = [:]
            for await (record, score) in group { decided[record.submissionID] = (record, score) }
            return stored.compactMap { decided[$0.submissionID] }
        }
        return (
            decided.compactMap { _, score in score.map { entry($0, rank: 0, game: game, locale: locale) } },
            decided.map { record, _ in Self.info(record) }
        )
    }

    /// Releases a quarantined submission (it is stored and ranked) or rejects it with `reason`; `actor` is who decided
    /// (for the audit log). Answers the submission as it now stands.
    func decideQuarantined(
        _ submissionID: String, release: Bool, reason: String?, game: Game, environment: Environment, actor: String
    ) async throws -> ScoreSubmissionInfo {
        guard
            let record = try await database.read({
                try await $0.scoreSubmission(id: submissionID, bundleID: game.bundleID, environment: environment.rawValue)
            })
        else { throw APIError.submissionUnknown(submissionID) }
        guard record.state == ScoreVerificationState.quarantined.rawValue else { throw APIError.submissionDecided(record) }
        let verdict: ScoreVerifier.Verdict
        if release {
            _ = try Self.reportable(record.score.category, in: game)
            verdict = .accept
        } else {
            let text = (reason ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
            guard (1...ScoreVerifier.maximumReasonLength).contains(text.count) else {
                throw APIError.invalidParameter("reason is 1 to \(ScoreVerifier.maximumReasonLength) characters saying why the score is rejected")
            }
            verdict = .reject(reason: text)
        }
        guard let (decided, _) = try await decide(record, verdict: verdict, from: "quarantined", by: actor, game: game) else {
            throw APIError.submissionDecided(record)
        }
        try await audit.record(
            bundleID: game.bundleID, actor: actor, action: release ? "score.released" : "score.rejected", subject: submissionID,
            detail: ["playerID": record.playerID, "category": record.score.category, "value": String(record.score.value)]
                .merging(release ? [:] : ["reason": decided.reason ?? ""]) { a, _ in a })
        return Self.info(decided)
    }

    /// A game's submissions in an environment, newest first (the studio's view); `before` is a stored time.
    func submissions(
        game: Game, environment: Environment, state: ScoreVerificationState?, playerID: String?, before: Int64?, limit: Int
    ) async throws -> ScoreSubmissionList {
        guard (1...1000).contains(limit) else { throw APIError.invalidParameter("limit is 1 to 1000; got \(limit)") }
        let records = try await database.read {
            try await $0.scoreSubmissions(
                bundleID: game.bundleID, environment: environment.rawValue, state: state?.rawValue, playerID: playerID, before: before,
                limit: limit)
        }
        return ScoreSubmissionList(submissions: records.map(Self.info))
    }

    /// The signed-in player's last 100 submissions in the device's game.
    func ownSubmissions(device: DeviceIdentity, session: AuthenticatedSession) async throws -> ScoreSubmissionList {
        try await submissions(game: device.game, environment: device.environment, state: nil, playerID: session.playerID, before: nil, limit: 100)
    }

    /// One submission with its details and attachment (the studio's view).
    func submission(_ submissionID: String, game: Game, environment: Environment) async throws -> ScoreSubmissionDetail {
        let found = try await database.read { storage -> (ScoreSubmissionRecord, Data?)? in
            guard let record = try await storage.scoreSubmission(id: submissionID, bundleID: game.bundleID, environment: environment.rawValue) else {
                return nil
            }
            return (record, try await storage.scoreSubmissionAttachment(id: submissionID))
        }
        guard let (record, attachment) = found else { throw APIError.submissionUnknown(submissionID) }
        return ScoreSubmissionDetail(submission: Self.info(record), details: record.details, attachment: attachment, decidedBy: record.decidedBy)
    }

    /// Stores a verdict on a submission in state `from`, with the score when it is accepted; ranks it. Nil when the
    /// submission was not in `from` any more (decided elsewhere).
    private func decide(
        _ record: ScoreSubmissionRecord, verdict: ScoreVerifier.Verdict, from: String, by actor: String, game: Game
    ) async throws -> (ScoreSubmissionRecord, ScoreRecord?)? {
        let now = clock.nowMillis()
        let (state, reason): (ScoreVerificationState, String?) =
            switch verdict {
            case .accept: (.accepted, nil)
            case .reject(let reason): (.rejected, reason)
            case .quarantine(let reason): (.quarantined, reason)
            }
        let stored = try await database.write { storage -> ScoreRecord?? in
            guard try await storage.decideScoreSubmission(id: record.submissionID, from: from, to: state.rawValue, reason: reason, by: actor, now: now)
            else { return .none }
            guard state == .accepted else {
                try await Self.announce(record, state: state, reason: reason ?? "", by: actor, now: now, in: storage)
                return .some(nil)
            }
            let score = try await storage.insertScores([record.score], bundleID: record.bundleID, environment: record.environment, playerID: record.playerID)
            try await storage.setScoreSubmissionScore(id: record.submissionID, scoreID: score[0].scoreID)
            return .some(score[0])
        }
        guard let stored else { return nil }
        if let stored {
            rank([stored], bundleID: record.bundleID, environment: record.environment)
            await challenges.scoresStored([stored], game: game, environment: record.environment, playerID: record.playerID)
        }
        var decided = record
        decided.state = state.rawValue
        decided.reason = reason
        decided.scoreID = stored?.scoreID
        decided.decidedAt = state == .quarantined ? nil : now
        decided.decidedBy = actor
        return (decided, stored)
    }

    /// Stores the webhook event of a submission quarantined or rejected (`score.quarantined`, `score.rejected`), in the
    /// write that decided it.
    static func announce(
        _ record: ScoreSubmissionRecord, state: ScoreVerificationState, reason: String, by actor: String, now: Int64, in storage: StorageSession
    ) async throws {
        let type: WebhookEventType = state == .rejected ? .scoreRejected : .scoreQuarantined
        let data = ScoreSubmissionEventData(
            submissionID: record.submissionID, playerID: record.playerID, category: record.score.category, value: record.score.value,
            context: record.score.context, date: Double(record.score.earnedAt) / 1000, reason: reason, decidedBy: actor)
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        try await storage.appendGameEvent(
            bundleID: record.bundleID, environment: record.environment, kind: type.rawValue, orderKey: record.playerID,
            payload: String(decoding: try encoder.encode(data), as: UTF8.self), now: now)
    }

    /// A submission as its player and the studio see it.
    static func info(_ record: ScoreSubmissionRecord) -> ScoreSubmissionInfo {
        ScoreSubmissionInfo(
            submissionID: record.submissionID, category: record.score.category, playerID: record.playerID, value: record.score.value,
            context: record.score.context, date: StoredTime.date(record.score.earnedAt), position: Int(record.position),
            state: ScoreVerificationState(rawValue: record.state) ?? .quarantined, reason: record.reason, submittedAt: StoredTime.date(record.createdAt),
            decidedAt: record.decidedAt.map(StoredTime.date), occurrence: record.score.occurrence.map(StoredTime.date))
    }
}

/// `GET /server/v1/score-submissions/{submissionID}`: a submission with what the game attached.
public struct ScoreSubmissionDetail: Codable, Sendable {
    public var submission: ScoreSubmissionInfo
    public var details: [Int64]
    /// The input log or replay (base64 on the wire), if any.
    public var attachment: Data?
    /// `verifier`, `admin` or the server key that decided.
    public var decidedBy: String?
}

/// `POST /server/v1/score-submissions/{submissionID}/reject`.
public struct ScoreRejection: Codable, Sendable {
    /// Why (1 to 500 characters): the player's device shows it.
    public var reason: String
}

extension APIError {
    static func submissionUnknown(_ submissionID: String) -> APIError {
        APIError(.leaderboardSubmissionUnknown, "no score submission \(submissionID.prefix(60)) in this game and environment")
    }

    static func submissionDecided(_ record: ScoreSubmissionRecord) -> APIError {
        APIError(
            .leaderboardSubmissionDecided,
            "score submission \(record.submissionID) is \(record.state), not quarantined: only a quarantined score can be released or rejected")
    }
}
