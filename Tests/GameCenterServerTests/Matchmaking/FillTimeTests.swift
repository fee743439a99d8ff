import Foundation
import GameCenterProtocol
import NetworkFaultProxy
import Testing
@testable import GameCenterServer

/// The fill time runs on the server's monotonic clock: a match that could start but is below its maximum waits for
/// more players exactly that long, however much wall time passes, and starts once the clock has moved past it.
struct FillTimeTests {
    @Test func aMatchBelowItsMaximumStartsWhenTheFillTimeHasRunOut() async throws {
        let time = ManualMonotonicTime(startingAt: 1_000)
        try await TestServer.run(monotonic: .manual(time)) { client in
            let players = [try await client.signUp(), try await client.signUp()]
            for player in players { client.services.matchmaking.channelOpened(sessionID: player.sessionID) }
            for (index, player) in players.enumerated() {
                let answer = try await client.send(
                    .post, "/v1/matchmaking/requests", MatchRequestBody(requestID: "fill-\(index)", minPlayers: 2, maxPlayers: 4), token: player.token)
                #expect(answer.status == .created, "\(String(decoding: answer.body, as: UTF8.self))")
            }
            func state(_ index: Int) async throws -> MatchRequestStatus.State {
                try await client.call(.get, "/v1/matchmaking/requests/fill-\(index)", token: players[index].token).decode(MatchRequestStatus.self).state
            }
            // The queue ticks every 25 ms of real time. More real time than the fill time passes while the monotonic
            // clock stands still: the lobby keeps waiting (a queue timed by any other clock would have started it).
            let fill = MatchmakingSettings().fillMilliseconds
            try await quietPeriod(.milliseconds(fill + 500), because: "a lobby that keeps waiting sends nothing to wait for")
            #expect(try await state(0) == .waiting)
            #expect(try await state(1) == .waiting)

            // The test game's fill time is the default 2 s: one millisecond short of it changes nothing.
            time.advance(byMillis: fill - 1)
            try await quietPeriod(.milliseconds(300), because: "a lobby that keeps waiting sends nothing to wait for")
            #expect(try await state(0) == .waiting)
            time.advance(byMillis: 1)
            try await waitUntil("the match starts once the fill time has run out") { try await state(0) == .matched }
            #expect(try await state(1) == .matched)
        }
    }
}
