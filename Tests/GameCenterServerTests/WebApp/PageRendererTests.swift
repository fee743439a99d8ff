import Mustache
import Testing
@testable import GameCenterServer

/// The renderer hands swift-mustache dictionaries instead of view structs (reflection per name looked up was most of
/// a page's cost), or views that answer their names themselves: the pages must read the same.
struct PageRendererTests {
    static let entries = [
        LeaderboardView.Entry(rank: 1, alias: "Ann <3", value: "1,234 taps", date: "Nov 24", isMe: true),
        LeaderboardView.Entry(rank: 2, alias: "Bob", value: "900 taps", date: "Nov 23", isMe: false),
    ]

    @Test func viewStructsBecomeDictionariesAndRenderAlike() throws {
        var library = MustacheLibrary()
        try library.register("{{#.}}{{rank}}:{{alias}}{{#isMe}}*{{/isMe}}{{^isMe}}-{{/isMe}} {{value}};{{/.}}{{^.}}none{{/.}}", named: "rows")
        let prepared = PageRenderer.mustacheValue(Self.entries) as Any
        #expect((prepared as? [Any])?.first is LeaderboardView.Entry, "a view answering its names is left as it is")
        let friend = PageRenderer.mustacheValue(FriendsPage.Friend(id: "p1", alias: "Ann", status: nil, recentGames: [], playedRecently: false))
        #expect((friend as? [String: Any])?["alias"] as? String == "Ann", "another view struct should become a dictionary")
        let expected = "1:Ann &lt;3* 1,234 taps;2:Bob- 900 taps;"
        #expect(library.render(Self.entries, withTemplate: "rows") == expected)
        #expect(library.render(prepared, withTemplate: "rows") == expected)
        let none: [LeaderboardView.Entry] = []
        #expect(library.render(PageRenderer.mustacheValue(none) as Any, withTemplate: "rows") == "none")
    }

    @Test func optionalsAndOtherValuesKeepTheirMeaning() throws {
        var library = MustacheLibrary()
        try library.register("{{#.}}[{{alias}}]{{/.}}{{^.}}nobody{{/.}}", named: "one")
        let someone: LeaderboardView.Entry? = Self.entries[1], nobody: LeaderboardView.Entry? = nil
        #expect(library.render(PageRenderer.mustacheValue(someone as Any) as Any, withTemplate: "one") == "[Bob]")
        #expect(PageRenderer.mustacheValue(nobody as Any) == nil)
        // Values of other modules are left as they are.
        #expect(PageRenderer.mustacheValue("text") as? String == "text")
        #expect(PageRenderer.mustacheValue(42) as? Int == 42)
    }

    /// A view answering its names itself (``MustacheParent``) answers every field it has, as reflection reads it.
    @Test func viewsThatAnswerTheirNamesAnswerEveryField() {
        let view = LeaderboardView(
            chrome: PageChrome(
                title: "Tapper: Taps", signedIn: true, sandbox: true, csrf: "token", isHome: false, isFriends: true, isInvitations: false,
                isTurns: false, isChallenges: false, isSaves: false, isAccount: false, presented: true),
            bundleID: "com.example.tapper", gameName: "Tapper", hasBoards: true,
            categories: [.init(category: "taps", title: "Taps", selected: true)], time: "allTime", players: "everyone",
            timeTabs: [.init(label: "Today", link: "/today", current: false)], playerTabs: [.init(label: "Friends", link: "/f", current: true)],
            occurrence: "Runs from 2026-11-30 00:00 to 2026-12-01 00:00 (America/New_York).", entries: Self.entries, count: 2, myRank: 1, myValue: "1,234 taps",
            jumpToMe: nil, previous: nil, next: "/next",
            achievementsLink: "/achievements", playLink: "/play")
        var checked = 0
        func check(_ value: Any, _ path: String) {
            guard let parent = value as? any MustacheParent else { return }
            for field in Mirror(reflecting: value).children {
                guard let label = field.label else { continue }
                let reflected: Any? =
                    Mirror(reflecting: field.value).displayStyle == .optional
                    ? Mirror(reflecting: field.value).children.first?.value : field.value
                let answered = parent.child(named: label)
                #expect(answered.map { ($0 as? PageText)?.renderText ?? "\($0)" } == reflected.map { "\($0)" }, "\(path).\(label)")
                checked += 1
                if let answered { check(answered, "\(path).\(label)") }
                for element in (answered as? [Any]) ?? [] { check(element, "\(path).\(label)[]") }
            }
        }
        check(view, "LeaderboardView")
        let me = MePage(
            chrome: view.chrome, status: "Hi", points: 30, recentGames: [.init(bundleID: "com.example.tapper", name: "Tapper", lastPlayed: "today")],
            games: [GameCard(bundleID: "com.example.tapper", name: "Tapper", leaderboards: 1, achievements: 2)])
        check(me, "MePage")
        check(MePage(chrome: view.chrome, status: nil, points: 0, recentGames: [], games: []), "MePage without a status")
        #expect(checked > 70)
        #expect(view.child(named: "nothing") == nil)
    }

    /// The pages' escaping (on bytes) escapes as swift-mustache's own HTML escaping does.
    @Test func pageEscapingMatchesSwiftMustaches() throws {
        var library = MustacheLibrary()
        try library.register("{{.}}", named: "value")
        for text in ["", "plain", "Ann <3 & \"Bob\" 'x' </script>", "Zoë 🎮 <b>", "e\u{301}&\u{202E}>", String(repeating: "<&>", count: 100)] {
            #expect(PageHTMLEscaping().escapeText(text) == library.render(text, withTemplate: "value"), "\(text)")
        }
    }
}
