import Foundation
import GameCenterProtocol

/// A challenge between players on one leaderboard, as the server saw it when this value was loaded: its participants
/// best first, when it ends, who won. Anyone with its ``code`` can join; friends can be invited. Changes arrive as
/// ``GKGameCenterEvent/challenge(_:)`` events; the methods answer the challenge after the change.
public final class GKChallenge: Sendable {
    /// Whether the challenge takes scores.
    public enum State: Sendable, Equatable {
        /// Taking scores until ``endDate``.
        case open
        /// Over: the standings are final and ``winners`` won.
        case ended
    }

    /// One player of a challenge.
    public struct Participant: Sendable, Equatable {
        /// Invited, playing, or gone.
        public enum Status: Sendable, Equatable {
            case invited, joined, left
        }

        public let playerID: String
        public let alias: String
        public let status: Status
        public let joinedDate: Date?
        /// The score that counts for them and its text (nil until they have one).
        public let value: Int64?
        public let formattedValue: String?
        /// Scores since joining that counted, and how many more may (nil: any number).
        public let attemptsUsed: Int
        public let attemptsLeft: Int?
        /// 1-based among the joined players with a score (equal values share one); 0 without a score.
        public let rank: Int
    }

    public let challengeID: String
    /// The definition's identifier and title.
    public let definitionID: String
    public let title: String
    /// The category of the leaderboard it is played on.
    public let leaderboardID: String
    public let isRepeatable: Bool
    public let creatorID: String
    /// Shared to let anyone join with ``join(code:in:)``: two groups of four letters or digits, such as `7KQ2-M9XD`.
    public let code: String
    public let creationDate: Date
    public let endDate: Date
    /// On a recurring board, the start of the occurrence it is played in.
    public let occurrence: Date?
    public let state: State
    /// Joined players by rank, then those without a score, then the invited, then those who left.
    public let participants: [Participant]
    /// Once ended: the players with the best score (several on a tie, none when nobody scored).
    public let winners: [String]
    /// The challenge this one is a rematch of.
    public let rematchOf: String?
    private let gameCenter: GKGameCenter

    init(_ info: ChallengeInfo, in gameCenter: GKGameCenter) {
        challengeID = info.challengeID
        definitionID = info.definition
        title = info.title
        leaderboardID = info.leaderboard
        isRepeatable = info.isRepeatable
        creatorID = info.creatorID
        code = info.code
        creationDate = info.createdAt
        endDate = info.endsAt
        occurrence = info.occurrence
        state = info.state == .open ? .open : .ended
        participants = info.participants.map { participant in
            let status: Participant.Status =
                switch participant.status {
                case .invited: .invited
                case .joined: .joined
                case .left: .left
                }
            return Participant(
                playerID: participant.playerID, alias: participant.alias, status: status, joinedDate: participant.joinedAt, value: participant.value,
                formattedValue: participant.formattedValue,
                attemptsUsed: participant.attemptsUsed, attemptsLeft: participant.attemptsLeft, rank: participant.rank)
        }
        winners = info.winners
        rematchOf = info.rematchOf
        self.gameCenter = gameCenter
    }

    /// Starts a challenge of `definition` with the local player in it, inviting friends; `duration` is one of the
    /// definition's ``GKChallengeDefinition/durationOptions`` (nil: the first; leave it nil on a recurring board).
    public static func create(_ definition: GKChallengeDefinition, duration: TimeInterval? = nil, inviting playerIDs: [String] = []) async throws
        -> GKChallenge
    {
        let body = ChallengeCreateBody(definition: definition.identifier, durationSeconds: duration, invite: playerIDs)
        return GKChallenge(
            try await definition.gameCenter.authenticated(.post, "/v1/challenges", body: body, as: ChallengeInfo.self), in: definition.gameCenter)
    }

    /// Joins the challenge with this code (shared by a player in it), invited or not.
    public static func join(code: String, in gameCenter: GKGameCenter = .default) async throws -> GKChallenge {
        GKChallenge(
            try await gameCenter.authenticated(.post, "/v1/challenges/join", body: ChallengeJoinBody(code: code), as: ChallengeInfo.self), in: gameCenter)
    }

    /// The local player's challenges in this game: running ones first, then those ended in the last 30 days, newest
    /// first.
    public static func loadChallenges(in gameCenter: GKGameCenter = .default) async throws -> [GKChallenge] {
        try await gameCenter.authenticated(.get, "/v1/challenges", as: ChallengeList.self).challenges.map { GKChallenge($0, in: gameCenter) }
    }

    /// The challenge as it is now.
    public func reload() async throws -> GKChallenge {
        try await call(.get, "")
    }

    /// Joins the challenge the local player was invited to (or had left: their count starts over).
    public func join() async throws -> GKChallenge {
        try await call(.post, "/join")
    }

    /// Leaves the challenge (or declines the invitation): the local player's scores no longer count in it.
    public func leave() async throws -> GKChallenge {
        try await call(.post, "/leave")
    }

    /// Starts the same challenge again: same definition and length, the local player in it and the others who had
    /// joined invited.
    public func rematch() async throws -> GKChallenge {
        try await call(.post, "/rematch")
    }

    private func call(_ method: HTTPMethodName, _ action: String) async throws -> GKChallenge {
        GKChallenge(try await gameCenter.authenticated(method, "/v1/challenges/\(pathComponent(challengeID))\(action)", as: ChallengeInfo.self), in: gameCenter)
    }
}

/// Something that happened in one of the local player's challenges.
public struct GKChallengeEvent: Sendable {
    /// What happened.
    public enum Kind: Sendable, Equatable {
        /// ``playerID`` invited the local player.
        case invited
        /// ``playerID`` joined.
        case joined
        /// ``playerID`` left.
        case left
        /// ``playerID`` reported a score that counts.
        case score
        /// ``playerID``'s score put them ahead of the local player.
        case overtaken
        /// One hour is left.
        case endingSoon
        /// The challenge is over: see ``GKChallenge/winners``.
        case ended
    }

    public let kind: Kind
    /// The player who acted; nil for the clock's notices.
    public let playerID: String?
    /// The challenge after the change.
    public let challenge: GKChallenge

    init(_ info: ChallengeEventInfo, in gameCenter: GKGameCenter) {
        kind =
            switch info.kind {
            case .invited: .invited
            case .joined: .joined
            case .left: .left
            case .score: .score
            case .overtaken: .overtaken
            case .endingSoon: .endingSoon
            case .ended: .ended
            }
        playerID = info.playerID
        challenge = GKChallenge(info.challenge, in: gameCenter)
    }
}
