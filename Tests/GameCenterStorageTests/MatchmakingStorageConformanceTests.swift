import Foundation
import GameCenterStorage
import Testing

/// The storage contract of matches, members and invitations, on every engine in ``TestDatabases/all``.
@Suite struct MatchmakingStorageConformanceTests {
    func players(_ count: Int, in db: Database) async throws -> [String] {
        let records = (0..<count).map { _ in
            PlayerRecord(
                playerID: TestDatabases.unique("G"), environment: "sandbox", accountName: TestDatabases.unique("acct"),
                passwordHash: "hash", alias: "Alias", underage: false, createdAt: 1_000)
        }
        try await db.write { storage in for record in records { _ = try await storage.insertPlayer(record) } }
        return records.map(\.playerID)
    }

    func match(_ state: MatchRecord.State = .forming) -> MatchRecord {
        MatchRecord(
            matchID: TestDatabases.unique("m"), bundleID: "com.example.game", environment: "sandbox", hosted: false,
            state: state, createdAt: 1_000)
    }

    func invitation(
        _ match: MatchRecord, from inviter: String, to invitee: String, expiresAt: Int64 = 100_000,
        bundleID: String = "com.example.game"
    ) -> InvitationRecord {
        InvitationRecord(
            invitationID: TestDatabases.unique("inv"), matchID: match.matchID, bundleID: bundleID, environment: "sandbox",
            inviter: inviter, invitee: invitee, hosted: false, minPlayers: 2, maxPlayers: 4, message: "Play?",
            state: .pending, createdAt: 1_000, expiresAt: expiresAt)
    }

    @Test(arguments: TestDatabases.all)
    func matchesAndTheirMembersRoundTripAndEachMemberLeavesOnce(engine: String) async throws {
        try await TestDatabases.with(engine) { db in
            let ids = try await players(3, in: db)
            let match = match(.started)  // not forming: the restart test beside this one abandons forming matches
            try await db.write { try await $0.insertMatch(match) }
            #expect(try await db.read { try await $0.match(id: match.matchID) } == match)
            #expect(try await db.read { try await $0.match(id: "m-none") } == nil)
            try await db.write { try await $0.setMatchState(match.matchID, .started, now: 2_000) }
            #expect(try await db.read { try await $0.match(id: match.matchID) }?.state == .started)

            let members = [
                MatchMemberRecord(playerID: ids[1], requestID: "r1", joinedAt: 2_000),
                MatchMemberRecord(playerID: ids[0], requestID: "r0", joinedAt: 2_000),
                MatchMemberRecord(playerID: ids[2], requestID: nil, joinedAt: 3_000),
            ]
            try await db.write { try await $0.insertMatchMembers(match.matchID, members) }
            // A member added again is left as they were (same request, same join time).
            try await db.write {
                try await $0.insertMatchMembers(match.matchID, [MatchMemberRecord(playerID: ids[0], requestID: "other", joinedAt: 9_000)])
            }
            let stored = try await db.read { try await $0.matchMembers(match.matchID) }
            // In the order they joined; those who joined together by player id.
            #expect(stored.map(\.playerID) == [ids[0], ids[1]].sorted() + [ids[2]])
            #expect(stored.first { $0.playerID == ids[0] }?.requestID == "r0")
            #expect(try await db.read { try await $0.matchID(playerID: ids[1], requestID: "r1") } == match.matchID)
            #expect(try await db.read { try await $0.matchID(playerID: ids[1], requestID: "r0") } == nil)

            #expect(try await db.write { try await $0.leaveMatch(match.matchID, playerID: ids[1], now: 4_000) })
            #expect(try await db.write { try await $0.leaveMatch(match.matchID, playerID: ids[1], now: 5_000) } == false)
            #expect(try await db.write { try await $0.leaveMatch(match.matchID, playerID: "G:none", now: 5_000) } == false)
            #expect(try await db.read { try await $0.matchMembers(match.matchID) }.first { $0.playerID == ids[1] }?.leftAt == 4_000)
            try await db.write { try await $0.setMatchState(match.matchID, .ended, now: 6_000) }
            #expect(try await db.read { try await $0.match(id: match.matchID) }?.state == .ended)
        }
    }

    @Test(arguments: TestDatabases.all)
    func invitationsAreListedForTheirGameUntilAnsweredOnceOrExpired(engine: String) async throws {
        try await TestDatabases.with(engine) { db in
            let ids = try await players(3, in: db)
            let (inviter, invitee, other) = (ids[0], ids[1], ids[2])
            // Started, not forming: the PostgreSQL test database is shared, and the restart test beside this one
            // abandons every forming match in it.
            let match = match(.started)
            let first = invitation(match, from: inviter, to: invitee)
            let expiring = invitation(match, from: inviter, to: invitee, expiresAt: 5_000)
            let otherGame = invitation(match, from: inviter, to: invitee, bundleID: "com.example.other")
            let toOther = invitation(match, from: inviter, to: other)
            try await db.write { storage in
                try await storage.insertMatch(match)
                for record in [first, expiring, otherGame, toOther] { try await storage.insertInvitation(record) }
            }
            let stored = try await db.read { try await $0.invitation(id: first.invitationID) }
            #expect(stored == first)
            let pending = try await db.read {
                try await $0.pendingInvitations(invitee: invitee, bundleID: "com.example.game", environment: "sandbox", now: 2_000)
            }
            #expect(Set(pending.map(\.invitationID)) == [first.invitationID, expiring.invitationID])
            let later = try await db.read {
                try await $0.pendingInvitations(invitee: invitee, bundleID: "com.example.game", environment: "sandbox", now: 6_000)
            }
            #expect(later.map(\.invitationID) == [first.invitationID], "an expired invitation is no longer listed")

            // Answered once; an expired one cannot be answered.
            let accepted = try await db.write { storage -> InvitationRecord? in
                try await storage.answerInvitation(id: first.invitationID, state: .accepted, now: 3_000)
            }
            #expect(accepted?.state == .accepted)
            #expect(try await db.write { try await $0.answerInvitation(id: first.invitationID, state: .declined, now: 3_500) } == nil)
            #expect(try await db.write { try await $0.answerInvitation(id: expiring.invitationID, state: .accepted, now: 6_000) } == nil)

            // Cancelling some invitees leaves the others pending.
            let cancelled = try await db.write { try await $0.cancelInvitations(matchID: match.matchID, invitees: [other], now: 7_000) }
            #expect(cancelled.map(\.invitationID) == [toOther.invitationID])
            #expect(try await db.read { try await $0.invitation(id: otherGame.invitationID) }?.state == .pending)
            let rest = try await db.write { try await $0.cancelInvitations(matchID: match.matchID, now: 7_000) }
            #expect(Set(rest.map(\.invitationID)) == [expiring.invitationID, otherGame.invitationID])
        }
    }

    @Test(arguments: TestDatabases.all)
    func invitationsToEveryGameAreListedAndAcceptedInTheAppOnlyWhileOpen(engine: String) async throws {
        try await TestDatabases.with(engine) { db in
            let ids = try await players(2, in: db)
            let (inviter, invitee) = (ids[0], ids[1])
            let match = match(.started)
            let game = invitation(match, from: inviter, to: invitee)
            let other = invitation(match, from: inviter, to: invitee, bundleID: "com.example.other")
            let expiring = invitation(match, from: inviter, to: invitee, expiresAt: 5_000)
            try await db.write { storage in
                try await storage.insertMatch(match)
                for record in [game, other, expiring] { try await storage.insertInvitation(record) }
            }
            let everyGame = try await db.read {
                try await $0.pendingInvitations(invitee: invitee, bundleID: nil, environment: "sandbox", now: 2_000)
            }
            #expect(Set(everyGame.map(\.invitationID)) == [game.invitationID, other.invitationID, expiring.invitationID])
            #expect(everyGame.allSatisfy { $0.acceptedInAppAt == nil })
            #expect(try await db.read { try await $0.pendingInvitations(invitee: invitee, bundleID: nil, environment: "live", now: 2_000) }.isEmpty)
            #expect(try await db.read { try await $0.pendingInvitations(invitee: inviter, bundleID: nil, environment: "sandbox", now: 2_000) }.isEmpty)

            // Accepted in the app: still pending (listed for the game), the first time kept.
            let accepted = try await db.write { try await $0.acceptInvitationInApp(id: game.invitationID, now: 3_000) }
            #expect(accepted?.acceptedInAppAt == 3_000 && accepted?.state == .pending)
            let again = try await db.write { try await $0.acceptInvitationInApp(id: game.invitationID, now: 4_000) }
            #expect(again?.acceptedInAppAt == 3_000)
            let listed = try await db.read {
                try await $0.pendingInvitations(invitee: invitee, bundleID: "com.example.game", environment: "sandbox", now: 4_000)
            }
            #expect(listed.first { $0.invitationID == game.invitationID }?.acceptedInAppAt == 3_000)
            // The game then answers it as usual, once.
            #expect(try await db.write { try await $0.answerInvitation(id: game.invitationID, state: .accepted, now: 4_500) }?.acceptedInAppAt == 3_000)
            #expect(try await db.write { try await $0.acceptInvitationInApp(id: game.invitationID, now: 4_600) } == nil)
            // Expired, declined or unknown: nothing to accept.
            #expect(try await db.write { try await $0.acceptInvitationInApp(id: expiring.invitationID, now: 6_000) } == nil)
            _ = try await db.write { try await $0.answerInvitation(id: other.invitationID, state: .declined, now: 5_000) }
            #expect(try await db.write { try await $0.acceptInvitationInApp(id: other.invitationID, now: 5_500) } == nil)
            #expect(try await db.write { try await $0.acceptInvitationInApp(id: "inv-none", now: 5_500) } == nil)
        }
    }

    @Test(arguments: TestDatabases.all)
    func friendsChosenToPlayWithAreKeptPerGameReplacedAndTakenOnceUntilTheyExpire(engine: String) async throws {
        try await TestDatabases.with(engine) { db in
            let ids = try await players(3, in: db)
            let (player, ann, bob) = (ids[0], ids[1], ids[2])
            let first = PlayWithFriendsRecord(playerID: player, bundleID: "com.example.game", friends: [ann], createdAt: 1_000, expiresAt: 10_000)
            let otherGame = PlayWithFriendsRecord(
                playerID: player, bundleID: "com.example.other", friends: [bob, ann], createdAt: 1_000, expiresAt: 10_000)
            try await db.write { storage in
                try await storage.savePlayWithFriends(first)
                try await storage.savePlayWithFriends(otherGame)
            }
            #expect(try await db.read { try await $0.playWithFriends(playerID: player, bundleID: "com.example.game", now: 2_000) } == first)
            // A new choice replaces the last one.
            let second = PlayWithFriendsRecord(
                playerID: player, bundleID: "com.example.game", friends: [bob, ann], createdAt: 3_000, expiresAt: 12_000)
            try await db.write { try await $0.savePlayWithFriends(second) }
            #expect(try await db.read { try await $0.playWithFriends(playerID: player, bundleID: "com.example.game", now: 4_000) } == second)
            // Taken once, in the order chosen; then gone. The other game's choice stays.
            #expect(try await db.write { try await $0.takePlayWithFriends(playerID: player, bundleID: "com.example.game", now: 5_000) } == second)
            #expect(try await db.write { try await $0.takePlayWithFriends(playerID: player, bundleID: "com.example.game", now: 5_000) } == nil)
            #expect(try await db.read { try await $0.playWithFriends(playerID: player, bundleID: "com.example.game", now: 5_000) } == nil)
            #expect(try await db.read { try await $0.playWithFriends(playerID: player, bundleID: "com.example.other", now: 5_000) } == otherGame)
            // Another player's choice is not this player's.
            #expect(try await db.read { try await $0.playWithFriends(playerID: ann, bundleID: "com.example.other", now: 5_000) } == nil)
            // Expired: neither listed nor handed out, and removed when taken.
            #expect(try await db.read { try await $0.playWithFriends(playerID: player, bundleID: "com.example.other", now: 10_000) } == nil)
            #expect(try await db.write { try await $0.takePlayWithFriends(playerID: player, bundleID: "com.example.other", now: 10_000) } == nil)
            let stored = try await db.read { storage in
                try await storage.sql.raw("SELECT COUNT(*) AS n FROM play_with_friends WHERE player_id = \(bind: player)").first()?
                    .decode(column: "n", as: Int64.self)
            }
            #expect(stored == 0)
        }
    }

    @Test(arguments: TestDatabases.all)
    func aRestartAbandonsFormingMatchesAndOnlyThem(engine: String) async throws {
        try await TestDatabases.with(engine) { db in
            let ids = try await players(2, in: db)
            let (me, other) = (TestDatabases.unique("node"), TestDatabases.unique("node"))
            _ = try await db.write {
                try await $0.registerNode(
                    NodeRecord(nodeID: other, httpAddress: "127.0.0.1:1", udpAddress: "127.0.0.1:2", startedAt: 1, lastSeen: 10_000),
                    aliveAfter: 0, forgetBefore: 0)
            }
            var mineForming = match(.forming), otherForming = match(.forming)
            mineForming.nodeID = me
            otherForming.nodeID = other
            let (forming, started, elsewhere) = (mineForming, match(.started), otherForming)
            let stranded = invitation(forming, from: ids[0], to: ids[1])
            let live = invitation(started, from: ids[0], to: ids[1])
            let kept = invitation(elsewhere, from: ids[0], to: ids[1])
            try await db.write { storage in
                for match in [forming, started, elsewhere] { try await storage.insertMatch(match) }
                for invitation in [stranded, live, kept] { try await storage.insertInvitation(invitation) }
            }
            // This node starts again: its forming matches died with its previous run; another live node's stay.
            let cancelled = try await db.write { try await $0.abandonFormingMatches(now: 2_000, deadNode: me, aliveAfter: 5_000) }
            // (Other tests' forming matches may go too: only this test's are looked at.)
            let mine = Set([stranded, live, kept].map(\.invitationID))
            #expect(cancelled.map(\.invitationID).filter(mine.contains) == [stranded.invitationID])
            #expect(try await db.read { try await $0.match(id: forming.matchID) }?.state == .failed)
            #expect(try await db.read { try await $0.match(id: forming.matchID) }?.nodeID == me)
            #expect(try await db.read { try await $0.match(id: started.matchID) }?.state == .started)
            #expect(try await db.read { try await $0.match(id: elsewhere.matchID) }?.state == .forming)
            #expect(try await db.read { try await $0.invitation(id: live.invitationID) }?.state == .pending)
            // The other node is no longer seen: a node taking its game's queue over abandons them.
            let taken = try await db.write {
                try await $0.abandonFormingMatches(now: 3_000, deadNode: me, aliveAfter: 12_000, game: ("com.example.game", "sandbox"))
            }
            #expect(taken.map(\.invitationID).filter(mine.contains) == [kept.invitationID])
            #expect(try await db.read { try await $0.match(id: elsewhere.matchID) }?.state == .failed)
        }
    }
}
