import Foundation
import GameCenterProtocol
import GameCenterStorage
import Hummingbird
import Mustache

/// A game's leaderboard page: a category picker with the manifest's titles (hidden boards left out), today / week /
/// all time — or, on a recurring board, this occurrence / the previous one / lifetime bests, with when the occurrence
/// runs in its schedule's zone — everyone or friends, 25 ranks a page, the player's own entry highlighted with a link
/// to the page holding it. Values are formatted by ``LeaderboardService`` for the reader's first language.
struct LeaderboardPages: Sendable {
    /// Ranks per page.
    static let pageLength = 25

    let registry: GameRegistry
    let leaderboards: LeaderboardService
    let players: PlayerService
    let responder: PageResponder
    let renderer: PageRenderer

    /// Adds the route.
    func add(to router: Router<AppRequestContext>) {
        responder.get("games/{bundleID}/leaderboards", on: router, .signedIn) { page in try await leaderboardPage(page) }
    }

    private func leaderboardPage(_ page: PageRequest) async throws -> Response {
        let session = try page.requireSession()
        let bundleID = try page.context.parameters.require("bundleID")
        guard let game = registry.game(bundleID: bundleID) else { throw APIError.gameUnrecognized(bundleID) }
        let texts = page.locale.texts(of: game)
        let title = { (text: LocalizedText) in Localization.text(text, locale: texts, fallback: game.defaultLocale) }
        let boards =
            game.leaderboards.filter { !$0.isHidden }.map { (category: $0.category, title: title($0.title), isDefault: $0.isDefault) }
            + game.aggregates.map { (category: $0.category, title: title($0.title), isDefault: $0.isDefault) }
        guard let fallback = boards.first(where: \.isDefault) ?? boards.first else {
            return renderer.render("leaderboard", LeaderboardView.empty(game: game, chrome: PageChrome(game.name, for: page)))
        }
        let category = page.query("category") ?? fallback.category
        let time = try Self.timeScope(page.query("time"))
        let friendsOnly = try Self.friendsOnly(page.query("players"))
        let start = try Self.start(page.query("start"))
        let occurrence = try Self.occurrence(page.query("occurrence"))
        let lifetime = page.query("view") == "lifetime"
        let recurrence = game.leaderboards.first { $0.category == category }?.recurrence
        let query = LeaderboardQuery(
            category: category, playerScope: friendsOnly ? .friendsOnly : .global, timeScope: time,
            rangeStart: start, rangeLength: Self.pageLength, occurrence: occurrence.map(StoredTime.date), lifetimeBest: lifetime ? true : nil)
        let board = try await leaderboards.page(query, device: session.device(for: game, locale: page.locale.formatting), session: session.session)
        let ids = Array(Set(board.scores.map(\.playerID)))
        let aliases = Dictionary(
            try await players.loadPlayers(ids, caller: session.session, device: session.device).players.map {
                ($0.playerID, $0.alias)
            }
        ) { a, _ in a }
        let me = session.session.playerID
        // Links keep the occurrence (or lifetime view) shown unless they name another.
        let shown = (occurrence: occurrence.map(String.init), lifetime: lifetime)
        let link = { (start: Int?, time: LeaderboardTimeScope, friends: Bool, view: (occurrence: String?, lifetime: Bool)?) in
            let view = view ?? shown
            return PageLinks.game(
                game.bundleID, "leaderboards",
                [
                    ("category", board.category), ("time", recurrence == nil ? time.rawValue : nil),
                    ("players", friends ? "friends" : "everyone"), ("start", start.map(String.init)),
                    ("occurrence", view.occurrence), ("view", view.lifetime ? "lifetime" : nil),
                ])
        }
        let timeTabs: [LeaderboardView.Tab]
        if recurrence != nil {
            let current = (occurrence: String?.none, lifetime: false)
            var tabs = [LeaderboardView.Tab(label: "This occurrence", link: link(nil, time, friendsOnly, current), current: occurrence == nil && !lifetime)]
            if let previous = board.occurrence?.previousStart {
                tabs.append(.init(label: "Previous", link: link(nil, time, friendsOnly, (String(StoredTime.millis(previous)), false)), current: false))
            }
            if recurrence?.lifetimeBest == true {
                tabs.append(.init(label: "Lifetime best", link: link(nil, time, friendsOnly, (nil, true)), current: lifetime))
            }
            timeTabs = tabs
        } else {
            timeTabs = [("Today", LeaderboardTimeScope.today), ("This week", .week), ("All time", .allTime)].map {
                .init(label: $0.0, link: link(nil, $0.1, friendsOnly, nil), current: $0.1 == time)
            }
        }
        let entries = board.scores.map { score in
            LeaderboardView.Entry(
                rank: score.rank, alias: aliases[score.playerID] ?? "", value: score.formattedValue,
                date: PageDates.day(score.date), isMe: score.playerID == me)
        }
        // The picker's title: in the first language of the reader's that the manifest has.
        let boardTitle = boards.first { $0.category == board.category }?.title ?? board.title
        let mine = board.localPlayerScore
        let myPageStart = mine.map { ($0.rank - 1) / Self.pageLength * Self.pageLength + 1 }
        let content = LeaderboardView(
            chrome: PageChrome("\(game.name): \(boardTitle)", for: page), bundleID: game.bundleID, gameName: game.name,
            hasBoards: true,
            categories: boards.map { .init(category: $0.category, title: $0.title, selected: $0.category == board.category) },
            time: time.rawValue, players: friendsOnly ? "friends" : "everyone",
            timeTabs: timeTabs,
            playerTabs: [("Everyone", false), ("Friends", true)].map {
                .init(label: $0.0, link: link(nil, time, $0.1, nil), current: $0.1 == friendsOnly)
            },
            occurrence: board.occurrence.map(Self.occurrenceNote) ?? (lifetime ? "Each player's best over every occurrence." : nil),
            entries: entries, count: board.maxRange,
            myRank: mine?.rank, myValue: mine?.formattedValue,
            jumpToMe: myPageStart.flatMap { $0 == start ? nil : link($0, time, friendsOnly, nil) },
            previous: start > 1 ? link(max(start - Self.pageLength, 1), time, friendsOnly, nil) : nil,
            next: start + Self.pageLength <= board.maxRange ? link(start + Self.pageLength, time, friendsOnly, nil) : nil,
            achievementsLink: PageLinks.game(game.bundleID, "achievements"), playLink: PageLinks.game(game.bundleID, "play"))
        return renderer.render("leaderboard", content)
    }

    private static func timeScope(_ value: String?) throws -> LeaderboardTimeScope {
        guard let value else { return .allTime }
        guard let scope = LeaderboardTimeScope(rawValue: value) else {
            throw APIError.invalidPageParameter("time", allowed: "today, week or allTime")
        }
        return scope
    }

    /// An occurrence's start as the page's links give it (milliseconds since 1970).
    private static func occurrence(_ value: String?) throws -> Int64? {
        guard let value else { return nil }
        guard let millis = Int64(value), StoredTime.checkedMillis(StoredTime.date(millis)) != nil else {
            throw APIError.invalidPageParameter("occurrence", allowed: "an occurrence's start, as the page links give it")
        }
        return millis
    }

    /// When an occurrence runs, in its schedule's zone: "Runs from 2026-11-30 00:00 to 2026-12-01 00:00 (America/New_York)."
    static func occurrenceNote(_ occurrence: LeaderboardOccurrence) -> String {
        let local = { (iso: String) in String(iso.prefix(16)).replacingOccurrences(of: "T", with: " ") }
        let span = "from \(local(occurrence.localStart)) to \(local(occurrence.localEnd)) (\(occurrence.timeZone))"
        return occurrence.isRunning ? "Runs \(span)." : occurrence.start > Date() ? "Starts \(span)." : "Ran \(span)."
    }

    private static func friendsOnly(_ value: String?) throws -> Bool {
        switch value {
        case nil, "everyone": false
        case "friends": true
        default: throw APIError.invalidPageParameter("players", allowed: "everyone or friends")
        }
    }

    private static func start(_ value: String?) throws -> Int {
        guard let value else { return 1 }
        guard let start = Int(value), start >= 1, start <= Int.max - pageLength else {
            throw APIError.invalidPageParameter("start", allowed: "a rank from 1")
        }
        return start
    }
}

/// The leaderboard page's content. It and its parts answer the template's names themselves (``MustacheParent``): the
/// page is the app's busiest, and reflecting its 25 rows cost more than rendering them. `PageRendererTests` check
/// every field answers.
struct LeaderboardView: MustacheParent {
    /// A category in the picker.
    struct Category: MustacheParent {
        let category: String, title: String
        let selected: Bool

        func child(named name: String) -> Any? {
            switch name {
            case "category": PageText(category)
            case "title": PageText(title)
            case "selected": selected
            default: nil
            }
        }
    }

    /// A link among exclusive choices (time or players).
    struct Tab: MustacheParent {
        let label: String, link: String
        let current: Bool

        func child(named name: String) -> Any? {
            switch name {
            case "label": PageText(label)
            case "link": PageText(link)
            case "current": current
            default: nil
            }
        }
    }

    /// A ranked score.
    struct Entry: MustacheParent {
        let rank: Int
        let alias: String
        /// Formatted by the server for the reader's language.
        let value: String
        let date: String
        /// The signed-in player's own entry.
        let isMe: Bool

        func child(named name: String) -> Any? {
            switch name {
            case "rank": PageText(String(rank))
            case "alias": PageText(alias)
            case "value": PageText(value)
            case "date": PageText(date)
            case "isMe": isMe
            default: nil
            }
        }
    }

    let chrome: PageChrome
    let bundleID: String, gameName: String
    /// False when the game has no leaderboards.
    let hasBoards: Bool
    let categories: [Category]
    let time: String, players: String
    let timeTabs: [Tab], playerTabs: [Tab]
    /// A recurring board: when the occurrence shown runs (or that lifetime bests are shown).
    let occurrence: String?
    let entries: [Entry]
    /// Entries in this scope.
    let count: Int
    let myRank: Int?, myValue: String?
    let jumpToMe: String?, previous: String?, next: String?
    let achievementsLink: String, playLink: String

    func child(named name: String) -> Any? {
        switch name {
        case "chrome": chrome
        case "bundleID": PageText(bundleID)
        case "gameName": PageText(gameName)
        case "hasBoards": hasBoards
        case "categories": categories
        case "time": PageText(time)
        case "players": PageText(players)
        case "timeTabs": timeTabs
        case "playerTabs": playerTabs
        case "occurrence": occurrence
        case "entries": entries
        // The template draws the player's own row apart, so the other rows need no per-row test.
        case "above": Array(entries.prefix { !$0.isMe })
        case "mine": entries.first(where: \.isMe)
        case "below": entries.firstIndex(where: \.isMe).map { Array(entries[($0 + 1)...]) } ?? []
        case "count": PageText(String(count))
        case "myRank": myRank
        case "myValue": myValue
        case "jumpToMe": jumpToMe
        case "previous": previous
        case "next": next
        case "achievementsLink": PageText(achievementsLink)
        case "playLink": PageText(playLink)
        default: nil
        }
    }

    /// The page of a game without leaderboards.
    static func empty(game: Game, chrome: PageChrome) -> LeaderboardView {
        LeaderboardView(
            chrome: chrome, bundleID: game.bundleID, gameName: game.name, hasBoards: false, categories: [], time: "",
            players: "", timeTabs: [], playerTabs: [], occurrence: nil, entries: [], count: 0, myRank: nil, myValue: nil, jumpToMe: nil,
            previous: nil, next: nil, achievementsLink: PageLinks.game(game.bundleID, "achievements"),
            playLink: PageLinks.game(game.bundleID, "play"))
    }
}
