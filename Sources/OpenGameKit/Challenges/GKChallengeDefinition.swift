import Foundation
import GameCenterProtocol

/// A challenge the game offers, as its manifest defines it (`challenges`): players challenge each other on one
/// leaderboard. Start one with ``GKChallenge/create(_:duration:inviting:)``.
public final class GKChallengeDefinition: Sendable {
    /// The definition's identifier in the manifest.
    public let identifier: String
    /// Title and details in the device's locale.
    public let title: String
    public let details: String?
    /// The category of the leaderboard it is played on.
    public let leaderboardID: String
    /// Repeatable: only scores reported after joining count. Not repeatable: a participant's best on the board counts,
    /// also one from before they joined.
    public let isRepeatable: Bool
    /// The lengths a new challenge may be given; empty when the board is recurring (a challenge then lasts the rest of
    /// the running occurrence).
    public let durationOptions: [TimeInterval]
    /// The scores after joining that count per participant; nil: any number.
    public let attempts: Int?
    /// The most players in one challenge, its creator included.
    public let maxParticipants: Int
    let gameCenter: GKGameCenter

    init(_ info: ChallengeDefinitionInfo, in gameCenter: GKGameCenter) {
        identifier = info.identifier
        title = info.title
        details = info.details
        leaderboardID = info.leaderboard
        isRepeatable = info.isRepeatable
        durationOptions = info.durationOptions
        attempts = info.attempts
        maxParticipants = info.maxParticipants
        self.gameCenter = gameCenter
    }

    /// The leaderboard the challenge is played on, as a query of the whole board.
    public var leaderboard: GKLeaderboard {
        let leaderboard = GKLeaderboard(in: gameCenter)
        leaderboard.category = leaderboardID
        return leaderboard
    }

    /// The game's challenge definitions, in manifest order.
    public static func all(in gameCenter: GKGameCenter = .default) async throws -> [GKChallengeDefinition] {
        let list = try await gameCenter.authenticated(.get, "/v1/challenge-definitions", as: ChallengeDefinitionList.self)
        return list.definitions.map { GKChallengeDefinition($0, in: gameCenter) }
    }
}
