import GameCenterProtocol
import Testing
@testable import OpenGameKit

/// `GKMatchRequest` keeps the seed's shape (a class whose properties are set one by one) and can be shared.
@Suite struct GKMatchRequestTests {
    @Test func itIsConfiguredLikeTheSeedsAndSentAsConfigured() throws {
        let request = GKMatchRequest()
        #expect(request.minPlayers == 2 && request.maxPlayers == 2)
        #expect(request.playerGroup == 0 && request.playerAttributes == 0)
        #expect(request.playersToInvite == nil && request.inviteMessage == nil && request.inviteeResponseHandler == nil)

        request.minPlayers = 3
        request.maxPlayers = 4
        request.playerGroup = 7
        request.playerAttributes = 0xFF00
        request.playersToInvite = ["p1"]
        request.playersToInvite?.append("p2")
        request.inviteMessage = "join"
        request.inviteeResponseHandler = { _, _ in }
        #expect(request.inviteeResponseHandler != nil)
        try request.check()
        #expect(
            request.body(requestID: "r", hosted: true)
                == MatchRequestBody(
                    requestID: "r", minPlayers: 3, maxPlayers: 4, playerGroup: 7, playerAttributes: 0xFF00, hosted: true,
                    playersToInvite: ["p1", "p2"], inviteMessage: "join", matchID: nil, appVersion: request.appVersion,
                    platform: GKMatchRequest.platform))

        let sized = GKMatchRequest(minPlayers: 2, maxPlayers: 16)
        #expect(sized.minPlayers == 2 && sized.maxPlayers == 16)
        sized.minPlayers = 17
        #expect(throws: GKError.self) { try sized.check() }
    }

    @Test func oneRequestIsSharedBetweenTasks() async {
        let request = GKMatchRequest()
        await withTaskGroup(of: Void.self) { group in
            for task in 0..<8 {
                group.addTask {
                    for step in 0..<1_000 {
                        request.playerGroup = UInt32(task * 1_000 + step)
                        request.playersToInvite = ["p\(task)"]
                        _ = request.body(requestID: "r", hosted: false)
                    }
                }
            }
        }
        #expect(request.playersToInvite?.count == 1)
    }
}
