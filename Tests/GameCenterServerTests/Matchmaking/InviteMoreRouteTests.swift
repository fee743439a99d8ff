import Foundation
import GameCenterProtocol
import HTTPTypes
import SQLKit
import Testing
@testable import GameCenterServer

/// `POST /v1/matchmaking/requests/{id}/invitations`: the host invites more friends into the forming match while it
/// waits; they are invited like `playersToInvite`, take seats of the same lobby, and the refusals say why.
@Suite struct InviteMoreRouteTests {
    typealias Invitations = WebAppInvitationTests

    /// Ann hosts; Bob, Cat and Eve are her friends, Dan is not. Every device's realtime channel is open.
    struct Players {
        let ann: SessionResponse, bob: SessionResponse, cat: SessionResponse, dan: SessionResponse, eve: SessionResponse
    }

    static func players(_ server: TestServer.Client) async throws -> Players {
        var made: [SessionResponse] = []
        for alias in ["Ann", "Bob", "Cat", "Dan", "Eve"] {
            let player = try await server.signUp(alias: alias)
            server.services.matchmaking.channelOpened(sessionID: player.sessionID)
            made.append(player)
        }
        for friend in [made[1], made[2], made[4]] { try await Invitations.befriend(server, made[0], friend) }
        return Players(ann: made[0], bob: made[1], cat: made[2], dan: made[3], eve: made[4])
    }

    static func invite(
        _ server: TestServer.Client, _ players: [SessionResponse], into requestID: String, by host: SessionResponse
    ) async throws -> TestServer.Client.Answer {
        try await server.send(
            .post, "/v1/matchmaking/requests/\(requestID)/invitations",
            MatchInvitationsBody(playerIDs: players.map(\.player.playerID), inviteMessage: "Join us"), token: host.token)
    }

    static func invitation(_ server: TestServer.Client, of player: SessionResponse) async throws -> InvitationInfo? {
        try await server.call(.get, "/v1/invitations", token: player.token).decode(InvitationList.self).invitations.first
    }

    @Test func aFriendInvitedWhileWaitingJoinsTheSameMatch() async throws {
        try await TestServer.run { server in
            let p = try await Self.players(server)
            let request = MatchRequestBody(requestID: "r-host", minPlayers: 2, maxPlayers: 3, playersToInvite: [p.bob.player.playerID])
            #expect(try await server.send(.post, "/v1/matchmaking/requests", request, token: p.ann.token).status == .created)

            let answer = try await Self.invite(server, [p.cat], into: "r-host", by: p.ann)
            #expect(answer.status == .ok, "\(String(decoding: answer.body, as: UTF8.self))")
            let status = try answer.decode(MatchRequestStatus.self)
            #expect(status.state == .waiting)
            #expect(Set(status.invitees.map(\.playerID)) == [p.bob.player.playerID, p.cat.player.playerID])
            #expect(status.invitees.allSatisfy { $0.state == .pending })

            // Cat gets a normal invitation to the same forming match as Bob's, for the lobby's size.
            let bobs = try #require(try await Self.invitation(server, of: p.bob))
            let cats = try #require(try await Self.invitation(server, of: p.cat))
            #expect(cats.matchID == bobs.matchID && cats.inviter == p.ann.player.playerID && cats.inviterAlias == "Ann")
            #expect(cats.maxPlayers == 3 && cats.message == "Join us")
            #expect(try await Invitations.events(server, of: p.cat, .matchInvitation).count == 1)

            for (player, invitation, requestID) in [(p.bob, bobs, "r-bob"), (p.cat, cats, "r-cat")] {
                let accepted = try await server.send(
                    .post, "/v1/invitations/\(invitation.invitationID)/accept", AcceptInvitation(requestID: requestID), token: player.token)
                #expect(accepted.status == .ok, "\(String(decoding: accepted.body, as: UTF8.self))")
            }
            let host = try await Invitations.status(server, "r-host", of: p.ann)
            #expect(host.state == .matched)
            let match = try await server.call(.get, "/v1/matches/\(try #require(host.matchID))", token: p.ann.token).decode(MatchInfo.self)
            #expect(Set(match.players) == Set([p.ann, p.bob, p.cat].map(\.player.playerID)))
            #expect(match.matchID == cats.matchID)
            let answers = try await Invitations.events(server, of: p.ann, .inviteeAnswered).compactMap {
                try? WireCoding.makeDecoder().decode(InviteeAnswered.self, from: Data($0.utf8))
            }
            let catsAnswers = answers.filter { $0.playerID == p.cat.player.playerID }
            #expect(catsAnswers.map(\.state) == [.accepted, .connected] && catsAnswers.allSatisfy { $0.requestID == "r-host" })
        }
    }

    /// Invitations the database refuses to store are taken back: nobody is invited, the answer is an error, and the
    /// seat they took is open again (inviting the same friend afterwards works, where a seat still taken would be
    /// refused as already invited).
    @Test func invitationsThatCannotBeStoredAreWithdrawnAndTheirSeatsOpenAgain() async throws {
        try await TestServer.run { server in
            let p = try await Self.players(server)
            let request = MatchRequestBody(requestID: "r-host", minPlayers: 2, maxPlayers: 3, playersToInvite: [p.bob.player.playerID])
            #expect(try await server.send(.post, "/v1/matchmaking/requests", request, token: p.ann.token).status == .created)

            try await server.services.database.write {
                try await $0.sql.raw("CREATE TRIGGER refuse_invitations BEFORE INSERT ON invitations BEGIN SELECT RAISE(ABORT, 'refused by the test'); END")
                    .run()
            }
            let failed = try await Self.invite(server, [p.cat], into: "r-host", by: p.ann)
            #expect(failed.status == .internalServerError, "\(String(decoding: failed.body, as: UTF8.self))")
            #expect(try await Self.invitation(server, of: p.cat) == nil)
            #expect(try await Invitations.events(server, of: p.cat, .matchInvitation).isEmpty)

            try await server.services.database.write { try await $0.sql.raw("DROP TRIGGER refuse_invitations").run() }
            let again = try await Self.invite(server, [p.cat], into: "r-host", by: p.ann)
            #expect(again.status == .ok, "\(String(decoding: again.body, as: UTF8.self))")
            let cats = try #require(try await Self.invitation(server, of: p.cat))
            #expect(cats.matchID == (try await Self.invitation(server, of: p.bob))?.matchID)
            #expect(try await Invitations.events(server, of: p.cat, .matchInvitation).count == 1)
        }
    }

    @Test func anAutoMatchRequestInvitesIntoItsOwnLobbyWhichIsThenStored() async throws {
        try await TestServer.run { server in
            let p = try await Self.players(server)
            let request = MatchRequestBody(requestID: "r-auto", minPlayers: 2, maxPlayers: 2)
            #expect(try await server.send(.post, "/v1/matchmaking/requests", request, token: p.ann.token).status == .created)
            #expect(try await Self.invite(server, [p.eve], into: "r-auto", by: p.ann).status == .ok)
            let invitation = try #require(try await Self.invitation(server, of: p.eve))
            let accepted = try await server.send(
                .post, "/v1/invitations/\(invitation.invitationID)/accept", AcceptInvitation(requestID: "r-eve"), token: p.eve.token)
            #expect(accepted.status == .ok)
            let host = try await Invitations.status(server, "r-auto", of: p.ann)
            #expect(host.state == .matched && host.matchID == invitation.matchID)
        }
    }

    @Test func refusalsSayWhatWasWrong() async throws {
        try await TestServer.run { server in
            let p = try await Self.players(server)
            let request = MatchRequestBody(requestID: "r-host", minPlayers: 2, maxPlayers: 3, playersToInvite: [p.bob.player.playerID])
            #expect(try await server.send(.post, "/v1/matchmaking/requests", request, token: p.ann.token).status == .created)

            expectError(try await Self.invite(server, [p.dan], into: "r-host", by: p.ann), .forbidden, "matchmaking.not_friends", .invalidPlayer)
            expectError(try await Self.invite(server, [p.ann], into: "r-host", by: p.ann), .badRequest, "matchmaking.invite_self", .invalidParameter)
            let bob = try await Self.invite(server, [p.cat, p.bob], into: "r-host", by: p.ann)
            expectError(bob, .conflict, "matchmaking.already_in_match", .invalidPlayer)
            #expect(bob.error?.message.contains(p.bob.player.playerID) == true)
            expectError(try await Self.invite(server, [p.cat], into: "r-nothing", by: p.ann), .notFound, "matchmaking.no_such_request", .invalidParameter)
            let tooMany = try await Self.invite(server, [p.cat, p.eve], into: "r-host", by: p.ann)
            expectError(tooMany, .conflict, "matchmaking.no_open_seats", .matchRequestInvalid)
            #expect(tooMany.error?.message.contains("1 open seat") == true, "\(String(describing: tooMany.error?.message))")
            // Nothing of the refused calls was sent.
            #expect(try await Self.invitation(server, of: p.cat) == nil)
            #expect(try await Self.invitation(server, of: p.eve) == nil)

            // Bob, once he accepted, waits in Ann's match but does not host it.
            let bobs = try #require(try await Self.invitation(server, of: p.bob))
            _ = try await server.send(.post, "/v1/invitations/\(bobs.invitationID)/accept", AcceptInvitation(requestID: "r-bob"), token: p.bob.token)
            expectError(try await Self.invite(server, [p.ann], into: "r-bob", by: p.bob), .forbidden, "matchmaking.not_host", .invalidParameter)
        }
    }

    @Test func invitationsCountAgainstTheInvitersLimits() async throws {
        try await TestServer.run(rateLimits: try RateLimitTests.limits("invitations=2/3600")) { server in
            let p = try await Self.players(server)
            let request = MatchRequestBody(requestID: "r-host", minPlayers: 2, maxPlayers: 4, playersToInvite: [p.bob.player.playerID])
            #expect(try await server.send(.post, "/v1/matchmaking/requests", request, token: p.ann.token).status == .created)
            RateLimitTests.expectLimited(try await Self.invite(server, [p.cat, p.eve], into: "r-host", by: p.ann))
            #expect(try await Self.invite(server, [p.cat], into: "r-host", by: p.ann).status == .ok)
        }
    }
}
