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
            let oldID = try #require(try await server.services.serverKeys.list(bundleID: "com.example.open").keys.first?.keyID)
            // Rotating makes a successor shown once; the old key works for the grace chosen.
            let badGrace = try await owner.post("/console/keys/rotate", [("csrf", keys.csrf ?? ""), ("key", oldID), ("graceHours", "5")])
            #expect(badGrace.status == .badRequest && badGrace.html.contains("0, 1, 24, 168, 720"))
            #expect(try await owner.get("/console/keys").html.contains("<option value=\"24\" selected>1 day</option>"))
            let rotated = try await owner.post("/console/keys/rotate", [("csrf", keys.csrf ?? ""), ("key", oldID), ("graceHours", "168")])
            #expect(rotated.status == .created && rotated.html.contains("BEGIN PRIVATE KEY") && rotated.html.contains("to replace \(oldID)"))
            #expect(rotated.html.contains("key \(oldID) keeps working until"))
            let listed = try await server.services.serverKeys.list(bundleID: "com.example.open").keys
            let old = try #require(listed.first { $0.keyID == oldID })
            let keyID = try #require(old.replacedBy)
            #expect(old.isActive && old.expiresAt.map { Int($0.timeIntervalSince(old.createdAt) / 3_600) } == 168)
            #expect(listed.first { $0.keyID == keyID }?.permissions == [.moderation])
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
            #expect(Set(entries.filter { $0.actor == "console:boss" }.map(\.action)) == ["key.created", "key.rotated", "key.revoked", "webhook.added"])
            try await Self.anEndpointsPageListsItsDeliveriesAndOwnersReplayADeadOne(server)
        }
    }

    /// An endpoint's page lists its deliveries and owners replay a dead one (run inside another test's server).
    static func anEndpointsPageListsItsDeliveriesAndOwnersReplayADeadOne(_ server: TestServer.Client) async throws {
        do {
            var owner = try await ConsoleTesting.signIn(server, role: .owner, name: "hooks-owner")
            let hooks = try await owner.get("/console/webhooks")
            _ = try await owner.post(
                "/console/webhooks",
                [
                    ("csrf", hooks.csrf ?? ""), ("game", "com.example.open"), ("environment", "sandbox"), ("url", "http://127.0.0.1:9/h"),
                    ("event", "score.accepted"),
                ])
            let endpointID = try #require(
                try await server.services.webhooks.list(bundleID: "com.example.open").endpoints.first { $0.url == "http://127.0.0.1:9/h" }?.endpointID)
            // Two deliveries: one the endpoint never took, given up on; one still pending.
            let dead = try await server.services.database.write { storage -> Int64 in
                try await storage.insertWebhookDeliveries(
                    ["ev-dead", "ev-pending"].map {
                        NewWebhookDelivery(endpointID: endpointID, eventID: $0, eventType: "score.accepted", orderKey: $0, payload: "{}")
                    }, now: 1_000, expiresAt: 9_000_000_000_000)
                let deliveries = try await storage.webhookDeliveries(endpointID: endpointID, state: nil, limit: 10)
                let dead = try #require(deliveries.first { $0.eventID == "ev-dead" }).deliveryID
                try await storage.markWebhookFailed(dead, attempts: 12, nextAttemptAt: 2_000, error: "connection refused", dead: true)
                return dead
            }
            let base = "/console/webhooks/\(endpointID)"
            #expect(try await owner.get("/console/webhooks").html.contains(#"href="\#(base)""#), "the endpoint links to its deliveries")
            let page = try await owner.get(base)
            #expect(page.status == .ok && page.html.contains("http://127.0.0.1:9/h") && page.html.contains("connection refused"))
            #expect(page.html.contains("Replay delivery \(dead)") && page.html.components(separatedBy: "aria-label=\"Replay delivery").count == 2)
            let deadOnly = try await owner.get("\(base)?state=dead")
            #expect(deadOnly.html.contains("connection refused") && deadOnly.html.components(separatedBy: "<tr><td class=\"num\">").count == 2)
            #expect(try await owner.get("\(base)?state=lost").status == .badRequest)
            #expect(try await owner.get("/console/webhooks/wh_nope").status == .notFound)

            var reader = try await ConsoleTesting.signIn(server, role: .readOnly, name: "hooks-viewer")
            let readOnly = try await reader.get(base)
            #expect(readOnly.status == .ok && !readOnly.html.contains("Replay delivery"))
            #expect(try await reader.post("\(base)/replay", [("csrf", readOnly.csrf ?? ""), ("delivery", "\(dead)")]).status == .forbidden)

            let replayed = try await owner.post("\(base)/replay", [("csrf", page.csrf ?? ""), ("delivery", "\(dead)")])
            #expect(replayed.status == .seeOther)
            #expect(try await owner.get(try #require(replayed.headers[.location])).html.contains("Delivery \(dead) is back in line"))
            let state = try await server.services.database.read { try await $0.webhookDeliveries(endpointID: endpointID, state: nil, limit: 10) }
            #expect(state.first { $0.deliveryID == dead }?.state != "dead")
            let again = try await owner.post("\(base)/replay", [("csrf", page.csrf ?? ""), ("delivery", "\(dead)")])
            #expect(again.status == .notFound, "only a dead delivery is replayed")
            let entries = try await server.services.database.read { try await $0.auditEntries(bundleID: "com.example.open", before: nil, limit: 10) }
            #expect(entries.contains { $0.action == "webhook.replayed" && $0.actor == "console:hooks-owner" && $0.detail.contains("\(dead)") })
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
