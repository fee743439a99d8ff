import Foundation
import GameCenterProtocol
import GameCenterStorage
import Testing
@testable import GameCenterServer

/// Players the studio banned: every session ends at once, and signing in is refused with `account.banned` until the
/// ban is lifted.
@Suite struct AccountBanTests {
    @Test func aBanEndsEverySessionAndRefusesSignInUntilLifted() async throws {
        try await TestServer.run { server in
            let account = "banned-\(UUID().uuidString.prefix(6).lowercased())"
            let first = try await server.signUp(account: account)
            let second = try await server.send(.post, "/v1/sessions", SignInRequest(account: account, password: "password-1")).decode(SessionResponse.self)
            let bans = server.services.bans
            let (changed, ended) = try await bans.ban(playerID: first.player.playerID, reason: "  cheating  ", actor: "console:test")
            #expect(changed && ended == 2)
            #expect(try await bans.ban(of: first.player.playerID)?.reason == "cheating")
            for token in [first.token, second.token] {
                expectError(try await server.call(.get, "/v1/me", token: token), .unauthorized, "account.session_revoked", .notAuthenticated)
            }
            let refused = try await server.send(.post, "/v1/sessions", SignInRequest(account: account, password: "password-1"))
            expectError(refused, .forbidden, "account.banned", .notAuthenticated)
            // Only who knows the password learns of the ban.
            expectError(
                try await server.send(.post, "/v1/sessions", SignInRequest(account: account, password: "wrong-password")), .unauthorized,
                "account.invalid_credentials", .invalidCredentials)
            #expect(try await bans.ban(playerID: first.player.playerID, reason: "again", actor: "console:test").changed == false)
            let entries = try await server.services.database.read { try await $0.auditEntries(bundleID: "", before: nil, limit: 10) }
            #expect(entries.map(\.action) == ["player.banned"] && entries.first?.actor == "console:test")

            #expect(try await bans.unban(playerID: first.player.playerID, actor: "console:test"))
            #expect(try await server.send(.post, "/v1/sessions", SignInRequest(account: account, password: "password-1")).status == .ok)
            #expect(try await bans.unban(playerID: first.player.playerID, actor: "console:test") == false)
            await #expect(throws: APIError.self) { try await bans.ban(playerID: "G:nobody", reason: "x", actor: "console:test") }
        }
    }
}
