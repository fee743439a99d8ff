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
            let running = try await database.read { storage in
                try await storage.runningChallenges(of: playerID, bundleID: game.bundleID, environment: environment, categories: categories, now: now)
            }
            guard !running.isEmpty else { return }
            let told = try await database.write { storage in
                var told = Set<String>()
                for challenge in running {
                    let participants = try await storage.challengeParticipants(challengeID: challenge.challengeID)
                    let before = try await ChallengeStandings.standings(challenge, participants: participants, game: game, below: first, in: storage)
                    let after = try await ChallengeStandings.standings(challenge, participants: participants, game: game, in: storage)
                    // Nothing counted: the attempts were used up, or the score is in another occurrence.
                    guard before[playerID] != after[playerID] else { continue }
                    let better = ChallengeStandings.scoring(challenge, game: game).higherIsBetter
                    let overtaken = Self.overtaken(by: playerID, before: before, after: after, higherIsBetter: better)
                    let recipients = Self.told(participants)
                    try await notify(
                        .score, by: playerID, challenge, participants: participants, to: recipients, overtaken: overtaken, standings: after, game: game,
                        now: now, in: storage)
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
