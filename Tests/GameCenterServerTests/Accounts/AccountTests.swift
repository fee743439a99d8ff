import Foundation
import GameCenterProtocol
import GameCenterStorage
import HTTPTypes
import NIOCore
import HummingbirdBcrypt
import SQLKit
import Testing
@testable import GameCenterServer

/// Sign-up, sign-in, sessions and profiles through the HTTP routes.
@Suite struct AccountTests {
    @Test func signUpValidatesEveryField() async throws {
        try await TestServer.run { client in
            func signUp(_ account: String, _ password: String, _ alias: String) async throws -> TestServer.Client.Answer {
                try await client.send(.post, "/v1/accounts", SignUpRequest(account: account, password: password, alias: alias))
            }
            expectError(try await signUp("ab", "password-1", "A"), .badRequest, "account.invalid_name", .invalidParameter)
            expectError(try await signUp("has space", "password-1", "A"), .badRequest, "account.invalid_name", .invalidParameter)
            expectError(try await signUp(String(repeating: "a", count: 65), "password-1", "A"), .badRequest, "account.invalid_name", .invalidParameter)
            expectError(try await signUp("valid-name", "short", "A"), .badRequest, "account.invalid_password", .invalidParameter)
            expectError(try await signUp("valid-name", "password-1", "   "), .badRequest, "account.invalid_alias", .invalidParameter)
            expectError(
                try await signUp("valid-name", "password-1", String(repeating: "x", count: 33)), .badRequest, "account.invalid_alias", .invalidParameter)
            expectError(try await signUp("valid-name", "password-1", "bad\u{7}"), .badRequest, "account.invalid_alias", .invalidParameter)
            // Nothing above was stored: the name is still free.
            #expect(try await signUp("valid-name", "password-1", "  Valid  ").status == .created)
        }
    }

    /// Aliases refuse what renders as nothing or turns text around (U+200B, U+200F and U+2066–2069 passed before),
    /// and keep every script.
    @Test(arguments: [
        "Bob\u{200B}", "\u{200F}Bob", "Bob\u{2066}", "Bob\u{2067}x", "Bob\u{2068}", "Bob\u{2069}", "\u{202E}boB",
        "B\u{00AD}ob", "Bob\u{FEFF}", "Bob\u{3164}", "Bo\u{00A0}b", "Bo\u{2028}b", "Bo\u{E000}b", "Bo\u{0378}b",
    ])
    func aliasesRefuseInvisibleAndDirectionCharacters(_ alias: String) async throws {
        try await TestServer.run { client in
            let answer = try await client.send(
                .post, "/v1/accounts",
                SignUpRequest(
                    account: "hidden-\(UUID().uuidString.prefix(6).lowercased())",
                    password: "password-1", alias: alias))
            expectError(answer, .badRequest, "account.invalid_alias", .invalidParameter)
            #expect(answer.error?.message.contains("invisible") == true)
        }
    }

    @Test(arguments: ["Zoë", "李小龙", "José Ñandú", "Ελένη", "Мария", "👾 Space", "a b"])
    func aliasesKeepEveryScript(_ alias: String) async throws {
        try await TestServer.run { client in
            let session = try await client.signUp(alias: alias)
            #expect(session.player.alias == alias)
        }
    }

    /// An alias that looks like another player's (the same UTS #39 skeleton) without being it is refused, at sign-up
    /// and when changed; the very same alias, another environment and the player's own alias are not look-alikes.
    @Test func aliasesThatLookLikeAnotherPlayersAreRefused() async throws {
        #expect(AliasSkeleton.tableSize > 6_000, "the bundled confusables table is missing")
        #expect(AliasSkeleton.of("\u{0412}ob") == AliasSkeleton.of("Bob"))
        #expect(AliasSkeleton.of("Zoe\u{0308}") == AliasSkeleton.of("Zoë"), "composed and decomposed forms are one alias")
        #expect(AliasSkeleton.of("Bobby") != AliasSkeleton.of("Bob"))
        // gamecenter-bench stores its players' skeletons in SQL (`fillPlayers`): "Bench N", 1 → l, 0 → O, lowercased.
        #expect(AliasSkeleton.of("Bench 1203") == "bench l2o3")
        try await TestServer.run { client in
            let bob = try await client.signUp(alias: "Bob")
            // Cyrillic В, Greek Β, fullwidth Ｂ, a zero for the o, another case, a Cyrillic о.
            for lookAlike in ["\u{0412}ob", "\u{0392}ob", "\u{FF22}ob", "B0b", "bob", "BOB", "B\u{043E}b"] {
                let answer = try await client.send(
                    .post, "/v1/accounts",
                    SignUpRequest(account: "copy-\(UUID().uuidString.prefix(6).lowercased())", password: "password-1", alias: lookAlike))
                expectError(answer, .conflict, "account.alias_look_alike", .invalidParameter)
                #expect(answer.error?.message.contains("“Bob”") == true, "the message names the alias it looks like")
            }
            #expect(try await client.signUp(alias: "Bob").player.alias == "Bob", "the same alias is allowed, as Game Center's are")
            #expect(try await client.signUp(alias: "B0b", environment: "live").player.alias == "B0b", "another environment has its own aliases")
            #expect(try await client.signUp(alias: "Bobby").player.alias == "Bobby")

            let other = try await client.signUp(alias: "Robert")
            let renamed = try await client.send(.patch, "/v1/me", UpdateProfileRequest(alias: "B\u{03BF}b"), token: other.token)
            expectError(renamed, .conflict, "account.alias_look_alike", .invalidParameter)
            let own = try await client.send(.patch, "/v1/me", UpdateProfileRequest(alias: "Bob", status: "same alias"), token: bob.token)
            #expect(try own.decode(LocalPlayerProfile.self).status == "same alias", "keeping one's own alias is no look-alike")
        }
    }

    /// Players stored before skeletons were kept get theirs when a server starts, and are then protected too.
    @Test func playersFromBeforeSkeletonsGetThemAtStart() async throws {
        try await TestServer.run { client in
            let old = PlayerRecord(
                playerID: "G:from-before", environment: "sandbox", accountName: "from-before", passwordHash: "-", alias: "Mallory",
                underage: false, createdAt: 1_000)
            _ = try await client.services.database.write { try await $0.insertPlayer(old) }
            let answer = { try await client.send(.post, "/v1/accounts", SignUpRequest(account: "copy", password: "password-1", alias: "MaIIory")) }
            #expect(try await answer().status == .created, "without its skeleton the old player is not found")
            try await client.services.accounts.fillMissingAliasSkeletons()
            let again = try await client.send(.post, "/v1/accounts", SignUpRequest(account: "copy-two", password: "password-1", alias: "MaIIory"))
            expectError(again, .conflict, "account.alias_look_alike", .invalidParameter)
        }
    }

    @Test func accountNamesAreUniquePerEnvironmentAndCaseInsensitive() async throws {
        try await TestServer.run { client in
            let first = try await client.signUp(account: "Alice")
            let again = try await client.send(.post, "/v1/accounts", SignUpRequest(account: "alice", password: "password-2", alias: "Other"))
            expectError(again, .conflict, "account.name_taken", .invalidParameter)
            let live = try await client.signUp(environment: "live", account: "alice")
            #expect(live.player.playerID != first.player.playerID)
            // The sandbox token is not valid in live.
            expectError(
                try await client.call(.get, "/v1/me", token: first.token, environment: "live"), .unauthorized, "account.session_other_game", .notAuthenticated)
        }
    }

    /// One player per device, for every game (the seed): a live session of one game opens one for another game of
    /// the same player and environment; the first stays, and other environments and dead tokens are refused.
    @Test func aSessionOfAnotherGameOpensOneForThisGame() async throws {
        try await TestServer.run(admin: true) { client in
            let first = try await client.signUp()
            // An hour later: a session opened now with a full lifetime would outlive the first.
            try await LeaderboardTests.advanceClock(client, hours: 1)
            let keyed: HTTPFields = [HTTPField.Name(DeviceHeader.clientKey)!: "secret-key-1"]
            let json = #"{"token": "\#(first.token)"}"#
            let opened = try await client.call(.post, "/v1/sessions/for-game", json: json, bundleID: "com.example.keyed", extraHeaders: keyed)
            #expect(opened.status == .ok)
            let session = try opened.decode(SessionResponse.self)
            #expect(session.player.playerID == first.player.playerID && session.token != first.token)
            // No later than the session it came from: opening sessions from sessions cannot outlive the sign-in.
            #expect(session.expiresAt == first.expiresAt)
            #expect(try await client.call(.get, "/v1/me", token: session.token, bundleID: "com.example.keyed", extraHeaders: keyed).status == .ok)
            #expect(try await client.call(.get, "/v1/me", token: first.token).status == .ok)
            expectError(
                try await client.call(.post, "/v1/sessions/for-game", json: json, environment: "live"), .unauthorized, "account.session_other_game",
                .notAuthenticated)
            #expect(try await client.call(.post, "/v1/sessions/for-game", json: #"{"token": "nope"}"#).status == .unauthorized)
            #expect(try await client.call(.delete, "/v1/sessions/current", token: first.token).status == .noContent)
            #expect(try await client.call(.post, "/v1/sessions/for-game", json: json).status == .unauthorized)
        }
    }

    @Test func playerIDsAreOpaqueAndStable() async throws {
        try await TestServer.run { client in
            let session = try await client.signUp(alias: "Bob", account: "bob-the-builder")
            #expect(session.player.playerID.hasPrefix("G:"))
            #expect(!session.player.playerID.lowercased().contains("bob"))
            let renamed = try await client.send(.patch, "/v1/me", UpdateProfileRequest(alias: "Robert"), token: session.token)
            let profile = try renamed.decode(LocalPlayerProfile.self)
            #expect(profile.alias == "Robert")
            #expect(profile.playerID == session.player.playerID)
            let signIn = try await client.send(.post, "/v1/sessions", SignInRequest(account: "BOB-the-builder", password: "password-1"))
            #expect(try signIn.decode(SessionResponse.self).player.playerID == session.player.playerID)
        }
    }

    @Test func wrongPasswordsAreRefusedAndThrottled() async throws {
        try await TestServer.run { client in
            _ = try await client.signUp(account: "carol")
            for _ in 0..<4 {
                expectError(
                    try await client.send(.post, "/v1/sessions", SignInRequest(account: "carol", password: "wrong-pass")),
                    .unauthorized, "account.invalid_credentials", .invalidCredentials)
            }
            expectError(
                try await client.send(.post, "/v1/sessions", SignInRequest(account: "nobody", password: "wrong-pass")),
                .unauthorized, "account.invalid_credentials", .invalidCredentials)
            // The fifth failure locks the account; then even the right password waits.
            _ = try await client.send(.post, "/v1/sessions", SignInRequest(account: "carol", password: "wrong-pass"))
            let locked = try await client.send(.post, "/v1/sessions", SignInRequest(account: "carol", password: "password-1"))
            expectError(locked, .tooManyRequests, "account.sign_in_throttled", .invalidCredentials)
            #expect((locked.error?.retryAfterSeconds ?? 0) > 0)
            #expect(locked.headers[.retryAfter] != nil)
        }
    }

    @Test func simultaneousWrongPasswordsAreCheckedNoMoreThanTheAllowance() async throws {
        try await TestServer.run { client in
            _ = try await client.signUp(account: "erin")
            let checks = client.services.accounts.credentials.passwordChecks
            let before = checks.count
            let statuses = try await withThrowingTaskGroup(of: HTTPResponse.Status.self) { group in
                for _ in 0..<200 {
                    group.addTask { try await client.send(.post, "/v1/sessions", SignInRequest(account: "erin", password: "wrong-pass")).status }
                }
                return try await group.reduce(into: [HTTPResponse.Status]()) { $0.append($1) }
            }
            let checked = checks.count - before
            #expect(checked <= Int(TestServer.fastPolicy.allowedFailures), "\(checked) of 200 simultaneous guesses were checked")
            #expect(statuses.filter { $0 == .unauthorized }.count == checked)
            #expect(statuses.filter { $0 == .tooManyRequests }.count == 200 - checked)
            // The right password, sent last, waits like the rest.
            let locked = try await client.send(.post, "/v1/sessions", SignInRequest(account: "erin", password: "password-1"))
            expectError(locked, .tooManyRequests, "account.sign_in_throttled", .invalidCredentials)
            #expect(checks.count - before == checked)
        }
    }

    @Test func oneAddressGuessingAcrossAccountsIsThrottledAndOnlyThatAddress() async throws {
        // The failure throttle alone: the address's sign-in rate limit (RateLimitTests) would refuse first.
        var limits = RateLimits()
        limits[.signIns] = .off
        try await TestServer.run(rateLimits: limits) { client in
            let names = (0..<30).map { "victim-\($0)" }
            for name in names { _ = try await client.signUp(account: name) }
            let attacker = try client.from("203.0.113.7")
            var statuses: [HTTPResponse.Status] = []
            for name in names {
                for _ in 0..<4 { statuses.append(try await attacker.send(.post, "/v1/sessions", SignInRequest(account: name, password: "wrong-pass")).status) }
            }
            let allowed = Int(TestServer.fastPolicy.allowedAddressFailures)
            #expect(statuses.prefix(allowed).allSatisfy { $0 == .unauthorized })
            #expect(statuses.dropFirst(allowed).allSatisfy { $0 == .tooManyRequests }, "30 accounts × 4 guesses from one address")
            let refused = try await attacker.send(.post, "/v1/sessions", SignInRequest(account: "victim-29", password: "password-1"))
            expectError(refused, .tooManyRequests, "account.address_throttled", .invalidCredentials)
            #expect((refused.error?.retryAfterSeconds ?? 0) > 0)
            #expect(refused.headers[.retryAfter] != nil)
            // The same IPv6 /64 is the same address; another network is not throttled.
            let sameNetwork = try client.from("2001:db8:0:1::5")
            for n in 0..<allowed { _ = try await sameNetwork.send(.post, "/v1/sessions", SignInRequest(account: "nobody-\(n)", password: "wrong-pass")) }
            expectError(
                try await client.from("2001:db8:0:1::6").send(.post, "/v1/sessions", SignInRequest(account: "victim-0", password: "password-1")),
                .tooManyRequests, "account.address_throttled", .invalidCredentials)
            // The players sign in from their own addresses: the attacker's locked address blocked only itself (the
            // accounts it guessed at kept fewer failures than lock one), and signing in costs an address nothing.
            let player = try client.from("198.51.100.9")
            for name in names + names.prefix(allowed) {
                #expect(try await player.send(.post, "/v1/sessions", SignInRequest(account: name, password: "password-1")).status == .ok)
            }
        }
    }

    @Test func throttledAddressesAreIPv4OrAnIPv6Slash64ButNotLoopback() throws {
        #expect(ClientAddress(try SocketAddress(ipAddress: "203.0.113.7", port: 1))?.key == "203.0.113.7")
        #expect(ClientAddress(try SocketAddress(ipAddress: "::ffff:203.0.113.7", port: 1))?.key == "203.0.113.7")
        #expect(ClientAddress(try SocketAddress(ipAddress: "2001:db8:0:1:aaaa:bbbb:cccc:dddd", port: 1))?.key == "2001:db8:0:1::/64")
        #expect(ClientAddress(nil) == nil)
        // A same-host reverse proxy's clients would all share its address: loopback is throttled by account only.
        #expect(ClientAddress(try SocketAddress(ipAddress: "127.0.0.1", port: 1)) == nil)
        #expect(ClientAddress(try SocketAddress(ipAddress: "::1", port: 1)) == nil)
        #expect(ClientAddress(try SocketAddress(ipAddress: "::ffff:127.0.0.1", port: 1)) == nil)
    }

    @Test func successfulSignInClearsEarlierFailures() async throws {
        try await TestServer.run { client in
            _ = try await client.signUp(account: "dave")
            for _ in 0..<4 { _ = try await client.send(.post, "/v1/sessions", SignInRequest(account: "dave", password: "wrong-pass")) }
            #expect(try await client.send(.post, "/v1/sessions", SignInRequest(account: "dave", password: "password-1")).status == .ok)
            for _ in 0..<4 { _ = try await client.send(.post, "/v1/sessions", SignInRequest(account: "dave", password: "wrong-pass")) }
            #expect(try await client.send(.post, "/v1/sessions", SignInRequest(account: "dave", password: "password-1")).status == .ok)
        }
    }

    /// bcrypt reads 72 bytes; a password may be 128 characters, and every one of them counts. Hashes stored before the
    /// pre-hash (bcrypt of the password itself) still sign in.
    @Test func everyCharacterOfALongPasswordCounts() async throws {
        try await TestServer.run { client in
            let long = String(repeating: "correct horse battery staple ", count: 3) + "and more than 72 bytes: ending A"
            #expect(long.utf8.count > 72 && long.count <= 128)
            _ = try await client.signUp(account: "lena", password: long)
            #expect(try await client.send(.post, "/v1/sessions", SignInRequest(account: "lena", password: long)).status == .ok)
            let sameStart = String(long.dropLast()) + "B"
            #expect(try await client.send(.post, "/v1/sessions", SignInRequest(account: "lena", password: sameStart)).status == .unauthorized)

            // An account from before: its stored hash is bcrypt of the password itself.
            _ = try await client.signUp(account: "olaf", password: "password-1")
            let legacy = Bcrypt.hash("password-1", cost: 4)
            try await client.services.database.write { storage in
                try await storage.sql.raw("UPDATE players SET password_hash = \(bind: legacy) WHERE account_name = 'olaf'").run()
            }
            #expect(try await client.send(.post, "/v1/sessions", SignInRequest(account: "olaf", password: "password-1")).status == .ok)
            #expect(try await client.send(.post, "/v1/sessions", SignInRequest(account: "olaf", password: "password-2")).status == .unauthorized)
        }
    }

    @Test func signedOutAndRevokedSessionsNoLongerWork() async throws {
        try await TestServer.run { client in
            let first = try await client.signUp(account: "erin")
            let second = try await client.send(.post, "/v1/sessions", SignInRequest(account: "erin", password: "password-1")).decode(SessionResponse.self)
            let third = try await client.send(.post, "/v1/sessions", SignInRequest(account: "erin", password: "password-1")).decode(SessionResponse.self)
            let list = try await client.call(.get, "/v1/sessions", token: first.token).decode(SessionList.self)
            #expect(list.sessions.count == 3)
            #expect(list.sessions.filter(\.current).map(\.sessionID) == [first.sessionID])

            #expect(try await client.call(.delete, "/v1/sessions/current", token: second.token).status == .noContent)
            expectError(try await client.call(.get, "/v1/me", token: second.token), .unauthorized, "account.session_revoked", .notAuthenticated)

            #expect(try await client.call(.delete, "/v1/sessions/others", token: first.token).status == .noContent)
            expectError(try await client.call(.get, "/v1/me", token: third.token), .unauthorized, "account.session_revoked", .notAuthenticated)
            #expect(try await client.call(.get, "/v1/me", token: first.token).status == .ok)
            expectError(
                try await client.call(.delete, "/v1/sessions/\(third.sessionID)", token: first.token), .notFound, "account.no_such_session", .invalidParameter)
        }
    }

    @Test func requestsWithoutAValidTokenAreNotAuthenticated() async throws {
        try await TestServer.run { client in
            for path in ["/v1/me", "/v1/friends", "/v1/friend-requests", "/v1/sessions", "/v1/realtime"] {
                expectError(try await client.call(.get, path), .unauthorized, "account.not_authenticated", .notAuthenticated)
                expectError(try await client.call(.get, path, token: "gct_forged"), .unauthorized, "account.not_authenticated", .notAuthenticated)
            }
        }
    }

    @Test func sessionsExpire() async throws {
        var policy = TestServer.fastPolicy
        policy.sessionLifetime = 3600
        try await TestServer.run(policy: policy, admin: true) { client in
            let session = try await client.signUp()
            #expect(try await client.call(.get, "/v1/me", token: session.token).status == .ok)
            // The server's clock, moved on: valid until the hour is over, expired from then on.
            try await LeaderboardTests.advanceClock(client, hours: 59.0 / 60)
            #expect(try await client.call(.get, "/v1/me", token: session.token).status == .ok)
            try await LeaderboardTests.advanceClock(client, hours: 1.0 / 60)
            expectError(try await client.call(.get, "/v1/me", token: session.token), .unauthorized, "account.session_expired", .notAuthenticated)
        }
    }

    @Test func statusMessagesHaveAMaximumLength() async throws {
        try await TestServer.run { client in
            let session = try await client.signUp()
            let tooLong = try await client.send(.patch, "/v1/me", UpdateProfileRequest(status: String(repeating: "s", count: 141)), token: session.token)
            expectError(tooLong, .badRequest, "account.status_too_long", .playerStatusExceedsMaximumLength)
            let invalid = try await client.send(.patch, "/v1/me", UpdateProfileRequest(status: "a\u{0}b"), token: session.token)
            expectError(invalid, .badRequest, "account.status_invalid", .playerStatusInvalid)
            let longest = String(repeating: "é", count: 140)
            let ok = try await client.send(.patch, "/v1/me", UpdateProfileRequest(status: longest), token: session.token)
            #expect(try ok.decode(LocalPlayerProfile.self).status == longest)
            #expect(try await client.call(.get, "/v1/me", token: session.token).decode(LocalPlayerProfile.self).status == longest)
        }
    }
}
