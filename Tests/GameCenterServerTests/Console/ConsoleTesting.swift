import Foundation
import GameCenterProtocol
import GameCenterStorage
import HTTPTypes
import Testing
@testable import GameCenterServer

/// What the console's tests share: a console user signed in in a browser, and a page's form token.
enum ConsoleTesting {
    static let password = "console-password-1"

    /// Adds a console user with `role` and signs them in; returns the browser holding the console cookie.
    static func signIn(_ server: TestServer.Client, role: ConsoleRole, name: String? = nil) async throws -> PageClient {
        let name = name ?? "\(role.rawValue)-\(UUID().uuidString.prefix(6).lowercased())"
        try await server.services.consoleUsers.add(name: name, role: role, password: password, actor: "cli")
        var browser = PageClient(server)
        let answer = try await browser.submit("/console/sign-in", on: "/console/sign-in", [("name", name), ("password", password)])
        #expect(answer.status == .seeOther && answer.headers[.location] == "/console/players", "\(answer.html)")
        return browser
    }

    /// A player's page's CSRF token, opened by `browser`.
    static func token(_ browser: inout PageClient, player: String) async throws -> String {
        try #require(try await browser.get(ConsolePlayerPages.link(player)).csrf)
    }
}
