import Foundation
import HTTPTypes
import Testing
@testable import GameCenterServer

/// What a browser gets for addresses the app has no page at, and the words the game cards count with.
@Suite struct WebAppAddressTests {
    @Test func aBrowserAskingForAnUnknownAddressGetsAPageWithAWayBack() async throws {
        try await TestServer.run { server in
            var browser = PageClient(server)
            browser.headers[.accept] = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"
            // A typo, and a form's address reloaded after the form answered.
            for path in ["/freinds", "/friends/request", "/games/com.example.tapper/nope?x=1"] {
                let page = try await browser.get(path)
                #expect(page.status == .notFound, "\(path)")
                #expect(page.headers[.contentType] == "text/html; charset=utf-8", "\(path)")
                #expect(page.html.contains("there is no page at \(path.split(separator: "?")[0])"), "\(path): \(page.html)")
                #expect(page.html.contains(#"<a href="/">Back to Game Center</a>"#), "\(path)")
                #expect(page.html.contains("<title>Page not found"), "\(path)")
            }
            // The API's paths, and clients that do not ask for HTML, keep the JSON error.
            for (path, accept) in [("/v1/nope", "text/html"), ("/admin/v1/nope", "text/html"), ("/freinds", "application/json"), ("/freinds", nil)] {
                var client = PageClient(server)
                if let accept { client.headers[.accept] = accept }
                let answer = try await client.get(path)
                #expect(answer.status == .notFound, "\(path)")
                #expect(answer.headers[.contentType]?.hasPrefix("application/json") == true, "\(path) with \(accept ?? "no Accept")")
                #expect(answer.html.contains("request.unknown_route"), "\(path): \(answer.html)")
            }
            #expect(
                !NotFoundPageMiddleware.isPageRequest(
                    HTTPRequest(method: .post, scheme: "http", authority: "x", path: "/freinds", headerFields: [.accept: "text/html"])))
        }
    }

    @Test func gameCardsCountInTheSingularForOne() async throws {
        #expect(GameCard.counted(0, "leaderboard") == "0 leaderboards")
        #expect(GameCard.counted(1, "leaderboard") == "1 leaderboard")
        #expect(GameCard.counted(2, "achievement") == "2 achievements")
        try await TestServer.run { server in
            var browser = PageClient(server)
            let welcome = try await browser.get("/")
            let counts = welcome.html.matches(of: /(\d+) (leaderboard|achievement)(s?)\b/)
            #expect(!counts.isEmpty, "\(welcome.html)")
            for count in counts {
                #expect((count.output.1 == "1") == count.output.3.isEmpty, "\(count.output.0)")
            }
        }
    }
}
