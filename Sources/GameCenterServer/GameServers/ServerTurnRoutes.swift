import Foundation
import GameCenterProtocol
import GameCenterStorage
import Hummingbird

/// The studio's game server as the arbiter of turn-based matches (`turns:write`): it ends a match of the key's game
/// and environment with the outcomes it decided (`POST /server/v1/turn-based-matches/{matchID}/end`, with an
/// `Idempotency-Key`), for instance after replaying the turns and finding a cheat, or when the game's rules end it.
struct ServerTurnRoutes {
    let turns: TurnBasedService
    let database: Database
    let writes: IdempotentWrites

    func add(to group: RouterGroup<AppRequestContext>) {
        group.post("turn-based-matches/{matchID}/end") { request, context -> Response in
            let caller = try context.requireServerCaller()
            try caller.require(.turnsWrite)
            let matchID = try context.parameters.require("matchID")
            let body = try await request.body.collect(upTo: context.maxUploadSize)
            let arbitration = try WireRequestDecoder.decode(TurnBasedArbitration.self, from: body)
            let environment = caller.environment.rawValue
            let record = try await database.read { storage -> TurnMatchRecord? in
                guard TurnBasedService.isValidID(matchID) else { return nil }
                return try await storage.turnMatch(id: matchID)
            }
            guard let record, record.bundleID == caller.game.bundleID, record.environment == environment else {
                throw APIError.serverNoSuchTurnBasedMatch
            }
            return try await writes.answer(request, body: body, caller: caller) { _ in
                let match = try await turns.arbitrate(id: matchID, arbitration, game: caller.game)
                return (.ok, try WireCoding.makeEncoder().encode(match))
            }
        }
    }
}

/// `POST /server/v1/turn-based-matches/{matchID}/end`.
public struct TurnBasedArbitration: Codable, Sendable {
    /// The match version the server read (a stale one is refused: a turn came in since).
    public var version: Int64
    /// One outcome per seat, in seat order (GameKit's values: 0 none, 1 quit, 2 won, 3 lost, 4 tied, 5 timed out, 6…9
    /// first to fourth, or a custom value); every seat still in play needs one.
    public var outcomes: [Int]
    /// Shown to the participants with the match's end.
    public var message: String?
}
