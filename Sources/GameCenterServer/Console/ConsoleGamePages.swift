import Foundation
import GameCenterProtocol
import Hummingbird

/// The console's games: each game's manifest as loaded (boards, achievements with their completion rates,
/// matchmaking queues), its manifest's text to edit, check and apply without a restart (``ManifestEditor``), and
/// each board's top entries and any player's neighbourhood (``LeaderboardService/adminPage``).
struct ConsoleGamePages: Sendable {
    /// Entries a board page shows from the top.
    static let topEntries = 25
    /// Ranks shown either side of a player's.
    static let neighbourhood = 5
    /// The largest manifest form taken (a manifest's text, URL-encoded).
    static let manifestFormBytes = 512 * 1024

    let registry: GameRegistry
    let leaderboards: LeaderboardService
    let achievements: AchievementService
    let editor: ManifestEditor
    let archives: ArchiveDownload
    let audit: AuditLog
    let responder: ConsoleResponder
    let renderer: PageRenderer

    /// Adds the routes.
    func add(to router: Router<AppRequestContext>) {
        responder.get("console/games", on: router) { page in
            let games = registry.all.map {
                GamesPage.Row(
                    link: "/console/games/\(PageLinks.segment($0.bundleID))", name: $0.name, bundleID: $0.bundleID,
                    boards: $0.leaderboards.count + $0.aggregates.count, achievements: $0.achievements.count, queues: $0.matchmaking.queues.count)
            }
            return renderer.render(
                "console-games",
                GamesPage(
                    chrome: ConsoleChrome("Games", section: .games, for: page), games: games, mayReload: page.may(.manifests),
                    mayExport: page.may(.exportServer), reloaded: page.query("reloaded").flatMap { Int($0) }))
        }
        // Archives as `gamecenter export` writes them (docs/EXPORT.md), built in a temporary folder and streamed.
        responder.post("console/export", on: router, .exportServer) { page in
            let session = try page.requireSession()
            try await audit.record(bundleID: "", actor: session.actor, action: "server.exported", subject: "")
            return try await archives.response(scope: .server, name: "game-center-server")
        }
        responder.post("console/games/{bundleID}/export", on: router, .exportGame) { page in
            let session = try page.requireSession()
            let game = try game(page)
            try await audit.record(bundleID: game.bundleID, actor: session.actor, action: "game.exported", subject: game.bundleID)
            return try await archives.response(scope: .game(bundleID: game.bundleID), name: game.bundleID)
        }
        responder.get("console/games/{bundleID}", on: router) { page in
            let game = try game(page)
            return try await gamePage(page, game: game, draft: nil, outcome: nil)
        }
        responder.post("console/manifests/reload", on: router, .manifests) { page in
            let session = try page.requireSession()
            do {
                let games = try editor.reload()
                try await audit.record(bundleID: "", actor: session.actor, action: "manifests.reloaded", subject: "", detail: ["games": "\(games.count)"])
                return PageRequest.redirect(to: "/console/games?reloaded=\(games.count)")
            } catch let error as ManifestError {
                throw APIError.invalidParameter("the manifests were not reloaded, the games stay as they were: \(Self.shown(error))")
            }
        }
        responder.post("console/games/{bundleID}/manifest", on: router, .manifests, formBytes: Self.manifestFormBytes) { page in
            let session = try page.requireSession()
            let game = try game(page)
            let text = page.form["manifest"] ?? ""
            do {
                if page.form["apply"] == "1" {
                    let games = try editor.replace(text, for: game)
                    try await audit.record(
                        bundleID: game.bundleID, actor: session.actor, action: "manifest.replaced", subject: game.bundleID,
                        detail: ["games": "\(games.count)", "bytes": "\(text.utf8.count)"])
                    return PageRequest.redirect(to: "/console/games/\(PageLinks.segment(game.bundleID))?applied=1")
                }
                let checked = try editor.check(text, for: game)
                return try await gamePage(
                    page, game: game, draft: text,
                    outcome: .init(
                        ok: true,
                        message:
                            "The manifest is valid: \(checked.leaderboards.count + checked.aggregates.count) boards, \(checked.achievements.count) achievements. Apply it to reload without a restart."
                    ))
            } catch let error as ManifestError {
                return try await gamePage(page, game: game, draft: text, outcome: .init(ok: false, message: Self.shown(error)), status: .badRequest)
            }
        }
        responder.get("console/games/{bundleID}/leaderboards/{category}", on: router) { page in try await boardPage(page) }
    }

    private func game(_ page: ConsoleRequest) throws -> Game {
        let bundleID = try page.context.parameters.require("bundleID")
        guard let game = registry.game(bundleID: bundleID) else { throw APIError.unknownGame(bundleID) }
        return game
    }

    private func gamePage(
        _ page: ConsoleRequest, game: Game, draft: String?, outcome: GamePage.Outcome?, status: HTTPResponse.Status = .ok
    ) async throws -> Response {
        let environment = try Self.environment(page)
        let rarity = try await achievements.rarity(device: DeviceIdentity(game: game, environment: environment, locale: game.defaultLocale))
        let text = page.may(.manifests) ? (try? draft ?? editor.text(of: game)) : nil
        let base = "/console/games/\(PageLinks.segment(game.bundleID))"
        let content = GamePage(
            chrome: ConsoleChrome(game.name, section: .games, for: page), bundleID: game.bundleID, selfLink: base,
            environment: environment.rawValue, isLive: environment == .live, applied: page.query("applied") != nil,
            boards: (game.leaderboards.map { board in
                GamePage.Board(
                    link: "\(base)/leaderboards/\(PageLinks.segment(board.category))?environment=\(environment.rawValue)", category: board.category,
                    title: Localization.text(board.title, locale: game.defaultLocale, fallback: game.defaultLocale),
                    detail: "\(board.format.rawValue), \(board.order == .ascending ? "lower is better" : "higher is better")"
                        + (board.recurrence != nil ? ", recurring" : "") + (board.isHidden ? ", hidden" : ""))
            }
                + game.aggregates.map { aggregate in
                    GamePage.Board(
                        link: "\(base)/leaderboards/\(PageLinks.segment(aggregate.category))?environment=\(environment.rawValue)",
                        category: aggregate.category, title: Localization.text(aggregate.title, locale: game.defaultLocale, fallback: game.defaultLocale),
                        detail: "aggregate of \(aggregate.members.joined(separator: ", "))")
                }),
            achievements: game.achievements.map { achievement in
                GamePage.Achievement(
                    identifier: achievement.identifier, title: Localization.text(achievement.title, locale: game.defaultLocale, fallback: game.defaultLocale),
                    points: achievement.points, hidden: achievement.hidden,
                    completion: rarity.map { "\(Int(($0[achievement.identifier] ?? 0) * 100)) %" } ?? "nobody played yet")
            },
            queues: game.matchmaking.queues.values.sorted { $0.referenceName < $1.referenceName }.map {
                GamePage.Queue(
                    link: "\(base)/queues/\(PageLinks.segment($0.referenceName))?environment=\(environment.rawValue)", title: $0.referenceName,
                    detail: "rule set \($0.ruleSet)" + ($0.experimentRuleSet.map { ", experiment \($0)" } ?? ""))
            },
            matchmaking:
                "fills in \(Double(game.matchmaking.fillMilliseconds) / 1000) s, at most \(game.matchmaking.maxRelayedPlayers) relayed players"
                + (game.matchmaking.relayOnly ? ", relay only" : ""),
            manifest: text, outcome: outcome, action: "\(base)/manifest", mayExport: page.may(.exportGame), exportAction: "\(base)/export")
        return renderer.render("console-game", content, status: status)
    }

    private func boardPage(_ page: ConsoleRequest) async throws -> Response {
        let game = try game(page)
        let category = try page.context.parameters.require("category")
        let environment = try Self.environment(page)
        let top = try await leaderboards.adminPage(
            game: game, environment: environment, category: category, timeScope: .allTime, rangeStart: 1, rangeLength: Self.topEntries,
            locale: game.defaultLocale)
        let playerID = page.query("player")
        var around: [BoardPage.Entry]?
        var rank: Int?
        if let playerID {
            guard playerID.count <= 100 else { throw APIError.invalidPageParameter("player", allowed: "a player id") }
            rank = try await leaderboards.adminRank(game: game, environment: environment, category: category, playerID: playerID)
            if let rank {
                let start = max(1, rank - Self.neighbourhood)
                around = try await leaderboards.adminPage(
                    game: game, environment: environment, category: category, timeScope: .allTime, rangeStart: start,
                    rangeLength: 2 * Self.neighbourhood + 1, locale: game.defaultLocale
                ).entries.map { BoardPage.Entry($0, marked: $0.score.playerID) }
            }
        }
        let content = BoardPage(
            chrome: ConsoleChrome("\(game.name): \(category)", section: .games, for: page), gameLink: "/console/games/\(PageLinks.segment(game.bundleID))",
            gameName: game.name, category: category, environment: environment.rawValue, total: top.maxRange,
            selfLink: "/console/games/\(PageLinks.segment(game.bundleID))/leaderboards/\(PageLinks.segment(category))",
            top: top.entries.map { BoardPage.Entry($0, marked: playerID) }, player: playerID ?? "", showAround: around != nil, around: around ?? [],
            notRanked: playerID != nil && rank == nil)
        return renderer.render("console-board", content)
    }

    /// `?environment=`: `sandbox` (the default) or `live`.
    private static func environment(_ page: ConsoleRequest) throws -> GameCenterProtocol.Environment {
        guard let text = page.query("environment") else { return .sandbox }
        guard let environment = GameCenterProtocol.Environment(rawValue: text) else {
            throw APIError.invalidPageParameter("environment", allowed: "'sandbox' or 'live'")
        }
        return environment
    }

    /// A manifest error as the page shows it: the field and the rule.
    private static func shown(_ error: ManifestError) -> String {
        error.field.isEmpty ? "\(error.file): \(error.rule)" : "\(error.file): \(error.field): \(error.rule)"
    }
}

/// The games page's content.
struct GamesPage {
    /// One game.
    struct Row {
        let link: String, name: String, bundleID: String
        let boards: Int, achievements: Int, queues: Int
    }

    let chrome: ConsoleChrome
    let games: [Row]
    /// Whether the reader may reload the manifests.
    let mayReload: Bool
    /// Whether the reader may download the whole server's data.
    let mayExport: Bool
    /// How many games a reload just loaded.
    let reloaded: Int?
}

/// A game's page's content.
struct GamePage {
    /// One rule-based queue.
    struct Queue {
        let link: String, title: String, detail: String
    }

    /// One board.
    struct Board {
        let link: String, category: String, title: String, detail: String
    }

    /// One achievement and its completion rate.
    struct Achievement {
        let identifier: String, title: String
        let points: Int
        let hidden: Bool
        let completion: String
    }

    /// What checking or applying a manifest said.
    struct Outcome {
        let ok: Bool
        let message: String
    }

    let chrome: ConsoleChrome
    let bundleID: String, selfLink: String, environment: String
    let isLive: Bool
    /// Whether a new manifest was just applied.
    let applied: Bool
    let boards: [Board]
    let achievements: [Achievement]
    let queues: [Queue]
    let matchmaking: String
    /// The manifest's text, for users who may edit it.
    let manifest: String?
    let outcome: Outcome?
    /// The manifest form's address.
    let action: String
    /// Whether the reader may download the game's data, and the form's address.
    let mayExport: Bool
    let exportAction: String
}

/// A board's page's content.
struct BoardPage {
    /// One ranked entry.
    struct Entry {
        let rank: Int
        let alias: String, playerID: String, value: String, date: String
        let link: String
        /// Whether it is the player looked for.
        let marked: Bool

        init(_ entry: AdminScoreEntry, marked: String?) {
            rank = entry.score.rank
            alias = entry.alias
            playerID = entry.score.playerID
            value = entry.score.formattedValue
            date = PageDates.minute(entry.score.date)
            link = ConsolePlayerPages.link(entry.score.playerID)
            self.marked = entry.score.playerID == marked
        }
    }

    let chrome: ConsoleChrome
    let gameLink: String, gameName: String, category: String, environment: String
    /// Players ranked.
    let total: Int
    /// This page's address (the neighbourhood form's).
    let selfLink: String
    let top: [Entry]
    /// The player looked for, and their neighbourhood when they are ranked.
    let player: String
    let showAround: Bool
    let around: [Entry]
    let notRanked: Bool
}
