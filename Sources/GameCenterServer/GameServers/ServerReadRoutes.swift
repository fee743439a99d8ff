import Foundation
import GameCenterProtocol
import GameCenterStorage
import Hummingbird

/// What App Store Connect's API lacks and a studio's game server needs, for the key's game and environment, each with
/// permission `players:read`: a player, with their best score and rank on every leaderboard and their achievements
/// (`GET /server/v1/players/{playerID}`); a real-time match's players and state (`GET /server/v1/matches/{matchID}`);
/// a turn-based match's participants and state (`GET /server/v1/turn-based-matches/{matchID}`).
struct ServerReadRoutes {
    let leaderboards: LeaderboardService
    let achievements: AchievementService
    let database: Database

    func add(to group: RouterGroup<AppRequestContext>) {
        group.get("players/{playerID}") { _, context -> ServerPlayerReport in
            let caller = try context.requireServerCaller()
            try caller.require(.playersRead)
            let playerID = try context.parameters.requirePlayerID()
            let environment = caller.environment.rawValue
            guard let player = try await database.read({ try await $0.players(ids: [playerID], environment: environment) }).first else {
                throw APIError.unknownPlayers([String(playerID.prefix(100))])
            }
            let device = DeviceIdentity(game: caller.game, environment: caller.environment, locale: caller.game.defaultLocale)
            let progress = try await achievements.progress(device: device, playerID: playerID)
            return ServerPlayerReport(
                playerID: player.playerID, alias: player.alias, environment: caller.environment,
                scores: try await leaderboards.standings(of: playerID, game: caller.game, environment: caller.environment),
                achievements: progress.achievements, achievementPoints: progress.points)
        }
        group.get("matches/{matchID}") { _, context -> ServerMatchReport in
            let caller = try context.requireServerCaller()
            try caller.require(.playersRead)
            let matchID = try context.parameters.require("matchID")
            let environment = caller.environment.rawValue
            let found = try await database.read { storage -> (MatchRecord, [MatchMemberRecord], [String: String])? in
                guard matchID.count <= 64, let match = try await storage.match(id: matchID), match.bundleID == caller.game.bundleID,
                    match.environment == environment
                else { return nil }
                let members = try await storage.matchMembers(matchID)
                let players = try await storage.players(ids: members.map(\.playerID), environment: environment)
                return (match, members, Dictionary(players.map { ($0.playerID, $0.alias) }, uniquingKeysWith: { first, _ in first }))
            }
            guard let (match, members, aliases) = found else { throw APIError.serverNoSuchMatch }
            return ServerMatchReport(
                matchID: match.matchID, state: match.state.rawValue, hosted: match.hosted, createdAt: StoredTime.date(match.createdAt),
                startedAt: match.startedAt.map(StoredTime.date),
                players: members.map {
                    ServerMatchPlayer(
                        playerID: $0.playerID, alias: aliases[$0.playerID] ?? "", joinedAt: StoredTime.date($0.joinedAt), leftAt: $0.leftAt.map(StoredTime.date)
                    )
                })
        }
        group.get("turn-based-matches/{matchID}") { _, context -> ServerTurnBasedMatchReport in
            let caller = try context.requireServerCaller()
            try caller.require(.playersRead)
            let matchID = try context.parameters.require("matchID")
            let environment = caller.environment.rawValue
            let found = try await database.read { storage -> (TurnMatchRecord, [String: String])? in
                guard TurnBasedService.isValidID(matchID), let record = try await storage.turnMatch(id: matchID), record.bundleID == caller.game.bundleID,
                    record.environment == environment
                else { return nil }
                let ids = try TurnBasedService.state(record).seats.compactMap(\.playerID)
                let players = try await storage.players(ids: ids, environment: environment)
                return (record, Dictionary(players.map { ($0.playerID, $0.alias) }, uniquingKeysWith: { first, _ in first }))
            }
            guard let (record, aliases) = found else { throw APIError.serverNoSuchTurnBasedMatch }
            let match = TurnBasedService.info(try TurnBasedService.state(record), settings: caller.game.turnBased, exchangeData: false)
            return ServerTurnBasedMatchReport(
                matchID: match.matchID, status: match.status, version: match.version, createdAt: match.createdAt, currentIndex: match.currentIndex,
                participants: match.participants.map {
                    ServerTurnParticipant(
                        playerID: $0.playerID, alias: $0.playerID.flatMap { aliases[$0] }, status: $0.status, outcome: $0.outcome,
                        lastTurnDate: $0.lastTurnDate)
                })
        }
    }
}

extension APIError {
    /// A game server asked for a real-time match not of its key's game and environment (or none).
    static let serverNoSuchMatch = APIError(.matchmakingNoSuchMatch, "no match with this id in this key's game and environment")
    /// A game server asked for a turn-based match not of its key's game and environment (or none).
    static let serverNoSuchTurnBasedMatch = APIError(.turnNoSuchMatch, "no turn-based match with this id in this key's game and environment")
}

/// `GET /server/v1/matches/{matchID}`: a real-time match as the studio's game server sees it.
public struct ServerMatchReport: Codable, Sendable {
    public var matchID: String
    /// `forming` (waiting for invitees), `started`, `failed` (never started) or `ended` (every member left).
    public var state: String
    public var hosted: Bool
    public var createdAt: Date
    /// Nil before it started.
    public var startedAt: Date?
    /// Every member it had, in the order they joined.
    public var players: [ServerMatchPlayer]
}

/// A member of a real-time match.
public struct ServerMatchPlayer: Codable, Sendable {
    public var playerID: String
    public var alias: String
    public var joinedAt: Date
    /// Nil while they are in the match.
    public var leftAt: Date?
}

/// `GET /server/v1/turn-based-matches/{matchID}`: a turn-based match as the studio's game server sees it.
public struct ServerTurnBasedMatchReport: Codable, Sendable {
    public var matchID: String
    /// GameKit's `GKTurnBasedMatch.Status` raw value: open 1, ended 2, matching 3.
    public var status: Int
    /// Numbers the match's changes (`turn.changed`'s `version`).
    public var version: Int64
    public var createdAt: Date
    /// The seat whose turn it is; nil once the match ended.
    public var currentIndex: Int?
    /// Its seats, in order.
    public var participants: [ServerTurnParticipant]
}

/// A seat of a turn-based match.
public struct ServerTurnParticipant: Codable, Sendable {
    /// Nil while the seat waits for auto-match.
    public var playerID: String?
    public var alias: String?
    /// GameKit's `GKTurnBasedParticipant.Status` raw value: invited 1, declined 2, matching 3, active 4, done 5.
    public var status: Int
    /// GameKit's `GKTurnBasedMatch.Outcome` raw value (0: none yet).
    public var outcome: Int
    public var lastTurnDate: Date?
}

extension ServerMatchReport: ResponseEncodable {}
extension ServerTurnBasedMatchReport: ResponseEncodable {}

/// `GET /server/v1/players/{playerID}`: a player as the studio's game server sees them.
public struct ServerPlayerReport: Codable, Sendable {
    public var playerID: String
    public var alias: String
    public var environment: GameCenterProtocol.Environment
    /// Their best score on each leaderboard they have one on, with its all-time rank (a recurring board's running
    /// occurrence).
    public var scores: [ScoreEntry]
    /// Their progress on each achievement they reported.
    public var achievements: [AchievementProgress]
    /// The points of their completed achievements.
    public var achievementPoints: Int
}

extension ServerPlayerReport: ResponseEncodable {}
