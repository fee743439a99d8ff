import Foundation
import Testing

@testable import GameCenterServer

/// App Store Connect's formatters and recurrences as the manifest has them, read back by the manifest loader.
@Suite struct AppStoreConnectManifestTests {
    /// One leaderboard's document with `attributes` added to a plain integer board.
    static func convert(_ attributes: [String: Any]) throws -> (LeaderboardDefinition, [String]) {
        var merged: [String: Any] = [
            "referenceName": "Board", "vendorIdentifier": "board", "defaultFormatter": "INTEGER", "submissionType": "BEST_SCORE",
            "scoreSortType": "DESC",
        ]
        merged.merge(attributes) { $1 }
        let document: [String: Any] = [
            "data": [
                [
                    "type": "gameCenterLeaderboards", "id": "1", "attributes": merged,
                    "relationships": ["localizations": ["data": [["type": "gameCenterLeaderboardLocalizations", "id": "2"]]]],
                ]
            ],
            "included": [["type": "gameCenterLeaderboardLocalizations", "id": "2", "attributes": ["locale": "en-US", "name": "Board"]]],
        ]
        let data = try JSONSerialization.data(withJSONObject: document)
        let conversion = try AppStoreConnectManifest.convert(documents: [("board.json", data)], bundleID: "com.example.asc", name: "ASC")
        let game = try ManifestLoaderTests.load(conversion.yaml)
        return (try #require(game.leaderboards.first), conversion.notes)
    }

    /// Each formatter's format and currency, and whether a note says it was not carried as it is.
    @Test(arguments: [
        ("INTEGER", ScoreFormat.integer, "USD", false), ("DECIMAL_POINT_1_PLACE", .fixedPoint1, "USD", false),
        ("DECIMAL_POINT_2_PLACE", .fixedPoint2, "USD", false), ("DECIMAL_POINT_3_PLACE", .fixedPoint3, "USD", false),
        ("ELAPSED_TIME_CENTISECOND", .elapsedHundredth, "USD", false), ("ELAPSED_TIME_MINUTE", .elapsedMinute, "USD", false),
        ("ELAPSED_TIME_SECOND", .elapsedSecond, "USD", false), ("MONEY_POUND_DECIMAL", .money2, "GBP", false),
        ("MONEY_POUND", .moneyWhole, "GBP", false), ("MONEY_DOLLAR_DECIMAL", .money2, "USD", false), ("MONEY_EURO", .moneyWhole, "EUR", false),
        ("MONEY_FRANC_DECIMAL", .money2, "CHF", false), ("MONEY_KRONER", .moneyWhole, "SEK", true), ("MONEY_YEN", .moneyWhole, "JPY", false),
        ("ELAPSED_TIME_MILLISECOND", .integer, "USD", true),
    ])
    func formatters(formatter: String, format: ScoreFormat, currency: String, noted: Bool) throws {
        let (board, notes) = try Self.convert(["defaultFormatter": formatter])
        #expect(board.format == format)
        #expect(board.currency == currency)
        #expect(notes.contains { $0.contains(formatter) } == noted, "\(notes)")
    }

    @Test(arguments: [
        ("P1D", "FREQ=DAILY;INTERVAL=1", 86_400, 86_400), ("PT12H", "FREQ=DAILY;INTERVAL=2", 43_200, 172_800),
        ("P1W", "FREQ=WEEKLY;INTERVAL=1", 604_800, 604_800), ("PT1H30M", "FREQ=HOURLY;INTERVAL=3", 5_400, 10_800),
    ])
    func recurrences(duration: String, rule: String, seconds: Int64, interval: Int64) throws {
        let (board, notes) = try Self.convert([
            "recurrenceStartDate": "2026-01-05T10:00:00Z", "recurrenceDuration": duration, "recurrenceRule": rule,
        ])
        let schedule = try #require(board.recurrence?.schedule)
        guard case .fixed(let start, let length, let every) = schedule.rule else {
            Issue.record("expected Apple's rule, got \(schedule.rule)")
            return
        }
        #expect(start == 1_767_607_200_000)
        #expect((length, every) == (seconds * 1000, interval * 1000))
        #expect(notes.isEmpty)
    }

    @Test func aRuleWithNoEquivalentLeavesTheBoardClassicWithANote() throws {
        let (board, notes) = try Self.convert([
            "recurrenceStartDate": "2026-01-05T10:00:00Z", "recurrenceDuration": "P1D", "recurrenceRule": "FREQ=YEARLY;INTERVAL=1",
        ])
        #expect(board.recurrence == nil)
        #expect(notes == ["leaderboard 'board': recurrence rule FREQ=YEARLY;INTERVAL=1 has no equivalent here; written as a classic board"])
    }

    @Test func rangeOrderAndVisibilityAreCarried() throws {
        let (board, _) = try Self.convert(["scoreSortType": "ASC", "scoreRangeStart": "-5", "scoreRangeEnd": 500, "visibility": "HIDE_FOR_ALL"])
        #expect(board.order == .ascending)
        #expect(board.valueRange == -5...500)
        #expect(board.isHidden)
    }

    @Test func aDocumentOfAnotherKindIsRefusedNamingTheFile() throws {
        let data = Data(#"{"data": [{"type": "apps", "id": "1"}]}"#.utf8)
        #expect(throws: ManifestError.self) {
            try AppStoreConnectManifest.convert(documents: [("apps.json", data)], bundleID: "com.example.asc", name: "ASC")
        }
    }

    /// Achievements' points are brought into 1…100 with a note; a total over the game's limit is noted.
    @Test func achievementPointsOutsideTheLimitsAreNoted() throws {
        func document(_ points: [Int]) throws -> Data {
            let achievements = points.enumerated().map { index, points -> [String: Any] in
                [
                    "type": "gameCenterAchievements", "id": "\(index)",
                    "attributes": ["referenceName": "A\(index)", "vendorIdentifier": "a\(index)", "points": points, "showBeforeEarned": true],
                ]
            }
            return try JSONSerialization.data(withJSONObject: ["data": achievements])
        }
        let small = try AppStoreConnectManifest.convert(documents: [("a.json", try document([0, 40]))], bundleID: "com.example.asc", name: "ASC")
        #expect(try ManifestLoaderTests.load(small.yaml).achievements.map(\.points) == [1, 40])
        #expect(small.notes.contains("achievement 'a0': 0 points written as 1 (1 to 100 here)"))
        let many = try AppStoreConnectManifest.convert(
            documents: [("a.json", try document(Array(repeating: 100, count: 11)))], bundleID: "com.example.asc", name: "ASC")
        #expect(many.notes.contains { $0.hasPrefix("achievements worth 1100 points") })
    }
}
