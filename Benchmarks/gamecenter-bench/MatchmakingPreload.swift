import Foundation
import GameCenterProtocol
import GameCenterServer

/// Waiting requests made up for `gamecenter-bench matchmaking`: players stored in bulk (`PREFIX1…PREFIXn`) and one
/// request each put in the queue through the matchmaker's own entry point, as if their devices were connected.
struct MatchmakingPreload: Sendable {
    /// The game the requests are for (sandbox).
    var bundleID: String
    var playerPrefix: String
    var requests: Int
    /// Request `i` is in group `i % groups`.
    var groups: Int
    /// Every request's role (one role for all, so that they wait).
    var playerAttributes: UInt32
    var minPlayers: Int
    var maxPlayers: Int

    /// The made-up session every preloaded request waits on; its channel counts as open for the whole run.
    static let sessionID = "bench-preload"

    /// Stores the players and queues their requests; the server's own rules check each request.
    func apply(to services: GameCenterApp.Services) async throws {
        guard let game = services.registry.game(bundleID: bundleID) else { throw BenchError("no game \(bundleID) to preload") }
        try await services.database.fillPlayers(prefix: playerPrefix, count: requests, now: services.clock.nowMillis())
        services.matchmaking.channelOpened(sessionID: Self.sessionID)
        let device = DeviceIdentity(game: game, environment: .sandbox, locale: game.defaultLocale)
        for index in 1...requests {
            let body = MatchRequestBody(
                requestID: "preload-\(index)", minPlayers: minPlayers, maxPlayers: maxPlayers,
                playerGroup: UInt32(index % groups), playerAttributes: playerAttributes)
            let session = AuthenticatedSession(sessionID: Self.sessionID, playerID: "\(playerPrefix)\(index)", expiresAt: .max)
            _ = try await services.matchmaking.request(body, device: device, session: session)
        }
    }
}
