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
    func aRestartAbandonsFormingMatchesAndOnlyThem(engine: String) async throws {
        try await TestDatabases.with(engine) { db in
            let ids = try await players(2, in: db)
            let forming = match(.forming), started = match(.started)
            let stranded = invitation(forming, from: ids[0], to: ids[1])
            let live = invitation(started, from: ids[0], to: ids[1])
            try await db.write { storage in
                try await storage.insertMatch(forming)
                try await storage.insertMatch(started)
                try await storage.insertInvitation(stranded)
                try await storage.insertInvitation(live)
            }
            let cancelled = try await db.write { try await $0.abandonFormingMatches(now: 2_000) }
            #expect(cancelled.map(\.invitationID).contains(stranded.invitationID))
            #expect(!cancelled.map(\.invitationID).contains(live.invitationID))
            #expect(try await db.read { try await $0.match(id: forming.matchID) }?.state == .failed)
            #expect(try await db.read { try await $0.match(id: started.matchID) }?.state == .started)
            #expect(try await db.read { try await $0.invitation(id: live.invitationID) }?.state == .pending)
        }
    }
}
