import GameCenterProtocol
import GameCenterStorage
import Logging
import ServiceLifecycle

/// The server's clock acting on challenges: every ``interval`` it reads the joins of every node into the
/// ``ChallengeRoster``, tells the players of challenges with an hour left
/// (``ChallengeEventKind/endingSoon``) and ends those past their end, freezing the standings and telling the winners
/// (``ChallengeEventKind/ended``). Each is claimed by a conditional update, so it happens once whichever node sees it
/// first, and when every node was down at the time, the first one back does it.
struct ChallengeClock: Service {
    let challenges: ChallengeService
    let registry: GameRegistry
    let interval: Duration
    let logger: Logger

    /// Challenges handled per query.
    static let batch = 100

    func run() async throws {
        while !Task.isShuttingDownGracefully, !Task.isCancelled {
            do {
                try await tick()
            } catch {
                logger.warning("challenge notices and ends could not be recorded now; trying again", metadata: [LogKey.error: "\(error)"])
            }
            // A graceful shutdown ends the wait, not only the next loop.
            try? await cancelWhenGracefulShutdown { try await Task.sleep(for: interval) }
        }
    }

    /// Follows the joins of every node, ends what is past its end and sends the one-hour notices that are due.
    func tick() async throws {
        let database = challenges.database
        try await challenges.roster.follow(database, now: challenges.clock.nowMillis())
        while true {
            let now = challenges.clock.nowMillis()
            let due = try await database.read { try await $0.challengesEnding(before: now + 1, unnoticed: false, limit: Self.batch) }
            for challenge in due { try await end(challenge, now: now) }
            if due.count < Self.batch { break }
        }
        while true {
            let now = challenges.clock.nowMillis()
            let due = try await database.read {
                try await $0.challengesEnding(before: now + ChallengeService.endingSoonMillis, unnoticed: true, limit: Self.batch)
            }
            for challenge in due { try await endingSoon(challenge, now: now) }
            if due.count < Self.batch { break }
        }
    }

    private func end(_ challenge: ChallengeRecord, now: Int64) async throws {
        let game = registry.game(bundleID: challenge.bundleID)
        let told = try await challenges.database.write { storage -> [String] in
            guard try await storage.markChallengeEnded(id: challenge.challengeID, now: now) else { return [] }
            let participants = try await storage.challengeParticipants(challengeID: challenge.challengeID)
            let final = try await ChallengeStandings.standings(challenge, participants: participants, game: game, in: storage)
            for (playerID, standing) in final {
                try await storage.freezeChallengeStanding(challengeID: challenge.challengeID, playerID: playerID, standing)
            }
            var ended = challenge
            ended.endedAt = now
            let frozen = try await storage.challengeParticipants(challengeID: challenge.challengeID)
            let told = ChallengeService.told(frozen)
            try await challenges.notify(.ended, by: nil, ended, participants: frozen, to: told, standings: final, game: game, now: now, in: storage)
            return told
        }
        challenges.publish(to: told)
    }

    private func endingSoon(_ challenge: ChallengeRecord, now: Int64) async throws {
        let game = registry.game(bundleID: challenge.bundleID)
        let told = try await challenges.database.write { storage -> [String] in
            guard try await storage.markChallengeEndingSoon(id: challenge.challengeID, now: now) else { return [] }
            let participants = try await storage.challengeParticipants(challengeID: challenge.challengeID)
            let told = ChallengeService.told(participants)
            try await challenges.notify(.endingSoon, by: nil, challenge, participants: participants, to: told, game: game, now: now, in: storage)
            return told
        }
        challenges.publish(to: told)
    }
}
