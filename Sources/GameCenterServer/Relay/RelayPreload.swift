import Foundation
import GameCenterProtocol
import GameCenterStorage

/// Started matches made up for `gamecenter bench relay`: players stored in bulk (`PREFIX1…PREFIXn`), each with a
/// session whose token is ``token(_:)``, in matches of `playersPerMatch` (`PREFIX-match-1…`). `gamecenter serve`
/// never sets it.
public struct RelayPreload: Sendable {
    /// The game the matches are in (sandbox).
    public var bundleID: String
    public var playerPrefix: String
    public var matches: Int
    public var playersPerMatch: Int

    /// A preload of `matches` matches of `playersPerMatch` players each.
    public init(bundleID: String, playerPrefix: String, matches: Int, playersPerMatch: Int) {
        self.bundleID = bundleID
        self.playerPrefix = playerPrefix
        self.matches = matches
        self.playersPerMatch = playersPerMatch
    }

    /// Player `index`'s id (1-based).
    public func playerID(_ index: Int) -> String { "\(playerPrefix)\(index)" }

    /// Player `index`'s session token.
    public func token(_ index: Int) -> String { "gct_bench_\(playerPrefix)\(index)" }

    /// Match `index`'s id (1-based); its players are `(index - 1) * playersPerMatch + 1 …`.
    public func matchID(_ index: Int) -> String { "\(playerPrefix)-match-\(index)" }
}

extension RelayService {
    /// Stores the preload's players, their sessions and their started matches.
    func preload(_ preload: RelayPreload, now: Int64) async throws {
        let players = preload.matches * preload.playersPerMatch
        try await database.fillPlayers(prefix: preload.playerPrefix, count: players, now: now)
        try await database.write { storage in
            for index in 1...players {
                try await storage.insertSession(SessionRecord(
                    sessionID: "\(preload.playerPrefix)-session-\(index)", tokenHash: Credentials.tokenHash(preload.token(index)),
                    playerID: preload.playerID(index), bundleID: preload.bundleID, environment: Environment.sandbox.rawValue,
                    createdAt: now, expiresAt: now + 86_400_000
                ))
            }
            for match in 1...preload.matches {
                let matchID = preload.matchID(match)
                try await storage.insertMatch(MatchRecord(matchID: matchID, bundleID: preload.bundleID, environment: Environment.sandbox.rawValue,
                                                          hosted: false, state: .started, createdAt: now))
                let first = (match - 1) * preload.playersPerMatch + 1
                try await storage.insertMatchMembers(matchID, (first..<first + preload.playersPerMatch).map {
                    MatchMemberRecord(playerID: preload.playerID($0), requestID: nil, joinedAt: now)
                })
            }
        }
    }
}
