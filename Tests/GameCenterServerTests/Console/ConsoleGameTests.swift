import Foundation
import GameCenterProtocol
import GameCenterStorage
import HTTPTypes
import Testing
@testable import GameCenterServer

/// The console's games: manifests as loaded, boards and neighbourhoods, checking and reloading manifests.
@Suite struct ConsoleGameTests {
    @Test func gamesShowTheirManifestBoardsAndANeighbourhood() async throws {
        try await TestServer.run { server in
            var players: [SessionResponse] = []
            for value in 1...8 {
                let player = try await server.signUp(alias: "P\(value)")
                _ = try await server.send(
                    .post, "/v1/scores",
                    ScoreReportBatch(reportID: UUID().uuidString, scores: [ScoreReport(category: "open.points", value: Int64(value * 10), context: 0)]),
                    token: player.token)
                players.append(player)
            }
            var reader = try await ConsoleTesting.signIn(server, role: .readOnly)
            let game = try await reader.get("/console/games/com.example.open")
            #expect(game.status == .ok && game.html.contains("open.points") && game.html.contains("open.first") && game.html.contains("Completed by"))
            #expect(!game.html.contains("name=\"manifest\""), "read-only users do not see the manifest form")
            let board = try await reader.get("/console/games/com.example.open/leaderboards/open.points?player=\(PageLinks.segment(players[0].player.playerID))")
            #expect(board.status == .ok && board.html.contains("8 players ranked") && board.html.contains("Around"))
            #expect(board.html.contains(#"<tr class="me"><td class="rank">8</td>"#))
            #expect(try await reader.get("/console/games/com.example.open/leaderboards/open.points?environment=prod").status == .badRequest)

            var developer = try await ConsoleTesting.signIn(server, role: .developer)
            let editable = try await developer.get("/console/games/com.example.open")
            #expect(editable.html.contains("name=\"manifest\""))
            let broken = try await developer.post(
                "/console/games/com.example.open/manifest",
                [("csrf", editable.csrf ?? ""), ("manifest", "bundleID: com.example.open\nname: Open\nleaderboards: [{category: x}]\n"), ("apply", "1")])
            #expect(broken.status == .badRequest && broken.html.contains("open.yaml: leaderboards[0]"))
            let other = try await developer.post(
                "/console/games/com.example.open/manifest",
                [("csrf", editable.csrf ?? ""), ("manifest", "bundleID: com.example.other\nname: Other\n"), ("apply", "0")])
            #expect(other.status == .badRequest && other.html.contains("must stay"))
            let valid = try await developer.post(
                "/console/games/com.example.open/manifest", [("csrf", editable.csrf ?? ""), ("manifest", TestServer.openManifest), ("apply", "0")])
            #expect(valid.status == .ok && valid.html.contains("The manifest is valid"))
            // A manifest larger than other forms may be is taken (a long comment, URL-encoded to three times its size).
            let long = TestServer.openManifest + "\n# " + String(repeating: "é", count: 20_000) + "\n"
            let large = try await developer.post(
                "/console/games/com.example.open/manifest", [("csrf", editable.csrf ?? ""), ("manifest", long), ("apply", "0")])
            #expect(large.status == .ok && large.html.contains("The manifest is valid"))
            let reloaded = try await developer.post("/console/manifests/reload", [("csrf", editable.csrf ?? "")])
            #expect(reloaded.status == .seeOther)
            #expect(try await developer.get(try #require(reloaded.headers[.location])).html.contains("Every manifest was reloaded: 4 game(s)."))
            let entries = try await server.services.database.read { try await $0.auditEntries(bundleID: "", before: nil, limit: 10) }
            #expect(entries.contains { $0.action == "manifests.reloaded" && $0.actor.hasPrefix("console:developer") })
            try await Self.developersDownloadAGamesDataAndOnlyOwnersTheWholeServers(server)
        }
    }

    /// Developers download a game's data, and only owners the whole server's (run inside another test's server: each
    /// test server adds its background work beside the in-process suites).
    static func developersDownloadAGamesDataAndOnlyOwnersTheWholeServers(_ server: TestServer.Client) async throws {
        do {
            let player = try await server.signUp(alias: "Exported", account: "exported-1")
            _ = try await server.send(
                .post, "/v1/scores",
                ScoreReportBatch(reportID: UUID().uuidString, scores: [ScoreReport(category: "open.points", value: 42, context: 0)]),
                token: player.token)
            var support = try await ConsoleTesting.signIn(server, role: .support, name: "helpdesk")
            let supportGame = try await support.get("/console/games/com.example.open")
            #expect(!supportGame.html.contains("Download this game's data") && supportGame.html.contains("needs the role developer"))
            #expect(try await support.post("/console/games/com.example.open/export", [("csrf", supportGame.csrf ?? "")]).status == .forbidden)

            var developer = try await ConsoleTesting.signIn(server, role: .developer, name: "dev")
            let game = try await developer.get("/console/games/com.example.open")
            #expect(game.html.contains("Download this game's data"))
            let archive = try await developer.post("/console/games/com.example.open/export", [("csrf", game.csrf ?? "")])
            #expect(archive.status == .ok && archive.headers[.contentType] == "application/x-tar")
            #expect(archive.headers[.contentDisposition]?.contains("filename=\"com.example.open-") == true)
            #expect(
                archive.html.contains("manifest.json") && archive.html.contains("exported-1")
                    && archive.html.range(of: #""scope"\s*:\s*"game""#, options: .regularExpression) != nil)
            let games = try await developer.get("/console/games")
            #expect(!games.html.contains("Download the whole server's data") && games.html.contains("needs the role owner"))
            #expect(try await developer.post("/console/export", [("csrf", games.csrf ?? "")]).status == .forbidden)

            var owner = try await ConsoleTesting.signIn(server, role: .owner, name: "boss")
            let ownerGames = try await owner.get("/console/games")
            #expect(ownerGames.html.contains("Download the whole server's data"))
            let whole = try await owner.post("/console/export", [("csrf", ownerGames.csrf ?? "")])
            #expect(whole.status == .ok && whole.headers[.contentDisposition]?.contains("filename=\"game-center-server-") == true)
            #expect(whole.html.contains("exported-1") && whole.html.range(of: #""scope"\s*:\s*"server""#, options: .regularExpression) != nil)
            let entries = try await server.services.database.read { try await $0.auditEntries(bundleID: nil, before: nil, limit: 100) }
            #expect(entries.contains { $0.action == "game.exported" && $0.actor == "console:dev" && $0.bundleID == "com.example.open" })
            #expect(entries.contains { $0.action == "server.exported" && $0.actor == "console:boss" })
        }
    }
}
