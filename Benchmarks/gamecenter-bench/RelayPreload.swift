import Foundation
import GameCenterProtocol
import GameCenterServer
import GameCenterStorage

/// Started matches made up for `gamecenter-bench relay`: players stored in bulk (`PREFIX1…PREFIXn`), each with a
/// session under a random token, in matches of `playersPerMatch` (`PREFIX-match-1…`), written through storage.
struct RelayPreload: Sendable {
    /// The game the matches are in (sandbox).
    var bundleID: String
    var playerPrefix: String
    var matches: Int
    var playersPerMatch: Int
    /// Player `i`'s session token is `tokens[i - 1]`: random, like the server's own.
    let tokens: [String]

    /// A preload of `matches` matches of `playersPerMatch` players each, with fresh random tokens.
    init(bundleID: String, playerPrefix: String, matches: Int, playersPerMatch: Int) {
        self.bundleID = bundleID
        self.playerPrefix = playerPrefix
        self.matches = matches
        self.playersPerMatch = playersPerMatch
        self.tokens = (0..<matches * playersPerMatch).map { _ in Credentials.newToken() }
    }

    /// Player `index`'s id (1-based).
    func playerID(_ index: Int) -> String { "\(playerPrefix)\(index)" }

    /// Player `index`'s session token.
    func token(_ index: Int) -> String { tokens[index - 1] }

    /// Match `index`'s id (1-based); its players are `(index - 1) * playersPerMatch + 1 …`.
    func matchID(_ index: Int) -> String { "\(playerPrefix)-match-\(index)" }

    /// Stores the players, their sessions and their started matches.
    func apply(to services: GameCenterApp.Services) async throws {
        let now = services.clock.nowMillis()
        let players = matches * playersPerMatch
        try await services.database.fillPlayers(prefix: playerPrefix, count: players, now: now)
        let tokenHashes = tokens.map(Credentials.tokenHash)
        try await services.database.write { [self] storage in
            for index in 1...players {
                try await storage.insertSession(
                    SessionRecord(
                        sessionID: "\(playerPrefix)-session-\(index)", tokenHash: tokenHashes[index - 1],
                        playerID: playerID(index), bundleID: bundleID, environment: Environment.sandbox.rawValue,
                        createdAt: now, expiresAt: now + 86_400_000
                    ))
            }
            for match in 1...matches {
                try await storage.insertMatch(
                    MatchRecord(
                        matchID: matchID(match), bundleID: bundleID, environment: Environment.sandbox.rawValue,
                        hosted: false, state: .started, createdAt: now))
                let first = (match - 1) * playersPerMatch + 1
                try await storage.insertMatchMembers(
                    matchID(match),
                    (first..<first + playersPerMatch).map {
                        MatchMemberRecord(playerID: playerID($0), requestID: nil, joinedAt: now)
                    })
            }
        }
    }
}
