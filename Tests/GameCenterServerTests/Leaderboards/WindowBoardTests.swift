import Testing
@testable import GameCenterServer
import NetworkFaultProxy

/// The rolling window against a brute-force model: a player's entry is their best report inside the window
/// (earliest among equals), however reports arrive and however the window moves.
@Suite struct WindowBoardTests {
    typealias Report = WindowBoard.Report

    /// Each player's best report earned after `now - length`, ranked.
    static func model(_ reports: [(player: UInt32, report: Report)], now: Int64, length: Int64, higherIsBetter: Bool) -> [(UInt32, Int64)] {
        var best: [UInt32: Report] = [:]
        for (player, report) in reports where report.earnedAt + length > now && report.earnedAt <= now {
            if let current = best[player] {
                let better = higherIsBetter ? report.value > current.value : report.value < current.value
                if better || (report.value == current.value && report.scoreID < current.scoreID) { best[player] = report }
            } else {
                best[player] = report
            }
        }
        return best.map { ($0.key, RankKey(value: $0.value.value, scoreID: $0.value.scoreID, higherIsBetter: higherIsBetter)) }
            .sorted { $0.1 < $1.1 }.map { ($0.0, $0.1.scoreID) }
    }

    static func ranked(_ board: WindowBoard) -> [(UInt32, Int64)] {
        board.index.entries(in: 1...max(1, board.index.count)).map { ($0.player, $0.key.scoreID) }
    }

    /// `spread` multiplies player numbers: 1 keeps them dense (the bulk build groups by counting), a large one makes
    /// them sparse, as on a board with few of the server's players (it sorts). With `late`, a fifth of the reports
    /// reach the server up to one and a half windows after they were earned (they waited in a device's outbox), so
    /// score ids (the order of arrival) no longer follow the order in which scores were earned.
    @Test(arguments: [
        (1 as UInt64, true, 1 as UInt32, false), (2, false, 1, false), (3, true, 100_000, false), (4, false, 100_000, false),
        (5, true, 1, true), (6, false, 1, true), (7, true, 100_000, true), (8, false, 100_000, true),
    ])
    func incrementalBulkAndModelAgree(seed: UInt64, higherIsBetter: Bool, spread: UInt32, late: Bool) {
        var random = SplitMix64(seed: seed)
        let length: Int64 = 1000
        // Reports over 3 window lengths, few distinct values so that ties happen; ids in order of arrival.
        var reports: [(player: UInt32, report: Report, arrivedAt: Int64)] = []
        var time: Int64 = 0
        for id in 1...600 {
            time += Int64(random.next() % 8)
            let delay = late && random.next() % 5 == 0 ? Int64(random.next() % UInt64(length * 3 / 2)) : 0
            let report = Report(value: Int64(random.next() % 12), scoreID: Int64(id), earnedAt: time - delay)
            reports.append((UInt32(random.next() % 25) * spread, report, time))
        }
        func model(arrivedBy now: Int64, length: Int64) -> [(UInt32, Int64)] {
            Self.model(reports.filter { $0.arrivedAt <= now }.map { ($0.player, $0.report) }, now: now, length: length, higherIsBetter: higherIsBetter)
        }
        var incremental = WindowBoard(length: length, higherIsBetter: higherIsBetter)
        var shuffledOnce = WindowBoard(length: length, higherIsBetter: higherIsBetter)
        var added = 0
        for now in stride(from: Int64(0), through: time + length, by: 97) {
            while added < reports.count, reports[added].arrivedAt <= now {
                incremental.add(reports[added].report, player: reports[added].player)
                added += 1
            }
            incremental.advance(to: now)
            let expected = model(arrivedBy: now, length: length)
            #expect(Self.ranked(incremental).elementsEqual(expected, by: ==), "incremental at \(now)")

            // Built at once from storage's rows (in any order): a shorter window and this one.
            let stored = RecentReports(reports.filter { $0.arrivedAt <= now }.map { ($0.player, $0.report) }.shuffled(using: &random))
            var bulk = WindowBoard(length: length, higherIsBetter: higherIsBetter, reports: stored, now: now)
            var bulkShorter = WindowBoard(length: length / 3, higherIsBetter: higherIsBetter, reports: stored, now: now)
            #expect(Self.ranked(bulk).elementsEqual(expected, by: ==), "bulk at \(now)")
            #expect(Self.ranked(bulkShorter).elementsEqual(model(arrivedBy: now, length: length / 3), by: ==), "bulk, shorter window, at \(now)")
            // A built window then follows new reports and time like one that saw every report.
            let later = now + length / 2
            for (player, report, arrivedAt) in reports where arrivedAt > now && arrivedAt <= later {
                bulk.add(report, player: player)
                bulkShorter.add(report, player: player)
            }
            bulk.advance(to: later)
            bulkShorter.advance(to: later)
            #expect(Self.ranked(bulk).elementsEqual(model(arrivedBy: later, length: length), by: ==), "bulk after more reports, at \(later)")
            #expect(
                Self.ranked(bulkShorter).elementsEqual(model(arrivedBy: later, length: length / 3), by: ==),
                "bulk, shorter window, after more reports, at \(later)")
        }
        // Reports arriving in any order (and twice) end in the same board.
        for (player, report, _) in reports.shuffled(using: &random) + reports.prefix(50) { shuffledOnce.add(report, player: player) }
        shuffledOnce.advance(to: time)
        #expect(Self.ranked(shuffledOnce).elementsEqual(model(arrivedBy: time, length: length), by: ==))
    }
}
