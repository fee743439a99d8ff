import Foundation
import GameCenterProtocol
import NIOCore
import Testing
@testable import GameCenterServer
import NetworkFaultProxy

/// The answers that write their own JSON read back as the same values, and hold exactly the keys and values
/// `JSONEncoder` would have written: a field added to one of these types and not to its writer fails here.
@Suite struct JSONWriterTests {
    /// Strings a player or a studio can choose: quotes, backslashes, control characters, any Unicode.
    static let strings = [
        "", "plain", "quote \" and \\ backslash", "line\nbreak\ttab\r", "\u{0}\u{1}\u{1f}\u{7f}", "émoji 🎮 日本語",
        "/slash/", "{\"json\":[1,2]}", String(repeating: "long ", count: 200),
    ]

    static func string(_ random: inout SplitMix64) -> String { strings[Int(random.next() % UInt64(strings.count))] }

    static func date(_ random: inout SplitMix64) -> Date {
        [
            Date(timeIntervalSince1970: 0), Date(timeIntervalSince1970: 1_732_301_234.567), Date(timeIntervalSince1970: -86_400.25),
            Date(timeIntervalSince1970: Double(random.next() % 4_000_000_000_000) / 1000),
        ][Int(random.next() % 4)]
    }

    static func score(_ random: inout SplitMix64) -> ScoreEntry {
        let values: [Int64] = [0, -1, 1, .min, .max, Int64(bitPattern: random.next())]
        let contexts: [UInt64] = [0, .max, random.next()]
        return ScoreEntry(
            category: string(&random), playerID: string(&random), value: values[Int(random.next() % 6)],
            context: contexts[Int(random.next() % 3)], date: date(&random), formattedValue: string(&random),
            rank: Int(random.next() % 1_000_000), occurrence: random.next() % 2 == 0 ? date(&random) : nil,
            attemptsLeft: random.next() % 3 == 0 ? Int(random.next() % 5) : nil)
    }

    static func occurrence(_ random: inout SplitMix64) -> LeaderboardOccurrence? {
        guard random.next() % 3 != 0 else { return nil }
        return LeaderboardOccurrence(
            start: date(&random), end: date(&random), nextStart: random.next() % 2 == 0 ? date(&random) : nil,
            previousStart: random.next() % 2 == 0 ? date(&random) : nil, timeZone: string(&random), localStart: string(&random),
            localEnd: string(&random), isRunning: random.next() % 2 == 0)
    }

    static func profile(_ random: inout SplitMix64) -> PlayerProfile {
        let games = (0..<Int(random.next() % 3)).map { _ in RecentGame(bundleID: string(&random), name: string(&random), lastPlayedAt: date(&random)) }
        return PlayerProfile(
            playerID: string(&random), alias: string(&random), isFriend: random.next() % 2 == 0,
            status: random.next() % 2 == 0 ? string(&random) : nil, recentGames: random.next() % 3 == 0 ? nil : games)
    }

    /// Both encodings parsed into plain objects compare equal.
    static func sameAsJSONEncoder<T: Encodable & JSONWritable>(_ value: T) throws -> Bool {
        var json = JSONWriter()
        value.write(to: &json)
        let written = try JSONSerialization.jsonObject(with: Data(json.buffer.readableBytesView)) as? NSDictionary
        let encoded = try JSONSerialization.jsonObject(with: WireCoding.makeEncoder().encode(value)) as? NSDictionary
        return written != nil && written == encoded
    }

    static func decoded<T: Decodable>(_ value: some JSONWritable, as type: T.Type) throws -> T {
        var json = JSONWriter()
        value.write(to: &json)
        return try WireCoding.makeDecoder().decode(T.self, from: Data(json.buffer.readableBytesView))
    }

    @Test(arguments: 1...40 as ClosedRange<UInt64>)
    func leaderboardPagesAndReportAnswers(seed: UInt64) throws {
        var random = SplitMix64(seed: seed)
        let scores = (0..<Int(random.next() % 30)).map { _ in Self.score(&random) }
        let page = LeaderboardPage(
            category: Self.string(&random), title: Self.string(&random), scores: scores,
            localPlayerScore: seed % 2 == 0 ? Self.score(&random) : nil, maxRange: Int(random.next() % 10_000_000),
            occurrence: Self.occurrence(&random))
        #expect(try Self.decoded(page, as: LeaderboardPage.self) == page)
        #expect(try Self.sameAsJSONEncoder(page))
        let result = ScoreReportResult(scores: scores)
        #expect(try Self.decoded(result, as: ScoreReportResult.self).scores == scores)
        #expect(try Self.sameAsJSONEncoder(result))
    }

    @Test(arguments: 1...40 as ClosedRange<UInt64>)
    func playerLookups(seed: UInt64) throws {
        var random = SplitMix64(seed: seed)
        let response = PlayerLookupResponse(
            players: (0..<Int(random.next() % 12)).map { _ in Self.profile(&random) },
            unknownPlayerIDs: (0..<Int(random.next() % 4)).map { _ in Self.string(&random) })
        let decoded = try Self.decoded(response, as: PlayerLookupResponse.self)
        #expect(decoded.players == response.players)
        #expect(decoded.unknownPlayerIDs == response.unknownPlayerIDs)
        #expect(try Self.sameAsJSONEncoder(response))
    }

    @Test func controlCharactersAreEscapedAndNothingElseIs() {
        var json = JSONWriter()
        json.string("a\"b\\c\n\u{1}é🎮/")
        #expect(String(buffer: json.buffer) == #""a\"b\\c\n\u0001é🎮/""#)
    }
}
