import Foundation
import GameCenterProtocol
import GameCenterStorage
import HTTPTypes
import Testing
@testable import GameCenterServer

/// The console's owner pages: server keys and webhook endpoints.
@Suite struct ConsoleStudioTests {
    @Test func ownersManageKeysAndWebhooks() async throws {
        try await TestServer.run { server in
            var owner = try await ConsoleTesting.signIn(server, role: .owner, name: "boss")
            let keys = try await owner.get("/console/keys")
            let created = try await owner.post(
                "/console/keys", [("csrf", keys.csrf ?? ""), ("game", "com.example.open"), ("environment", "sandbox"), ("permission", "moderation")])
            #expect(created.status == .created && created.html.contains("BEGIN PRIVATE KEY"))
            let keyID = try #require(try await server.services.serverKeys.list(bundleID: "com.example.open").keys.first?.keyID)
            let revoked = try await owner.post("/console/keys/revoke", [("csrf", keys.csrf ?? ""), ("key", keyID)])
            #expect(revoked.status == .seeOther)
            #expect(try await owner.get("/console/keys").html.contains("revoked"))
            let hook = try await owner.post(
                "/console/webhooks",
                [
                    ("csrf", keys.csrf ?? ""), ("game", "com.example.open"), ("environment", "sandbox"), ("url", "https://example.com/h"),
                    ("event", "score.accepted"),
                ])
            #expect(hook.status == .created && hook.html.contains("Signing secret"))
            let bad = try await owner.post("/console/webhooks", [("csrf", keys.csrf ?? ""), ("game", "com.example.open"), ("environment", "prod")])
            #expect(bad.status == .badRequest)
            let entries = try await server.services.database.read { try await $0.auditEntries(bundleID: "com.example.open", before: nil, limit: 10) }
            #expect(Set(entries.filter { $0.actor == "console:boss" }.map(\.action)) == ["key.created", "key.revoked", "webhook.added"])
        }
    }

    @Test func ownersAddAndRemoveConsoleUsersButNotThemselves() async throws {
        try await TestServer.run { server in
            var owner = try await ConsoleTesting.signIn(server, role: .owner, name: "root")
            let users = try await owner.get("/console/users")
            #expect(users.status == .ok && users.html.contains("root") && users.html.contains("(you)"))
            let added = try await owner.post(
                "/console/users", [("csrf", users.csrf ?? ""), ("name", "helper"), ("role", "support"), ("password", ConsoleTesting.password)])
            #expect(added.status == .seeOther)
            var helper = PageClient(server)
            let signedIn = try await helper.submit("/console/sign-in", on: "/console/sign-in", [("name", "helper"), ("password", ConsoleTesting.password)])
            #expect(signedIn.status == .seeOther)
            let badRole = try await owner.post(
                "/console/users", [("csrf", users.csrf ?? ""), ("name", "x"), ("role", "admin"), ("password", ConsoleTesting.password)])
            #expect(badRole.status == .badRequest && badRole.html.contains("owner|developer|support|read-only"))
            let myself = try await owner.post("/console/users/remove", [("csrf", users.csrf ?? ""), ("name", "root")])
            #expect(myself.status == .badRequest && myself.html.contains("you cannot remove yourself"))
            #expect(try await owner.post("/console/users/remove", [("csrf", users.csrf ?? ""), ("name", "helper")]).status == .seeOther)
            #expect(try await helper.get("/console/players").headers[.location] == "/console/sign-in")
            let entries = try await server.services.database.read { try await $0.auditEntries(bundleID: "", before: nil, limit: 20) }
            #expect(entries.contains { $0.action == "console.user_added" && $0.subject == "helper" && $0.actor == "console:root" })
            #expect(entries.contains { $0.action == "console.user_removed" && $0.subject == "helper" && $0.actor == "console:root" })
        }
    }
}
