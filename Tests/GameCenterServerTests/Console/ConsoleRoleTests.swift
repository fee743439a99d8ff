import Foundation
import GameCenterProtocol
import GameCenterStorage
import HTTPTypes
import Testing
@testable import GameCenterServer

/// What each console role may do and is refused.
@Suite struct ConsoleRoleTests {
    /// Each role is refused what the roles above it may do, with a page naming the role needed; what it may do works.
    @Test(arguments: [
        (ConsoleRole.readOnly, "sessions/end", ConsoleRole.support),
        (.readOnly, "ban", .support),
        (.readOnly, "hide", .support),
        (.support, "scores/erase", .developer),
        (.support, "achievements/reset", .developer),
        (.readOnly, "data", .support),
        (.support, "delete", .developer),
        (.developer, "/console/keys", .owner),
        (.developer, "/console/webhooks", .owner),
        (.developer, "/console/users", .owner),
        (.support, "/console/manifests/reload", .developer),
    ])
    func rolesAreRefusedWhatTheyMayNotDo(role: ConsoleRole, action: String, needed: ConsoleRole) async throws {
        try await TestServer.run { server in
            let player = try await server.signUp(alias: "Target")
            let playerID = player.player.playerID
            let accountName = try #require(try await server.services.database.read { try await $0.player(id: playerID) }).accountName
            var browser = try await ConsoleTesting.signIn(server, role: role)
            let path = action.hasPrefix("/") ? action : ConsolePlayerPages.link(playerID) + "/" + action
            let fields = [
                ("csrf", try await ConsoleTesting.token(&browser, player: playerID)), ("game", "com.example.open"), ("reason", "cheating"),
                ("environment", "sandbox"), ("permission", "moderation"), ("name", "newcomer"), ("role", "support"), ("password", ConsoleTesting.password),
                ("url", "https://example.com/hook"), ("event", "score.accepted"), ("confirm", accountName),
            ]
            let refused = try await browser.post(path, fields)
            #expect(refused.status == .forbidden)
            #expect(refused.html.contains("you need the role \(needed.rawValue) or higher"), "\(refused.html)")
            #expect(refused.html.contains("Not allowed for your role"))
            // Nothing happened: no audit entry from this user.
            let entries = try await server.services.database.read { try await $0.auditEntries(bundleID: nil, before: nil, limit: 100) }
            #expect(!entries.contains { $0.actor.hasPrefix("console:\(role.rawValue)") && $0.action != "console.signed_in" })
            #expect(try await server.services.database.read { try await $0.player(id: playerID) } != nil)
            // The role needed may.
            var allowed = try await ConsoleTesting.signIn(server, role: needed)
            let answer = try await allowed.post(path, [("csrf", try await ConsoleTesting.token(&allowed, player: playerID))] + fields.dropFirst())
            #expect([.seeOther, .created, .ok].contains(answer.status), "\(answer.status) \(answer.html)")
        }
    }
}
