import Foundation
import GameCenterProtocol
import Synchronization

/// A score the local player earned on one leaderboard, or one loaded from a leaderboard.
///
/// Set `value` (and optionally `context`), then ``report()``. The player and date are set when the object is
/// made; scores are always reported for the local player. The server keeps every report and ranks each player's
/// best. The date travels with the report, so a score that waited (in the outbox, or archived by the game) counts
/// in the `today` and `week` leaderboards of when it was earned; the server corrects it for this device's clock
/// offset and keeps it between 30 days before its own clock and now. After a report,
/// `date` is the date the server stored and `formattedValue` the server's rendering for this device's locale. A
/// report that cannot reach the server waits in the device's outbox (up to 30 days) and is re-sent automatically
/// (the error then has `queued == true`): do not report it again.
///
/// `Codable` (the seed archived scores with `NSCoding`); decoding attaches the score to the device in
/// `decoder.userInfo[GKGameCenter.codingUserInfoKey]`, or to `GKGameCenter.default`.
public final class GKScore: Codable, Sendable, CustomStringConvertible {
    private struct State {
        var value: Int64 = 0
        var context: UInt64 = 0
        var date: Date
        var formattedValue: String?
        var rank = 0
        var category: String?
        var details: [Int64] = []
        var attachment: Data?
        var verification: GKScoreVerification?
    }

    /// The player who earned it: the local player when the object was made ("" when nobody was signed in).
    public let playerID: String
    private let state: Mutex<State>
    private let gameCenter: GKGameCenter

    /// A new score for the device's local player on `category` (nil: the game's default leaderboard).
    public init(category: String? = nil, in gameCenter: GKGameCenter = .default) {
        self.playerID = gameCenter.state.withLock { $0.session?.player.playerID } ?? ""
        self.state = Mutex(State(date: Date(), category: category))
        self.gameCenter = gameCenter
    }

    /// A new score of `playerID`, another participant of a turn-based match, on `category`: it is reported with the
    /// match's end (``GKTurnBasedMatch/endMatchInTurn(withMatch:scores:achievements:)``); ``report()`` sends only the
    /// local player's scores.
    public init(category: String? = nil, playerID: String, in gameCenter: GKGameCenter = .default) {
        self.playerID = playerID
        self.state = Mutex(State(date: Date(), category: category))
        self.gameCenter = gameCenter
    }

    /// The score as a report names it.
    var report: ScoreReport {
        state.withLock { ScoreReport(category: $0.category, value: $0.value, context: $0.context, playerID: playerID, date: $0.date) }
    }

    init(entry: ScoreEntry, in gameCenter: GKGameCenter) {
        self.playerID = entry.playerID
        self.state = Mutex(
            State(
                value: entry.value, context: entry.context, date: entry.date, formattedValue: entry.formattedValue,
                rank: entry.rank, category: entry.category))
        self.gameCenter = gameCenter
    }

    /// The leaderboard; nil until reported means the default one (the server then names it).
    public var category: String? { state.withLock { $0.category } }
    /// The score, any 64-bit value; what it means is up to the game and the leaderboard's format.
    public var value: Int64 {
        get { state.withLock { $0.value } }
        set { state.withLock { $0.value = newValue } }
    }
    /// 64 bits the game may attach to the score; returned unchanged with it.
    public var context: UInt64 {
        get { state.withLock { $0.context } }
        set { state.withLock { $0.context = newValue } }
    }
    /// When the score was earned: when the object was made, then the date the server stored (the same moment, on
    /// the server's clock).
    public var date: Date { state.withLock { $0.date } }
    /// The value as the leaderboard's format shows it in this device's locale (set by the server).
    public var formattedValue: String? { state.withLock { $0.formattedValue } }
    /// 1-based position in the query that loaded it; 0 when not ranked.
    public var rank: Int { state.withLock { $0.rank } }
    /// Up to 64 integers for the studio's score verifier (a leaderboard with verification keeps them with the score).
    public var details: [Int64] {
        get { state.withLock { $0.details } }
        set { state.withLock { $0.details = newValue } }
    }
    /// An input log or replay for the studio's verifier, only for a leaderboard with verification; the scores of one
    /// report carry at most 1 MiB in all.
    public var attachment: Data? {
        get { state.withLock { $0.attachment } }
        set { state.withLock { $0.attachment = newValue } }
    }
    /// After ``report()`` to a leaderboard with verification: whether the score counts (accepted), waits for the
    /// studio (quarantined) or was rejected, with the reason. Nil on other leaderboards. Later decisions:
    /// ``loadVerifications(in:)``.
    public var verification: GKScoreVerification? { state.withLock { $0.verification } }

    public var description: String {
        let current = state.withLock { $0 }
        return
            "\(current.category ?? "(default)"): \(current.formattedValue ?? String(current.value)) by \(playerID)\(current.rank > 0 ? " #\(current.rank)" : "")"
    }

    /// Reports this score.
    public func report() async throws {
        try await Self.report([self])
    }

    /// Reports several scores of one device in one request, stored all or none.
    public static func report(_ scores: [GKScore]) async throws {
        guard let device = scores.first?.gameCenter else { return }
        guard scores.allSatisfy({ $0.gameCenter === device }) else {
            throw GKError(.invalidParameter, "scores reported together must belong to one GKGameCenter")
        }
        guard scores.count <= Limits.maximumScoresPerReport else {
            throw GKError(.invalidParameter, "at most \(Limits.maximumScoresPerReport) scores per report; got \(scores.count)")
        }
        let localPlayer = device.state.withLock { $0.session?.player.playerID }
        guard let localPlayer else {
            throw GKError(.notAuthenticated, "no player is signed in on this device; call GKLocalPlayer.authenticate first")
        }
        if let foreign = scores.first(where: { $0.playerID != localPlayer }) {
            throw GKError(.invalidPlayer, "scores are always reported for the local player; this one belongs to '\(foreign.playerID)'")
        }
        let reports = scores.map { score in
            score.state.withLock {
                ScoreReport(
                    category: $0.category, value: $0.value, context: $0.context, playerID: score.playerID, date: $0.date,
                    details: $0.details.isEmpty ? nil : $0.details, attachment: $0.attachment)
            }
        }
        if let many = reports.first(where: { ($0.details?.count ?? 0) > Limits.maximumScoreDetails }) {
            throw GKError(.invalidParameter, "a score carries at most \(Limits.maximumScoreDetails) details; one has \(many.details?.count ?? 0)")
        }
        let attached = reports.reduce(0) { $0 + ($1.attachment?.count ?? 0) }
        guard attached <= Limits.maximumScoreAttachmentBytes else {
            throw GKError(.invalidParameter, "a report's attachments total at most \(Limits.maximumScoreAttachmentBytes) bytes; these total \(attached)")
        }
        let batch = ScoreReportBatch(reportID: UUID().uuidString, scores: reports)
        let result = try await device.sendReport("/v1/scores", body: batch, reportID: batch.reportID, as: ScoreReportResult.self)
        // Scores on boards with verification are answered as submissions (by their place in the report); the others'
        // entries come first, in order. A re-sent batch the server had applied already answers no scores; the objects
        // keep their own data.
        let submissions = Dictionary((result.submissions ?? []).map { ($0.position, $0) }) { first, _ in first }
        var stored = result.scores.makeIterator()
        for (position, score) in scores.enumerated() {
            if let submission = submissions[position] {
                score.state.withLock {
                    $0.category = submission.category
                    $0.verification = GKScoreVerification(submission)
                }
            } else if let entry = stored.next() {
                score.state.withLock {
                    $0.category = entry.category
                    $0.date = entry.date
                    $0.formattedValue = entry.formattedValue
                    $0.rank = 0
                }
            }
        }
    }

    /// The local player's last 100 scores on leaderboards with verification in this game, newest first, each as it
    /// stands now (a quarantined score the studio released is accepted; one it rejected says why).
    public static func loadVerifications(in gameCenter: GKGameCenter = .default) async throws -> [GKScoreVerification] {
        let list = try await gameCenter.authenticated(.get, "/v1/score-submissions", as: ScoreSubmissionList.self)
        return list.submissions.map(GKScoreVerification.init)
    }

    private enum CodingKeys: String, CodingKey {
        case category, value, context, playerID, date, formattedValue, rank
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.gameCenter = decoder.userInfo[GKGameCenter.codingUserInfoKey] as? GKGameCenter ?? .default
        self.playerID = try container.decode(String.self, forKey: .playerID)
        self.state = Mutex(
            State(
                value: try container.decode(Int64.self, forKey: .value),
                context: try container.decode(UInt64.self, forKey: .context),
                date: try container.decode(Date.self, forKey: .date),
                formattedValue: try container.decodeIfPresent(String.self, forKey: .formattedValue),
                rank: try container.decodeIfPresent(Int.self, forKey: .rank) ?? 0,
                category: try container.decodeIfPresent(String.self, forKey: .category)
            ))
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        let current = state.withLock { $0 }
        try container.encodeIfPresent(current.category, forKey: .category)
        try container.encode(current.value, forKey: .value)
        try container.encode(current.context, forKey: .context)
        try container.encode(playerID, forKey: .playerID)
        try container.encode(current.date, forKey: .date)
        try container.encodeIfPresent(current.formattedValue, forKey: .formattedValue)
        try container.encode(current.rank, forKey: .rank)
    }
}

/// Where a score on a leaderboard with verification stands: the studio's verifier accepts or rejects each device's
/// score; one it does not answer in time is quarantined until the studio releases or rejects it.
public struct GKScoreVerification: Sendable, Equatable {
    /// The states of a verified score.
    public enum State: String, Sendable {
        /// The verifier is being asked.
        case verifying
        /// It counts on the leaderboard.
        case accepted
        /// No answer came in time: it waits for the studio.
        case quarantined
        /// The verifier or the studio refused it (``GKScoreVerification/reason`` says why).
        case rejected
    }

    /// The server's id of the submission.
    public let submissionID: String
    public let category: String
    public let value: Int64
    public let state: State
    /// Why it was rejected or quarantined.
    public let reason: String?
    /// When it was reported, and when it was accepted or rejected.
    public let submittedAt: Date
    public let decidedAt: Date?

    init(_ info: ScoreSubmissionInfo) {
        submissionID = info.submissionID
        category = info.category
        value = info.value
        state = State(rawValue: info.state.rawValue) ?? .quarantined
        reason = info.reason
        submittedAt = info.submittedAt
        decidedAt = info.decidedAt
    }
}
