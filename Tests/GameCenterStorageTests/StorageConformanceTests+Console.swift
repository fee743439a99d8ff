import Foundation
import GameCenterStorage
import Testing

/// The storage the studio console added, on every engine in ``TestDatabases/all``.
extension StorageConformanceTests {
    /// Console users are unique while active; a removed user ends their sessions and may be added again.
    @Test(arguments: TestDatabases.all)
    func consoleUsersAndTheirSessions(engine: String) async throws {
        try await TestDatabases.with(engine) { db in
            let name = TestDatabases.unique("ada")
            let user = ConsoleUserRecord(name: name, role: "owner", passwordHash: "h1", createdAt: 1_000)
            #expect(try await db.write { try await $0.insertConsoleUser(user) })
            #expect(
                try await db.write { try await $0.insertConsoleUser(ConsoleUserRecord(name: name, role: "support", passwordHash: "h2", createdAt: 2_000)) }
                    == false)
            #expect(try await db.read { try await $0.consoleUser(name: name) } == user)
            #expect(try await db.read { try await $0.consoleUsers() }.contains(user))

            let session = ConsoleSessionRecord(
                sessionID: TestDatabases.unique("cs"), tokenHash: TestDatabases.unique("th"), userName: name, createdAt: 1_000, expiresAt: 9_000)
            try await db.write { try await $0.insertConsoleSession(session) }
            let found = try #require(try await db.read { try await $0.consoleSession(tokenHash: session.tokenHash) })
            #expect(found.session == session && found.user == user)
            #expect(try await db.read { try await $0.consoleSession(tokenHash: "nope") } == nil)

            #expect(try await db.write { try await $0.disableConsoleUser(name: name, now: 5_000) })
            #expect(try await db.write { try await $0.disableConsoleUser(name: name, now: 6_000) } == false)
            let ended = try #require(try await db.read { try await $0.consoleSession(tokenHash: session.tokenHash) })
            #expect(ended.session.revokedAt == 5_000 && ended.user.disabledAt == 5_000)
            #expect(try await db.read { try await $0.consoleUsers() }.contains { $0.name == name } == false)

            let again = ConsoleUserRecord(name: name, role: "support", passwordHash: "h3", createdAt: 7_000)
            #expect(try await db.write { try await $0.insertConsoleUser(again) })
            #expect(try await db.read { try await $0.consoleUser(name: name) } == again)
            #expect(try await db.write { try await $0.revokeConsoleSession(sessionID: session.sessionID, now: 8_000) } == false)
        }
    }

    @Test(arguments: TestDatabases.all)
    func bansAreKeptOncePerPlayer(engine: String) async throws {
        try await TestDatabases.with(engine) { db in
            let player = newPlayer()
            _ = try await db.write { try await $0.insertPlayer(player) }
            let ban = PlayerBanRecord(playerID: player.playerID, reason: "aimbot", bannedBy: "console:ada", bannedAt: 1_000)
            #expect(try await db.write { try await $0.insertPlayerBan(ban) })
            #expect(try await db.write { try await $0.insertPlayerBan(ban) } == false)
            #expect(try await db.read { try await $0.playerBan(playerID: player.playerID) } == ban)
            #expect(try await db.write { try await $0.deletePlayerBan(playerID: player.playerID) })
            #expect(try await db.write { try await $0.deletePlayerBan(playerID: player.playerID) } == false)
            #expect(try await db.read { try await $0.playerBan(playerID: player.playerID) } == nil)
        }
    }

    /// A ban and a session opened at the same moment are ordered by the player's row: a ban waits for the session whose
    /// write checked the ban first (so the ban's list of sessions to end has it), and a session's write that comes
    /// while a ban is being stored sees the ban. A new password waits the same way.
    @Test(arguments: TestDatabases.all)
    func aBanWaitsForASessionBeingOpenedAndASessionOpenedDuringABanSeesIt(engine: String) async throws {
        try await TestDatabases.with(engine) { db in
            let player = newPlayer()
            _ = try await db.write { try await $0.insertPlayer(player) }
            let session = SessionRecord(
                sessionID: TestDatabases.unique("s"), tokenHash: TestDatabases.unique("h"), playerID: player.playerID,
                bundleID: "com.example.game", environment: "sandbox", createdAt: 1_000, expiresAt: 10_000)
            let ban = PlayerBanRecord(playerID: player.playerID, reason: "aimbot", bannedBy: "console:ada", bannedAt: 1_000)

            // The session's write checks first and takes a while to store the session: the ban waits for it.
            let (checked, signal) = AsyncStream.makeStream(of: Void.self)
            let opening = Task {
                try await db.write { storage in
                    _ = try await storage.lockPlayer(id: player.playerID, for: .openingSession)
                    let banned = try await storage.playerBan(playerID: player.playerID)
                    signal.yield()
                    try await Task.sleep(for: .milliseconds(300))
                    try await storage.insertSession(session)
                    return banned
                }
            }
            for await _ in checked { break }
            let banned = try await db.write { storage in
                (try await storage.lockPlayer(id: player.playerID, for: .closingAccess), try await storage.insertPlayerBan(ban))
            }
            #expect(banned == (true, true))
            #expect(try await db.write { try await $0.revokeSessions(playerID: player.playerID, keeping: nil, now: 2_000) } == [session.sessionID])
            #expect(try await opening.value == nil)

            // The ban's write holds the row first: a session's write waits, then sees the ban.
            _ = try await db.write { try await $0.deletePlayerBan(playerID: player.playerID) }
            let (locked, lockSignal) = AsyncStream.makeStream(of: Void.self)
            let banning = Task {
                try await db.write { storage in
                    _ = try await storage.lockPlayer(id: player.playerID, for: .closingAccess)
                    lockSignal.yield()
                    try await Task.sleep(for: .milliseconds(300))
                    _ = try await storage.insertPlayerBan(ban)
                }
            }
            for await _ in locked { break }
            let seen = try await db.write { storage in
                _ = try await storage.lockPlayer(id: player.playerID, for: .openingSession)
                return try await storage.playerBan(playerID: player.playerID)
            }
            #expect(seen == ban)
            try await banning.value

            // A new password waits for a session being opened as a ban does.
            let later = SessionRecord(
                sessionID: TestDatabases.unique("s"), tokenHash: TestDatabases.unique("h"), playerID: player.playerID,
                bundleID: "com.example.game", environment: "sandbox", createdAt: 3_000, expiresAt: 10_000)
            let (opened, openSignal) = AsyncStream.makeStream(of: Void.self)
            let reopening = Task {
                try await db.write { storage in
                    _ = try await storage.lockPlayer(id: player.playerID, for: .openingSession)
                    openSignal.yield()
                    try await Task.sleep(for: .milliseconds(300))
                    try await storage.insertSession(later)
                }
            }
            for await _ in opened { break }
            #expect(try await db.write { try await $0.setPasswordHash(playerID: player.playerID, hash: "new", now: 4_000) })
            #expect(try await db.read { try await $0.activeSessions(playerID: player.playerID, now: 4_000) }.map(\.sessionID) == [later.sessionID])
            try await reopening.value
            #expect(try await db.read { try await $0.player(id: player.playerID) }?.passwordHash == "new")
            #expect(try await db.write { try await $0.setPasswordHash(playerID: "G:nobody", hash: "x", now: 4_000) } == false)
            #expect(try await db.write { try await $0.lockPlayer(id: "G:nobody", for: .closingAccess) } == false)
        }
    }

    /// A search matches an id exactly, an account name from its start and an alias anywhere, letter case ignored;
    /// `%`, `_` and `\` are characters, never patterns.
    @Test(arguments: TestDatabases.all)
    func playersAreSearchedByIdAccountNamePrefixOrAliasPart(engine: String) async throws {
        try await TestDatabases.with(engine) { db in
            let token = TestDatabases.unique("srch").replacingOccurrences(of: "-", with: "")
            let named = newPlayer(account: "\(token)-named")
            let aliased = {
                var player = newPlayer("live"); player.alias = "The \(token.uppercased())_% Ace"; return player
            }()
            let other = newPlayer()
            try await db.write { storage in
                for player in [named, aliased, other] { _ = try await storage.insertPlayer(player) }
            }
            #expect(Set(try await db.read { try await $0.searchPlayers(token, limit: 10) }.map(\.playerID)) == [named.playerID, aliased.playerID])
            #expect(try await db.read { try await $0.searchPlayers("\(token)_%", limit: 10) }.map(\.playerID) == [aliased.playerID])
            #expect(try await db.read { try await $0.searchPlayers("\(token)%named", limit: 10) }.isEmpty)
            #expect(try await db.read { try await $0.searchPlayers(String(token.dropFirst()), limit: 10) }.map(\.playerID) == [aliased.playerID])
            #expect(try await db.read { try await $0.searchPlayers(other.playerID, limit: 10) }.map(\.playerID) == [other.playerID])
            #expect(try await db.read { try await $0.searchPlayers(token, limit: 1) }.count == 1)
            #expect(try await db.read { try await $0.searchPlayers("\\", limit: 10) }.allSatisfy { $0.alias.contains("\\") || $0.accountName.contains("\\") })
        }
    }

    @Test(arguments: TestDatabases.all)
    func aPlayersGamesMatchesAndInvitationsNewestFirst(engine: String) async throws {
        try await TestDatabases.with(engine) { db in
            let (ann, bob) = (newPlayer(), newPlayer())
            let (first, second) = (TestDatabases.unique("m"), TestDatabases.unique("m"))
            try await db.write { storage in
                for player in [ann, bob] { _ = try await storage.insertPlayer(player) }
                try await storage.recordPlayedGame(playerID: ann.playerID, bundleID: "com.example.a", now: 1_000)
                try await storage.recordPlayedGame(playerID: ann.playerID, bundleID: "com.example.b", now: 2_000)
                for (match, at) in [(first, Int64(1_000)), (second, 3_000)] {
                    try await storage.insertMatch(
                        MatchRecord(matchID: match, bundleID: "com.example.a", environment: "sandbox", hosted: false, state: .forming, createdAt: at))
                    try await storage.insertMatchMembers(match, [MatchMemberRecord(playerID: ann.playerID, requestID: nil, joinedAt: at)])
                }
                try await storage.insertInvitation(
                    InvitationRecord(
                        invitationID: TestDatabases.unique("inv"), matchID: second, bundleID: "com.example.a", environment: "sandbox", inviter: bob.playerID,
                        invitee: ann.playerID, hosted: false, minPlayers: 2, maxPlayers: 2, message: nil, state: .pending, createdAt: 3_000,
                        // In 2100: servers of other tests share PostgreSQL's database, and their sweepers expire what is due.
                        expiresAt: 4_102_444_800_000))
            }
            #expect(try await db.read { try await $0.playedGames(playerID: ann.playerID) }.map(\.bundleID) == ["com.example.b", "com.example.a"])
            #expect(try await db.read { try await $0.playerMatches(playerID: ann.playerID, limit: 10) }.map(\.matchID) == [second, first])
            #expect(try await db.read { try await $0.playerMatches(playerID: ann.playerID, limit: 1) }.map(\.matchID) == [second])
            for player in [ann, bob] {
                let invitations = try await db.read { try await $0.playerInvitations(playerID: player.playerID, limit: 10) }
                #expect(invitations.map(\.inviter) == [bob.playerID] && invitations.first?.state == "pending")
            }
        }
    }

    /// The whole audit log, one game's, or the studio-wide entries (the empty bundle id), newest first.
    @Test(arguments: TestDatabases.all)
    func theAuditLogIsReadWholeOrByGame(engine: String) async throws {
        try await TestDatabases.with(engine) { db in
            let game = TestDatabases.unique("com.example.audit")
            let subject = TestDatabases.unique("subject")
            try await db.write { storage in
                for (bundleID, action) in [(game, "scores.erased"), ("", "player.banned"), (game, "player.hidden")] {
                    try await storage.appendAudit(
                        AuditEntry(bundleID: bundleID, actor: "console:ada", action: action, subject: subject, detail: "{}", createdAt: 1_000))
                }
            }
            let all = try await db.read { try await $0.auditEntries(bundleID: nil, before: nil, limit: 1_000) }.filter { $0.subject == subject }
            #expect(all.map(\.action) == ["player.hidden", "player.banned", "scores.erased"])
            #expect(
                try await db.read { try await $0.auditEntries(bundleID: game, before: nil, limit: 10) }.map(\.action) == ["player.hidden", "scores.erased"])
            let studio = try await db.read { try await $0.auditEntries(bundleID: "", before: nil, limit: 1_000) }
            #expect(studio.contains { $0.subject == subject && $0.action == "player.banned" } && studio.allSatisfy { $0.bundleID.isEmpty })
            let older = try await db.read { try await $0.auditEntries(bundleID: nil, before: all[0].entryID, limit: 1) }
            #expect(older.first?.entryID ?? 0 < all[0].entryID)

            // One actor's entries, of every game or of one, paged as the others.
            let actor = TestDatabases.unique("console:bob")
            try await db.write { storage in
                for (bundleID, action) in [(game, "player.shown"), ("", "player.unbanned")] {
                    try await storage.appendAudit(
                        AuditEntry(bundleID: bundleID, actor: actor, action: action, subject: subject, detail: "{}", createdAt: 2_000))
                }
            }
            let bob = try await db.read { try await $0.auditEntries(bundleID: nil, actor: actor, before: nil, limit: 10) }
            #expect(bob.map(\.action) == ["player.unbanned", "player.shown"])
            #expect(try await db.read { try await $0.auditEntries(bundleID: game, actor: actor, before: nil, limit: 10) }.map(\.action) == ["player.shown"])
            #expect(try await db.read { try await $0.auditEntries(bundleID: "", actor: actor, before: nil, limit: 10) }.map(\.action) == ["player.unbanned"])
            #expect(
                try await db.read { try await $0.auditEntries(bundleID: nil, actor: actor, before: bob[0].entryID, limit: 10) }.map(\.action) == [
                    "player.shown"
                ])
        }
    }
}
