import Foundation
import GameCenterProtocol
import Hummingbird
import Mustache

/// `GET /`: signed out, what this server is, sign in or up, and its games; signed in, the player's own page —
/// alias, status, total achievement points and the games they played recently.
struct HomePage: Sendable {
    let registry: GameRegistry
    let players: PlayerService
    let achievements: AchievementService
    let responder: PageResponder
    let renderer: PageRenderer

    /// Adds the route.
    func add(to router: Router<AppRequestContext>) {
        responder.get("/", on: router, .anyone) { page in
            guard let session = page.session else {
                let games = games()
                return renderer.render(
                    "welcome",
                    Welcome(
                        chrome: PageChrome("OpenGameKit Game Center", for: page), games: games,
                        hasGames: !games.isEmpty))
            }
            return try await me(session, page)
        }
    }

    private func games() -> [GameCard] {
        registry.all.map { game in
            GameCard(
                bundleID: game.bundleID, name: game.name, leaderboards: game.leaderboards.count + game.aggregates.count,
                achievements: game.achievements.count)
        }
    }

    private func me(_ session: PageSession, _ page: PageRequest) async throws -> Response {
        let lookup = try await players.loadPlayers([session.session.playerID], caller: session.session, device: session.device)
        guard let profile = lookup.players.first else { throw APIError.notAuthenticated }
        let points = try await achievements.points(playerID: session.session.playerID, in: registry.all.filter { !$0.achievements.isEmpty })
        let recent = (profile.recentGames ?? []).filter { registry.game(bundleID: $0.bundleID) != nil }.map {
            MePage.Played(bundleID: $0.bundleID, name: $0.name, lastPlayed: PageDates.day($0.lastPlayedAt))
        }
        let content = MePage(
            chrome: PageChrome(profile.alias, section: .home, for: page), status: profile.status,
            points: points, recentGames: recent, games: games())
        return renderer.render("me", content)
    }
}

/// A game of the server as the lists show it.
struct GameCard: MustacheParent {
    /// "1 leaderboard", "2 leaderboards": `count` and `noun`, plural unless one.
    static func counted(_ count: Int, _ noun: String) -> String { "\(count) \(noun)\(count == 1 ? "" : "s")" }

    let bundleID: String
    let name: String
    let leaderboards: Int
    let achievements: Int

    func child(named name: String) -> Any? {
        switch name {
        case "bundleID": PageText(bundleID)
        case "name": PageText(self.name)
        case "leaderboards": PageText(String(leaderboards))
        case "achievements": PageText(String(achievements))
        case "leaderboardCount": PageText(Self.counted(leaderboards, "leaderboard"))
        case "achievementCount": PageText(Self.counted(achievements, "achievement"))
        default: nil
        }
    }
}

/// The signed-out home page's content.
struct Welcome {
    let chrome: PageChrome
    let games: [GameCard]
    let hasGames: Bool
}

/// The signed-in home page's content. It answers the template's names itself (``MustacheParent``), as the leaderboard
/// page does: it is the page a player opens first.
struct MePage: MustacheParent {
    /// A game the player played recently.
    struct Played: MustacheParent {
        let bundleID: String
        let name: String
        let lastPlayed: String

        func child(named name: String) -> Any? {
            switch name {
            case "bundleID": PageText(bundleID)
            case "name": PageText(self.name)
            case "lastPlayed": PageText(lastPlayed)
            default: nil
            }
        }
    }

    let chrome: PageChrome
    let status: String?
    /// Points of the completed achievements across every game of the server.
    let points: Int
    let recentGames: [Played]
    let games: [GameCard]

    func child(named name: String) -> Any? {
        switch name {
        case "chrome": chrome
        case "status": status
        case "points": PageText(String(points))
        case "recentGames": recentGames
        case "games": games
        default: nil
        }
    }
}
