import Mustache
import Testing
@testable import GameCenterServer

/// The renderer hands swift-mustache dictionaries instead of view structs (reflection per name looked up was most of
/// a page's cost): the pages must read the same.
struct PageRendererTests {
    static let entries = [
        LeaderboardView.Entry(rank: 1, alias: "Ann <3", value: "1,234 taps", date: "Nov 24", isMe: true),
        LeaderboardView.Entry(rank: 2, alias: "Bob", value: "900 taps", date: "Nov 23", isMe: false),
    ]

    @Test func viewStructsBecomeDictionariesAndRenderAlike() throws {
        var library = MustacheLibrary()
        try library.register("{{#.}}{{rank}}:{{alias}}{{#isMe}}*{{/isMe}}{{^isMe}}-{{/isMe}} {{value}};{{/.}}{{^.}}none{{/.}}", named: "rows")
        let prepared = PageRenderer.mustacheValue(Self.entries) as Any
        #expect((prepared as? [Any])?.first is [String: Any], "a view struct should become a dictionary")
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
}
