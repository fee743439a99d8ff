import Foundation
import GameCenterProtocol
import GameCenterStorage

/// How a stored challenge is judged and shown: which scores count (``scoring(_:game:)``), each participant's standing
/// from the stored scores (frozen at the end), and the ranked ``ChallengeInfo`` devices and pages see.
///
/// The scores table is the truth: a standing is computed from it whenever it is asked for, so a report whose push was
/// lost still counts. Once the clock records the end, the standings are the frozen ones.
struct ChallengeStandings: Sendable {
    let formatter: ScoreFormatter

    /// What `challenge` counts, by its definition and board in `game` (a definition or board removed from the manifest
    /// since: any number of attempts, higher is better).
    static func scoring(_ challenge: ChallengeRecord, game: Game?) -> ChallengeScoring {
        let definition = game?.challenges.first { $0.identifier == challenge.definition }
        let board = game?.leaderboards.first { $0.category == challenge.category }
        return ChallengeScoring(
            bundleID: challenge.bundleID, environment: challenge.environment, category: challenge.category, occurrence: challenge.occurrence,
            endsAt: challenge.endsAt, higherIsBetter: board?.order != .ascending, includesEarlierBest: !(definition?.isRepeatable ?? false),
            attempts: definition?.attempts)
    }

    /// Each joined participant's standing: frozen once the challenge ended, otherwise from the scores stored (with an id
    /// below `below`: the standings before a report).
    static func standings(
        _ challenge: ChallengeRecord, participants: [ChallengeParticipantRecord], game: Game?, below: Int64 = .max, in storage: StorageSession
    ) async throws -> [String: ChallengeStanding] {
        var standings: [String: ChallengeStanding] = [:]
        let scoring = scoring(challenge, game: game)
        for participant in participants where participant.status == ChallengeParticipantStatus.joined.rawValue {
            if challenge.endedAt != nil {
                standings[participant.playerID] = ChallengeStanding(best: participant.finalValue, attemptsUsed: Int(participant.finalAttempts ?? 0))
            } else {
                standings[participant.playerID] = try await storage.challengeStanding(
                    scoring, playerID: participant.playerID, afterScore: participant.afterScore, below: below)
            }
        }
        return standings
    }

    /// The joined participants with a score, best first, with their competition ranks (equal values share one).
    static func ranks(_ standings: [String: ChallengeStanding], higherIsBetter: Bool) -> [String: Int] {
        let scored = standings.compactMap { id, standing in standing.best.map { (id, $0) } }
            .sorted { higherIsBetter ? ($0.1, $1.0) > ($1.1, $0.0) : ($0.1, $0.0) < ($1.1, $1.0) }
        var ranks: [String: Int] = [:]
        for (position, (id, value)) in scored.enumerated() {
            ranks[id] = position > 0 && scored[position - 1].1 == value ? ranks[scored[position - 1].0]! : position + 1
        }
        return ranks
    }

    /// The challenge as devices and pages see it, texts and values in `locale`.
    func info(
        _ challenge: ChallengeRecord, participants: [ChallengeParticipantRecord], standings: [String: ChallengeStanding], game: Game?, locale: String
    ) -> ChallengeInfo {
        let definition = game?.challenges.first { $0.identifier == challenge.definition }
        let board = game?.leaderboards.first { $0.category == challenge.category }
        let fallback = game?.defaultLocale ?? locale
        let scoring = Self.scoring(challenge, game: game)
        let ranks = Self.ranks(standings, higherIsBetter: scoring.higherIsBetter)
        let order: [ChallengeParticipantStatus] = [.joined, .invited, .left]
        let shown = participants.map { participant -> ChallengeParticipant in
            let status = ChallengeParticipantStatus(rawValue: participant.status) ?? .left
            let standing = standings[participant.playerID]
            let formatted = standing?.best.map { value in
                board.map {
                    formatter.format(
                        value, format: $0.format, currency: $0.currency, suffix: Localization.value($0.suffix, locale: locale, fallback: fallback),
                        locale: locale)
                } ?? String(value)
            }
            let used = standing?.attemptsUsed ?? 0
            return ChallengeParticipant(
                playerID: participant.playerID, alias: participant.alias, status: status, joinedAt: participant.joinedAt.map(StoredTime.date),
                value: standing?.best, formattedValue: formatted, attemptsUsed: used,
                attemptsLeft: status == .joined ? scoring.attempts.map { max(0, $0 - used) } : nil, rank: ranks[participant.playerID] ?? 0)
        }
        .sorted { a, b in
            let (sa, sb) = (order.firstIndex(of: a.status)!, order.firstIndex(of: b.status)!)
            if sa != sb { return sa < sb }
            if (a.rank == 0) != (b.rank == 0) { return a.rank != 0 }
            return a.rank < b.rank
        }
        let ended = challenge.endedAt != nil
        return ChallengeInfo(
            challengeID: challenge.challengeID, definition: challenge.definition,
            title: definition.map { Localization.text($0.title, locale: locale, fallback: fallback) } ?? challenge.definition,
            leaderboard: challenge.category, isRepeatable: definition?.isRepeatable ?? false, creatorID: challenge.creatorID, code: challenge.code,
            createdAt: StoredTime.date(challenge.createdAt), endsAt: StoredTime.date(challenge.endsAt), occurrence: challenge.occurrence.map(StoredTime.date),
            state: ended ? .ended : .open, participants: shown, winners: ended ? ranks.filter { $0.value == 1 }.map(\.key).sorted() : [],
            rematchOf: challenge.rematchOf)
    }
}
