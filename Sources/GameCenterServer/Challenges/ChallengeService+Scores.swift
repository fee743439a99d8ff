import GameCenterProtocol
import GameCenterStorage

extension ChallengeService {
    /// Pushes stored scores to the challenges they count in: for each running challenge of the reporting player on a
    /// board of the report, a score that counted (an attempt used, perhaps a better standing) is an event for every
    /// participant — `overtaken` for those the reporter passed, `score` for the others. Runs after the report's
    /// transaction, and asks storage only when the ``ChallengeRoster`` says the player may be in a challenge on these
    /// boards; a failure here is logged and costs only the pushes (standings are read from the scores).
    func scoresStored(_ records: [ScoreRecord], game: Game, environment: String, playerID: String) async {
        guard let first = records.map(\.scoreID).min() else { return }
        let now = clock.nowMillis()
        let categories = Array(Set(records.map(\.category))).sorted()
        guard roster.mayCount(playerID: playerID, bundleID: game.bundleID, environment: environment, categories: categories, now: now) else { return }
        do {
            // The standings are read outside the writing transaction (SQLite has one writer); only the notices are written.
            let counted = try await database.read { storage -> [CountedScore] in
                var counted: [CountedScore] = []
                for challenge in try await storage.runningChallenges(
                    of: playerID, bundleID: game.bundleID, environment: environment, categories: categories, now: now)
                {
                    let participants = try await storage.challengeParticipants(challengeID: challenge.challengeID)
                    guard let mine = participants.first(where: { $0.playerID == playerID && $0.status == ChallengeParticipantStatus.joined.rawValue })
                    else { continue }
                    let after = try await ChallengeStandings.standings(challenge, participants: participants, game: game, in: storage)
                    // Only the reporter's standing moved: the others' were the same before.
                    var before = after
                    before[playerID] = try await storage.challengeStanding(
                        ChallengeStandings.scoring(challenge, game: game), playerID: playerID, afterScore: mine.afterScore, below: first)
                    // Nothing counted: the attempts were used up, or the score is in another occurrence.
                    guard before[playerID] != after[playerID] else { continue }
                    counted.append(CountedScore(challenge: challenge, participants: participants, before: before, after: after))
                }
                return counted
            }
            guard !counted.isEmpty else { return }
            let told = try await database.write { storage in
                var told = Set<String>()
                for score in counted {
                    let better = ChallengeStandings.scoring(score.challenge, game: game).higherIsBetter
                    let overtaken = Self.overtaken(by: playerID, before: score.before, after: score.after, higherIsBetter: better)
                    let recipients = Self.told(score.participants)
                    try await notify(
                        .score, by: playerID, score.challenge, participants: score.participants, to: recipients, overtaken: overtaken,
                        standings: score.after, game: game, now: now, in: storage)
                    told.formUnion(recipients)
                }
                return told
            }
            publish(to: Array(told))
        } catch {
            logger.warning(
                "a score's challenges could not be told; their standings count it all the same",
                metadata: [LogKey.playerID: "\(playerID)", LogKey.error: "\(error)"])
        }
    }

    /// A score that counted in a running challenge: its participants and the standings before and after it.
    struct CountedScore: Sendable {
        var challenge: ChallengeRecord
        var participants: [ChallengeParticipantRecord]
        var before: [String: ChallengeStanding]
        var after: [String: ChallengeStanding]
    }

    /// The participants `playerID` passed: not behind them before, strictly behind them after.
    static func overtaken(by playerID: String, before: [String: ChallengeStanding], after: [String: ChallengeStanding], higherIsBetter: Bool)
        -> Set<String>
    {
        guard let mine = after[playerID]?.best else { return [] }
        let ahead = { (a: Int64, b: Int64) in higherIsBetter ? a > b : a < b }
        let previous = before[playerID]?.best
        return Set(
            after.compactMap { other, standing in
                guard other != playerID, let theirs = standing.best, ahead(mine, theirs) else { return nil }
                // They were level with or ahead of the reporter (or the reporter had no score).
                guard previous.map({ !ahead($0, theirs) }) ?? true else { return nil }
                return other
            })
    }
}
