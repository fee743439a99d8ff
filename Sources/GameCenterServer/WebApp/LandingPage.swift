import Foundation
import Hummingbird

/// `GET /`: what this server is, its games, and where the API is described.
struct LandingPage {
    let registry: GameRegistry

    func add(to router: Router<AppRequestContext>) {
        router.get("/") { _, _ -> HTML in HTML(render()) }
    }

    func render() -> String {
        let rows = registry.all.map { game in
            """
                  <tr><td>\(escape(game.name))</td><td><code>\(escape(game.bundleID))</code></td>\
            <td>\(game.leaderboards.count + game.aggregates.count)</td><td>\(game.achievements.count)</td></tr>
            """
        }.joined(separator: "\n")
        let games = rows.isEmpty
            ? "<p>No games are configured yet. Start the server with <code>--games PATH</code> (a manifest or a folder of them).</p>"
            : """
              <table>
                <thead><tr><th>Game</th><th>Bundle id</th><th>Leaderboards</th><th>Achievements</th></tr></thead>
                <tbody>
              \(rows)
                </tbody>
              </table>
              """
        return """
            <!doctype html>
            <html lang="en">
            <head>
              <meta charset="utf-8">
              <meta name="viewport" content="width=device-width, initial-scale=1">
              <title>OpenGameKit Game Center</title>
              <style>
                body { font-family: system-ui, sans-serif; max-width: 48rem; margin: 2rem auto; padding: 0 1rem; color: #1d1d1f; }
                h1 { font-size: 1.8rem; } table { border-collapse: collapse; width: 100%; }
                th, td { text-align: left; padding: .4rem .6rem; border-bottom: 1px solid #ddd; } code { font-size: .95em; }
              </style>
            </head>
            <body>
              <h1>OpenGameKit Game Center</h1>
              <p>This is a self-hosted Game Center service: player accounts, friends, leaderboards, achievements and
              multiplayer matches for games built with the OpenGameKit Swift SDK.</p>
              <h2>Games on this server</h2>
              \(games)
              <h2>For developers</h2>
              <ul>
                <li><a href="/openapi.yaml">HTTP API (OpenAPI 3.1)</a></li>
                <li>Realtime channel: WebSocket at <code>/v1/realtime</code></li>
              </ul>
            </body>
            </html>
            """
    }

    private func escape(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
    }
}

/// An HTML page response.
struct HTML: ResponseGenerator {
    let text: String
    init(_ text: String) { self.text = text }

    func response(from request: Request, context: some RequestContext) throws -> Response {
        Response(status: .ok, headers: [.contentType: "text/html; charset=utf-8"], body: .init(byteBuffer: ByteBuffer(string: text)))
    }
}
