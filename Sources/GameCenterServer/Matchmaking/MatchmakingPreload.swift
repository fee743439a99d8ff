import Foundation
import GameCenterProtocol

/// Waiting requests made up for `gamecenter bench matchmaking`: players stored in bulk (`PREFIX1…PREFIXn`) and
/// one request each in the queue, as if their devices were connected. `gamecenter serve` never sets it.
public struct MatchmakingPreload: Sendable {
    /// The game the requests are for (sandbox).
    public var bundleID: String
    public var playerPrefix: String
    public var requests: Int
    /// Request `i` is in group `i % groups`.
    public var groups: Int
    /// Every request's role (one role for all, so that they wait).
    public var playerAttributes: UInt32
    public var minPlayers: Int
    public var maxPlayers: Int

    /// A preload of `requests` requests over `groups` groups.
    public init(bundleID: String, playerPrefix: String, requests: Int, groups: Int, playerAttributes: UInt32, minPlayers: Int, maxPlayers: Int) {
        self.bundleID = bundleID
        self.playerPrefix = playerPrefix
        self.requests = requests
        self.groups = groups
        self.playerAttributes = playerAttributes
        self.minPlayers = minPlayers
        self.maxPlayers = maxPlayers
    }
}

extension MatchmakingService {
    /// The session id the preloaded requests wait on; it counts as always connected.
    static let preloadSession = "bench-preload"

    /// Stores the preload's players and puts their requests in the queue.
    func preload(_ preload: MatchmakingPreload, game: Game) async throws {
        try await database.fillPlayers(prefix: preload.playerPrefix, count: preload.requests, now: clock.nowMillis())
        let now = queueNow
        let decisions = state.withLock { state in
            state.openChannels[Self.preloadSession] = 1
            var decisions = MatchmakingDecisions()
            for index in 1...preload.requests {
                let playerID = "\(preload.playerPrefix)\(index)"
                let id = state.makeTicketID()
                let ticket = Ticket(
                    id: id, playerID: playerID,
                    key: QueueKey(game: "\(game.bundleID)\n\(Environment.sandbox.rawValue)", hosted: false,
                                  playerGroup: UInt32(index % preload.groups)),
                    minPlayers: preload.minPlayers, maxPlayers: preload.maxPlayers, playerAttributes: preload.playerAttributes,
                    fillTime: game.matchmaking.fillMilliseconds
                )
                state.addRequest(WaitingRequest(key: RequestKey(playerID: playerID, requestID: "preload-\(index)"),
                                                sessionID: Self.preloadSession), ticket: id)
                decisions.append(record(state.queue.enqueue(ticket, now: now), in: &state))
            }
            return decisions
        }
        await apply(decisions)
    }
}
