import Foundation
import Testing
@testable import GameCenterServer

/// Every rule of MANIFEST.md: a manifest that breaks it is refused, naming the file, field and rule.
@Suite struct ManifestLoaderTests {
    static let valid = """
        bundleID: com.example.test
        name: Test
        defaultLocale: en
        leaderboards:
          - category: a
            default: true
            title: { en: "A" }
            format: integer
          - category: b
            title: { en: "B" }
            format: integer
        aggregates:
          - category: ab
            title: { en: "A and B" }
            members: [a, b]
        achievements:
          - identifier: first
            title: { en: "First" }
            unachievedDescription: { en: "Do it." }
            achievedDescription: { en: "Done." }
            points: 10
        """

    /// Writes `yaml` (and a PNG and a text file beside it) to a new folder and loads it.
    static func load(_ yaml: String) throws -> Game {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("manifest-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let png = Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0, 0, 0, 0])
        try png.write(to: folder.appendingPathComponent("ok.png"))
        try Data("not a png".utf8).write(to: folder.appendingPathComponent("bad.png"))
        let file = folder.appendingPathComponent("game.yaml")
        try yaml.write(to: file, atomically: true, encoding: .utf8)
        return try ManifestLoader.loadManifest(file: file.path)
    }

    @Test func aLeaderboardsWritePolicyIsOpenUnlessItSaysServerOnly() throws {
        let game = try Self.load(
            Self.head + "leaderboards:\n  - { category: x, default: true, title: { en: X }, format: integer }\n"
                + "  - { category: y, title: { en: Y }, format: integer, writePolicy: serverOnly }\n")
        #expect(game.leaderboards.map(\.writePolicy) == [.open, .serverOnly])
    }

    @Test func signedBoardsAndVerificationWithItsBudget() throws {
        let game = try Self.load(
            Self.head + "leaderboards:\n  - { category: x, default: true, title: { en: X }, format: integer, writePolicy: signed }\n"
                + "  - { category: y, title: { en: Y }, format: integer, verification: {} }\n"
                + "  - { category: z, title: { en: Z }, format: integer, writePolicy: signed, verification: { timeoutSeconds: 0.25 } }\n")
        #expect(game.leaderboards.map(\.writePolicy) == [.signed, .open, .signed])
        #expect(game.leaderboards.map(\.verification?.timeoutMillis) == [nil, 5000, 250])
    }

    @Test func theValidManifestLoads() throws {
        let game = try Self.load(Self.valid)
        #expect(game.bundleID == "com.example.test")
        #expect(game.leaderboards.map(\.category) == ["a", "b"])
        #expect(game.leaderboards[0].order == .descending)
        #expect(game.aggregates[0].members == ["a", "b"])
        #expect(game.achievements[0].points == 10)
    }

    @Test func matchmakingSettingsLoadWithTheirDefaults() throws {
        let defaults = try Self.load(Self.valid).matchmaking
        #expect(defaults == MatchmakingSettings())
        // No invitation lifetime of its own: the server's (`--invitation-lifetime`) applies.
        #expect(defaults.fillMilliseconds == 2000 && defaults.invitationSeconds == nil && !defaults.rolesRequired)
        let set = try Self.load(
            Self.valid
                + "\nmatchmaking: { fillSeconds: 0.25, rolesRequired: true, invitationSeconds: 30, timeoutSeconds: 2.5, maxRelayedPlayers: 16, relayOnly: true }"
        ).matchmaking
        #expect(set.fillMilliseconds == 250 && set.rolesRequired && set.invitationSeconds == 30 && set.timeoutMilliseconds == 2500)
        #expect(set.maxRelayedPlayers == 16)
        #expect(set.relayOnly && !defaults.relayOnly, "direct paths unless the manifest says relayOnly")
        #expect(defaults.timeoutMilliseconds == 10_000)
        // The seed caps peer-to-peer matches at 4: relayed matches keep that unless the manifest says otherwise.
        #expect(defaults.maxRelayedPlayers == 4)
    }

    @Test func turnBasedLimitsLoadWithTheirDefaults() throws {
        let defaults = try Self.load(Self.valid).turnBased
        #expect(defaults.matchDataBytes == 1 << 20 && defaults.exchangeDataBytes == 64 << 10)
        #expect(defaults.exchangesPerPlayer == 4 && defaults.openMatchesPerPlayer == 100)
        let set = try Self.load(
            Self.valid
                + "\nturnBased: { matchDataMaximumBytes: 4096, exchangeDataMaximumBytes: 2048, exchangesPerPlayer: 2, openMatchesPerPlayer: 3 }"
        ).turnBased
        #expect(set.matchDataBytes == 4096 && set.exchangeDataBytes == 2048 && set.exchangesPerPlayer == 2 && set.openMatchesPerPlayer == 3)
    }

    @Test func theExampleGameLoads() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let games = try ManifestLoader.loadGames(at: root.appendingPathComponent("games").path)
        #expect(games.map(\.bundleID) == ["com.example.tapper"])
        #expect(games[0].achievements[0].image != nil)
    }

    struct Case: CustomTestStringConvertible, Sendable {
        let name: String
        let yaml: String
        let field: String
        let rule: String
        var testDescription: String { name }
    }

    static func leaderboards(_ count: Int, defaults: Int = 1) -> String {
        (0..<count).map { "  - { category: l\($0), title: { en: L }, format: integer\($0 < defaults ? ", default: true" : "") }" }
            .joined(separator: "\n")
    }

    static func achievements(_ points: [Int]) -> String {
        points.enumerated().map {
            "  - { identifier: a\($0), title: { en: T }, unachievedDescription: { en: U }, achievedDescription: { en: A }, points: \($1) }"
        }
        .joined(separator: "\n")
    }

    static let head = "bundleID: com.example.test\nname: Test\n"

    static let cases: [Case] = [
        Case(name: "bundle id is required", yaml: "name: X\n", field: "bundleID", rule: "is required"),
        Case(name: "bundle id is reverse DNS", yaml: "bundleID: tapper\nname: X\n", field: "bundleID", rule: "reverse-DNS"),
        Case(name: "name is required", yaml: "bundleID: com.example.x\n", field: "name", rule: "is required"),
        Case(name: "unknown keys are refused", yaml: head + "colour: red\n", field: "colour", rule: "unknown key"),
        Case(name: "at most 25 leaderboards", yaml: head + "leaderboards:\n" + leaderboards(26), field: "leaderboards", rule: "at most 25"),
        Case(
            name: "aggregates count towards 25",
            yaml: head + "leaderboards:\n" + leaderboards(25)
                + "\naggregates:\n  - { category: ag, title: { en: A }, members: [l1] }", field: "leaderboards", rule: "at most 25"),
        Case(name: "exactly one default, not zero", yaml: head + "leaderboards:\n" + leaderboards(2, defaults: 0), field: "leaderboards", rule: "exactly one"),
        Case(name: "exactly one default, not two", yaml: head + "leaderboards:\n" + leaderboards(2, defaults: 2), field: "leaderboards", rule: "exactly one"),
        Case(
            name: "categories are unique",
            yaml: head + "leaderboards:\n" + leaderboards(1)
                + "\n  - { category: l0, title: { en: L }, format: integer }", field: "leaderboards[1].category", rule: "used twice"),
        Case(
            name: "formats are known", yaml: head + "leaderboards:\n  - { category: x, default: true, title: { en: X }, format: float }",
            field: "leaderboards[0].format", rule: "not a format"),
        Case(
            name: "orders are known", yaml: head + "leaderboards:\n  - { category: x, default: true, title: { en: X }, format: integer, order: up }",
            field: "leaderboards[0].order", rule: "not an order"),
        Case(
            name: "titles exist for the default locale",
            yaml: head + "defaultLocale: de\nleaderboards:\n  - { category: x, default: true, title: { en: X }, format: integer }",
            field: "leaderboards[0].title", rule: "default locale 'de'"),
        Case(
            name: "write policies are known",
            yaml: head + "leaderboards:\n  - { category: x, default: true, title: { en: X }, format: integer, writePolicy: trusted }",
            field: "leaderboards[0].writePolicy", rule: "'trusted' is not a write policy; allowed: open, serverOnly, signed"),
        Case(
            name: "a verifier's budget is 0.1 to 30 seconds",
            yaml: head + "leaderboards:\n  - { category: x, default: true, title: { en: X }, format: integer, verification: { timeoutSeconds: 60 } }",
            field: "leaderboards[0].verification.timeoutSeconds", rule: "must be 0.1 to 30 seconds"),
        Case(
            name: "serverOnly boards verify nothing",
            yaml: head
                + "leaderboards:\n  - { category: x, default: true, title: { en: X }, format: integer, writePolicy: serverOnly, verification: {} }",
            field: "leaderboards[0].verification", rule: "a serverOnly board takes no device's scores"),
        Case(
            name: "maxValue below minValue",
            yaml: head + "leaderboards:\n  - { category: x, default: true, title: { en: X }, format: integer, minValue: 10, maxValue: 9 }",
            field: "leaderboards[0].maxValue", rule: "is below minValue"),
        Case(
            name: "minValue at -2^63",
            yaml: head + "leaderboards:\n  - { category: x, default: true, title: { en: X }, format: integer, minValue: -9223372036854775808 }",
            field: "leaderboards[0].minValue", rule: "must be above"),
        Case(
            name: "currency only for money", yaml: head + "leaderboards:\n  - { category: x, default: true, title: { en: X }, format: integer, currency: EUR }",
            field: "leaderboards[0].currency", rule: "only money formats"),
        Case(
            name: "aggregate members share a format",
            yaml: head + """
                leaderboards:
                  - { category: a, default: true, title: { en: A }, format: integer }
                  - { category: b, title: { en: B }, format: money2 }
                aggregates:
                  - { category: ab, title: { en: AB }, members: [a, b] }
                """, field: "aggregates[0].members", rule: "one format"),
        Case(
            name: "aggregate members share an order",
            yaml: head + """
                leaderboards:
                  - { category: a, default: true, title: { en: A }, format: integer }
                  - { category: b, title: { en: B }, format: integer, order: ascending }
                aggregates:
                  - { category: ab, title: { en: AB }, members: [a, b] }
                """, field: "aggregates[0].members", rule: "one order"),
        Case(
            name: "a leaderboard belongs to one aggregate",
            yaml: head + """
                leaderboards:
                  - { category: a, default: true, title: { en: A }, format: integer }
                  - { category: b, title: { en: B }, format: integer }
                aggregates:
                  - { category: ab, title: { en: AB }, members: [a, b] }
                  - { category: ba, title: { en: BA }, members: [b] }
                """, field: "aggregates[1].members", rule: "at most one aggregate"),
        Case(
            name: "aggregates do not contain aggregates",
            yaml: head + """
                leaderboards:
                  - { category: a, default: true, title: { en: A }, format: integer }
                aggregates:
                  - { category: x, title: { en: X }, members: [a] }
                  - { category: y, title: { en: Y }, members: [x] }
                """, field: "aggregates[1].members", rule: "cannot contain aggregates"),
        Case(
            name: "the default leaderboard takes reports, so it is not an aggregate",
            yaml: head + """
                leaderboards:
                  - { category: a, title: { en: A }, format: integer }
                aggregates:
                  - { category: x, default: true, title: { en: X }, members: [a] }
                """, field: "aggregates[0].default", rule: "an aggregate cannot be the default leaderboard"),
        Case(
            name: "aggregate members exist",
            yaml: head + """
                leaderboards:
                  - { category: a, default: true, title: { en: A }, format: integer }
                aggregates:
                  - { category: x, title: { en: X }, members: [nope] }
                """, field: "aggregates[0].members", rule: "not a leaderboard"),
        Case(name: "points are at least 1", yaml: head + "achievements:\n" + achievements([0]), field: "achievements[0].points", rule: "1 to 100"),
        Case(name: "points are at most 100", yaml: head + "achievements:\n" + achievements([101]), field: "achievements[0].points", rule: "1 to 100"),
        Case(
            name: "at most 1000 points per game", yaml: head + "achievements:\n" + achievements(Array(repeating: 100, count: 10) + [1]),
            field: "achievements", rule: "1001 points"),
        Case(
            name: "achievement identifiers are unique",
            yaml: head + "achievements:\n" + achievements([1])
                + "\n  - { identifier: a0, title: { en: T }, unachievedDescription: { en: U }, achievedDescription: { en: A }, points: 1 }",
            field: "achievements[1].identifier", rule: "used twice"),
        Case(
            name: "achievement texts need the default locale",
            yaml: head
                + "achievements:\n  - { identifier: a, title: { fr: T }, unachievedDescription: { en: U }, achievedDescription: { en: A }, points: 1 }",
            field: "achievements[0].title", rule: "default locale"),
        Case(
            name: "images must exist",
            yaml: head
                + "achievements:\n  - { identifier: a, title: { en: T }, unachievedDescription: { en: U }, achievedDescription: { en: A }, points: 1, image: missing.png }",
            field: "achievements[0].image", rule: "does not exist"),
        Case(
            name: "images must be PNG",
            yaml: head
                + "achievements:\n  - { identifier: a, title: { en: T }, unachievedDescription: { en: U }, achievedDescription: { en: A }, points: 1, image: bad.png }",
            field: "achievements[0].image", rule: "not a PNG"),
        Case(
            name: "images stay inside the folder",
            yaml: head
                + "achievements:\n  - { identifier: a, title: { en: T }, unachievedDescription: { en: U }, achievedDescription: { en: A }, points: 1, image: ../ok.png }",
            field: "achievements[0].image", rule: "inside the manifest's folder"),
        Case(
            name: "points must be numbers",
            yaml: head
                + "achievements:\n  - { identifier: a, title: { en: T }, unachievedDescription: { en: U }, achievedDescription: { en: A }, points: many }",
            field: "achievements[0].points", rule: "whole number"),
        Case(name: "YAML must parse", yaml: "bundleID: [unclosed\n", field: "", rule: "not valid YAML"),
        Case(
            name: "fill time is 0 to 30 seconds", yaml: head + "matchmaking: { fillSeconds: 31 }",
            field: "matchmaking.fillSeconds", rule: "from 0.0 to 30.0"),
        Case(
            name: "fill time is a number", yaml: head + "matchmaking: { fillSeconds: soon }",
            field: "matchmaking.fillSeconds", rule: "number of seconds"),
        Case(
            name: "relay timeout is 0.5 to 300 seconds", yaml: head + "matchmaking: { timeoutSeconds: 0.1 }",
            field: "matchmaking.timeoutSeconds", rule: "from 0.5 to 300.0"),
        Case(
            name: "relayed matches have at most 16 players", yaml: head + "matchmaking: { maxRelayedPlayers: 17 }",
            field: "matchmaking.maxRelayedPlayers", rule: "from 2 to 16"),
        Case(
            name: "relay-only is true or false", yaml: head + "matchmaking: { relayOnly: maybe }",
            field: "matchmaking.relayOnly", rule: "true or false"),
        Case(
            name: "match data is at most 4 MiB", yaml: head + "turnBased: { matchDataMaximumBytes: 8388608 }",
            field: "turnBased.matchDataMaximumBytes", rule: "from 1024 to 4194304"),
        Case(
            name: "turn-based limits are known", yaml: head + "turnBased: { turnsPerDay: 3 }",
            field: "turnBased.turnsPerDay", rule: "unknown key"),
        Case(
            name: "relayed matches have at least 2 players", yaml: head + "matchmaking: { maxRelayedPlayers: 1 }",
            field: "matchmaking.maxRelayedPlayers", rule: "from 2 to 16"),
        Case(
            name: "invitations live at least 10 seconds", yaml: head + "matchmaking: { invitationSeconds: 5 }",
            field: "matchmaking.invitationSeconds", rule: "from 10 to 86400"),
        Case(
            name: "invitations live at most a day", yaml: head + "matchmaking: { invitationSeconds: 86401 }",
            field: "matchmaking.invitationSeconds", rule: "from 10 to 86400"),
        Case(
            name: "roles are on or off", yaml: head + "matchmaking: { rolesRequired: maybe }",
            field: "matchmaking.rolesRequired", rule: "true or false"),
        Case(
            name: "matchmaking has known keys only", yaml: head + "matchmaking: { fillTime: 2 }",
            field: "matchmaking.fillTime", rule: "unknown key"),
        Case(
            name: "a recurring board takes one rule", yaml: recurring("{ every: day, cron: '0 0 * * *' }"),
            field: "leaderboards[0].recurring", rule: "takes one rule"),
        Case(
            name: "a recurring board needs a rule", yaml: recurring("{ timeZone: UTC }"),
            field: "leaderboards[0].recurring", rule: "found none"),
        Case(
            name: "time zones are IANA names", yaml: recurring("{ every: day, timeZone: Mars/Olympus }"),
            field: "leaderboards[0].recurring.timeZone", rule: "not an IANA time zone"),
        Case(
            name: "cron has five fields", yaml: recurring("{ cron: '0 0 * *' }"),
            field: "leaderboards[0].recurring.cron", rule: "5 fields"),
        Case(
            name: "cron fields are in range", yaml: recurring("{ cron: '0 24 * * *' }"),
            field: "leaderboards[0].recurring.cron", rule: "hour field"),
        Case(
            name: "Apple's rule needs a start", yaml: recurring("{ durationSeconds: 3600 }"),
            field: "leaderboards[0].recurring", rule: "needs start"),
        Case(
            name: "Apple's interval is at least the duration",
            yaml: recurring("{ start: '2026-01-01T00:00:00Z', durationSeconds: 3600, intervalSeconds: 60 }"),
            field: "leaderboards[0].recurring.intervalSeconds", rule: "at least durationSeconds"),
        Case(
            name: "Apple's rule has no time zone", yaml: recurring("{ start: '2026-01-01T00:00:00Z', durationSeconds: 3600, timeZone: UTC }"),
            field: "leaderboards[0].recurring.timeZone", rule: "takes no timeZone"),
        Case(
            name: "starts are ISO 8601", yaml: recurring("{ start: tomorrow, durationSeconds: 3600 }"),
            field: "leaderboards[0].recurring.start", rule: "not an ISO 8601 time"),
        Case(
            name: "weekly boards need a weekday", yaml: recurring("{ every: week }"),
            field: "leaderboards[0].recurring.every", rule: "needs weekday"),
        Case(
            name: "monthly boards start on days every month has", yaml: recurring("{ every: month, day: 31 }"),
            field: "leaderboards[0].recurring.day", rule: "day 1 to 28"),
        Case(
            name: "local times are HH:MM", yaml: recurring("{ every: day, at: '25:00' }"),
            field: "leaderboards[0].recurring.at", rule: "not a local time"),
        Case(
            name: "keep is at least one occurrence", yaml: recurring("{ every: day, keep: 0 }"),
            field: "leaderboards[0].recurring.keep", rule: "1 or more"),
        Case(
            name: "sets name the game's boards",
            yaml: recurring("{ every: day }") + "\nleaderboardSets:\n  - { identifier: s, title: { en: S }, leaderboards: [a, zz] }",
            field: "leaderboardSets[0].leaderboards", rule: "'zz' is not a leaderboard"),
        Case(
            name: "set identifiers are unique",
            yaml: recurring("{ every: day }")
                + "\nleaderboardSets:\n  - { identifier: s, title: { en: S }, leaderboards: [a] }\n  - { identifier: s, title: { en: T }, leaderboards: [a] }",
            field: "leaderboardSets[1].identifier", rule: "used twice"),
        Case(
            name: "a set holds at least one board",
            yaml: recurring("{ every: day }") + "\nleaderboardSets:\n  - { identifier: s, title: { en: S }, leaderboards: [] }",
            field: "leaderboardSets[0].leaderboards", rule: "1 to 100"),
        Case(
            name: "boards outside sets are at most 25",
            yaml: head + "leaderboards:\n" + leaderboards(30) + "\nleaderboardSets:\n  - { identifier: s, title: { en: S }, leaderboards: [l1, l2, l3, l4] }",
            field: "leaderboards", rule: "26 leaderboards outside every set"),
        Case(
            name: "aggregates rank classic boards only",
            yaml: recurring("{ every: day }")
                + "\n  - { category: b, title: { en: B }, format: integer }\naggregates:\n  - { category: ab, title: { en: AB }, members: [a, b] }",
            field: "aggregates[0].members", rule: "is a recurring leaderboard"),
        Case(
            name: "a challenge is played on a board of the game", yaml: challenge("leaderboard: zz"),
            field: "challenges[0].leaderboard", rule: "'zz' is not a leaderboard"),
        Case(
            name: "a repeatable challenge needs a recurring board", yaml: challenge("leaderboard: b, repeatable: true"),
            field: "challenges[0].repeatable", rule: "needs a recurring leaderboard"),
        Case(
            name: "a challenge on a recurring board has no lengths", yaml: challenge("leaderboard: a, durations: [1d]"),
            field: "challenges[0].durations", rule: "rest of the occurrence"),
        Case(
            name: "challenge lengths are a number and a unit", yaml: challenge("leaderboard: b, durations: [3 days]"),
            field: "challenges[0].durations[0]", rule: "not a length from 5m to 90d"),
        Case(
            name: "challenge lengths are 5 minutes to 90 days", yaml: challenge("leaderboard: b, durations: [91d]"),
            field: "challenges[0].durations[0]", rule: "not a length from 5m to 90d"),
        Case(
            name: "a challenge takes 2 to 100 players", yaml: challenge("leaderboard: b, maxParticipants: 1"),
            field: "challenges[0].maxParticipants", rule: "from 2 to 100"),
        Case(
            name: "challenge identifiers are unique", yaml: challenge("leaderboard: b") + "\n  - { identifier: c, title: { en: C }, leaderboard: a }",
            field: "challenges[1]", rule: "'c' is used twice"),
        Case(
            name: "an activity's sizes go together", yaml: activity("minPlayers: 2"),
            field: "activities[0].minPlayers", rule: "set both or neither"),
        Case(
            name: "an activity takes 1 to 16 players", yaml: activity("minPlayers: 2, maxPlayers: 17"),
            field: "activities[0].maxPlayers", rule: "from 1 to 16"),
        Case(
            name: "an activity's minimum is at most its maximum", yaml: activity("minPlayers: 4, maxPlayers: 3"),
            field: "activities[0].minPlayers", rule: "more than maxPlayers"),
        Case(
            name: "a party plays matches", yaml: activity("minPlayers: 1, maxPlayers: 1, supportsPartyCode: true"),
            field: "activities[0].supportsPartyCode", rule: "maxPlayers 2 or more"),
        Case(
            name: "play styles are Apple's", yaml: activity("playStyle: realtime"),
            field: "activities[0].playStyle", rule: "allowed: unspecified, synchronous, asynchronous"),
        Case(
            name: "activity properties are short strings", yaml: activity("defaultProperties: { k: \"\(String(repeating: "v", count: 300))\" }"),
            field: "activities[0].defaultProperties.k", rule: "values at most 256"),
        Case(
            name: "activity identifiers are unique", yaml: activity("playStyle: synchronous") + "\n  - { identifier: p, title: { en: Q } }",
            field: "activities[1]", rule: "'p' is used twice"),
    ]

    /// A game with one activity `p` with `fields` (YAML flow).
    static func activity(_ fields: String) -> String {
        head + "activities:\n  - { identifier: p, title: { en: P }, \(fields) }"
    }

    @Test func activitiesLoad() throws {
        let game = try Self.load(
            Self.activity(
                "details: { en: Go }, minPlayers: 2, maxPlayers: 4, playStyle: synchronous, supportsPartyCode: true, defaultProperties: { mode: fast }")
                + "\n  - { identifier: q, title: { en: Q } }")
        #expect(game.activities.map(\.identifier) == ["p", "q"])
        #expect(game.activities[0].minPlayers == 2 && game.activities[0].maxPlayers == 4 && game.activities[0].supportsPartyCode)
        #expect(game.activities[0].playStyle == .synchronous && game.activities[0].defaultProperties == ["mode": "fast"])
        #expect(game.activities[1].minPlayers == nil && game.activities[1].playStyle == .unspecified && !game.activities[1].supportsPartyCode)
    }

    /// A game with a recurring board `a` and a classic board `b`, and one challenge `c` with `fields` (YAML flow).
    static func challenge(_ fields: String) -> String {
        recurring("{ every: day }") + "\n  - { category: b, title: { en: B }, format: integer }\nchallenges:\n"
            + "  - { identifier: c, title: { en: C }, \(fields) }"
    }

    @Test func challengesLoadWithApplesDefaults() throws {
        let game = try Self.load(
            Self.challenge("leaderboard: b, attempts: 3") + "\n  - { identifier: d, title: { en: D }, leaderboard: a, repeatable: true }"
                + "\n  - { identifier: e, title: { en: E }, details: { en: Go }, leaderboard: b, durations: [30m, 12h, 2w], maxParticipants: 100 }")
        #expect(game.challenges.map(\.identifier) == ["c", "d", "e"])
        #expect(game.challenges[0].durations == [86_400, 259_200, 604_800] && game.challenges[0].attempts == 3)
        #expect(!game.challenges[0].isRepeatable && game.challenges[0].maxParticipants == 16)
        #expect(game.challenges[1].isRepeatable && game.challenges[1].durations.isEmpty && game.challenges[1].attempts == nil)
        #expect(game.challenges[2].durations == [1800, 43_200, 1_209_600] && game.challenges[2].details == ["en": "Go"])
    }

    /// A game whose default board `a` is recurring by `rule` (a YAML flow mapping).
    static func recurring(_ rule: String) -> String {
        head + "leaderboards:\n  - { category: a, default: true, title: { en: A }, format: integer, recurring: \(rule) }"
    }

    @Test func setsRaiseTheLimitOfBoards() throws {
        let boards = (0..<60).map { "l\($0)" }
        let game = try Self.load(
            Self.head + "leaderboards:\n" + Self.leaderboards(60) + "\nleaderboardSets:\n"
                + "  - { identifier: first, title: { en: First }, groupIdentifier: g, leaderboards: [\(boards[0..<40].joined(separator: ", "))] }\n"
                + "  - { identifier: both, title: { en: Both }, leaderboards: [l0, l40] }")
        #expect(game.leaderboards.count == 60 && game.leaderboardSets.map(\.identifier) == ["first", "both"])
        #expect(game.leaderboardSets[0].groupIdentifier == "g" && game.leaderboardSets[1].leaderboards == ["l0", "l40"])
    }

    @Test func recurringBoardsLoadTheirSchedules() throws {
        let game = try Self.load(
            Self.head + """
                leaderboards:
                  - category: monthly
                    default: true
                    title: { en: Monthly }
                    description: { en: "Each calendar month" }
                    format: integer
                    hidden: true
                    recurring: { every: month, day: 1, at: "06:00", timeZone: Europe/Berlin, keep: 12, lifetimeBest: true }
                  - category: sprint
                    title: { en: Sprint }
                    format: integer
                    recurring: { start: "2026-01-05T00:00:00Z", durationSeconds: 3600, intervalSeconds: 86400 }
                  - category: weekly
                    title: { en: Weekly }
                    format: integer
                    recurring: { every: week, weekday: Monday, timeZone: America/New_York }
                """)
        let monthly = try #require(game.leaderboards[0].recurrence)
        #expect(game.leaderboards[0].isHidden && game.leaderboards[0].description == ["en": "Each calendar month"])
        #expect(monthly.keep == 12 && monthly.lifetimeBest)
        #expect(monthly.schedule.rule == .calendar(try CronExpression("0 6 1 * *"), notBefore: nil))
        #expect(monthly.schedule.timeZoneName == "Europe/Berlin")
        let start = OccurrenceScheduleTests.millis("2026-01-05T00:00:00Z")
        #expect(game.leaderboards[1].recurrence?.schedule.rule == .fixed(start: start, duration: 3_600_000, interval: 86_400_000))
        #expect(game.leaderboards[2].recurrence?.schedule.rule == .calendar(try CronExpression("0 0 * * 1"), notBefore: nil))
        #expect(game.leaderboards[2].recurrence?.keep == nil)
    }

    @Test(arguments: cases)
    func aBrokenRuleIsRefusedWithFileFieldAndRule(_ example: Case) throws {
        let error = try #require(throws: ManifestError.self) { try Self.load(example.yaml) }
        #expect(error.file.hasSuffix("game.yaml"))
        #expect(error.field == example.field)
        #expect(error.rule.contains(example.rule), "rule was: \(error.rule)")
    }

    @Test func imagesThatArePNGLoad() throws {
        let game = try Self.load(
            Self.head
                + "achievements:\n  - { identifier: a, title: { en: T }, unachievedDescription: { en: U }, achievedDescription: { en: A }, points: 1, image: ok.png }"
        )
        #expect(game.achievements[0].image?.prefix(4) == Data([0x89, 0x50, 0x4E, 0x47]))
    }

    @Test func twoFilesWithOneBundleIDAreRefused() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("manifests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try Self.head.write(to: folder.appendingPathComponent("a.yaml"), atomically: true, encoding: .utf8)
        try Self.head.write(to: folder.appendingPathComponent("b.yml"), atomically: true, encoding: .utf8)
        let error = try #require(throws: ManifestError.self) { try ManifestLoader.loadGames(at: folder.path) }
        #expect(error.field == "bundleID")
        #expect(error.rule.contains("already configured"))
    }

    @Test func aFailedReloadKeepsThePreviousGames() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("reload-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let file = folder.appendingPathComponent("game.yaml")
        try Self.head.write(to: file, atomically: true, encoding: .utf8)
        let registry = try GameRegistry(path: folder.path)
        #expect(registry.game(bundleID: "com.example.test")?.name == "Test")
        try "bundleID: com.example.test\nname: Renamed\n".write(to: file, atomically: true, encoding: .utf8)
        try registry.reload()
        #expect(registry.game(bundleID: "com.example.test")?.name == "Renamed")
        try "bundleID: com.example.test\nname: Broken\nachievements: 3\n".write(to: file, atomically: true, encoding: .utf8)
        #expect(throws: ManifestError.self) { try registry.reload() }
        #expect(registry.game(bundleID: "com.example.test")?.name == "Renamed")
    }
}
