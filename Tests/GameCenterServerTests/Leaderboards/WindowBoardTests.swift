import Testing
@testable import GameCenterServer
import NetworkFaultProxy

/// The rolling window against a brute-force model: a player's entry is their best report inside the window
/// (earliest among equals), however reports arrive and however the window moves.
@Suite struct WindowBoardTests {
    typealias Report = WindowBoard.Report

    /// Each player's best report made after `now - length`, ranked.
    static func model(_ reports: [(player: UInt32, report: Report)], now: Int64, length: Int64, higherIsBetter: Bool) -> [(UInt32, Int64)] {
        var best: [UInt32: Report] = [:]
        for (player, report) in reports where report.reportedAt + length > now && report.reportedAt <= now {
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
    /// them sparse, as on a board with few of the server's players (it sorts).
    @Test(arguments: [(1 as UInt64, true, 1 as UInt32), (2, false, 1), (3, true, 100_000), (4, false, 100_000)])
    func incrementalBulkAndModelAgree(seed: UInt64, higherIsBetter: Bool, spread: UInt32) {
        var random = SplitMix64(seed: seed)
        let length: Int64 = 1000
        // Reports over 3 window lengths, few distinct values so that ties happen.
        var reports: [(player: UInt32, report: Report)] = []
        var time: Int64 = 0
        for id in 1...600 {
            time += Int64(random.next() % 8)
            reports.append((UInt32(random.next() % 25) * spread, Report(value: Int64(random.next() % 12), scoreID: Int64(id), reportedAt: time)))
        }
        // Reports made in the same millisecond reach the bulk build in any order.
        reports.sort { ($0.report.reportedAt, $0.report.scoreID % 7) < ($1.report.reportedAt, $1.report.scoreID % 7) }
        var incremental = WindowBoard(length: length, higherIsBetter: higherIsBetter)
        var shuffledOnce = WindowBoard(length: length, higherIsBetter: higherIsBetter)
        var added = 0
        for now in stride(from: Int64(0), through: time + length, by: 97) {
            while added < reports.count, reports[added].report.reportedAt <= now {
                incremental.add(reports[added].report, player: reports[added].player)
                added += 1
            }
            incremental.advance(to: now)
            let expected = Self.model(reports, now: now, length: length, higherIsBetter: higherIsBetter)
            #expect(Self.ranked(incremental).elementsEqual(expected, by: ==), "incremental at \(now)")

            // Built at once from storage's rows (in time order, as the scan gives them): a shorter window and this one.
            let upToNow = reports.filter { $0.report.reportedAt <= now }
            let stored = RecentReports(upToNow)
            var bulk = WindowBoard(length: length, higherIsBetter: higherIsBetter, reports: stored, now: now)
            var bulkShorter = WindowBoard(length: length / 3, higherIsBetter: higherIsBetter, reports: stored, now: now)
            #expect(Self.ranked(bulk).elementsEqual(expected, by: ==), "bulk at \(now)")
            #expect(
                Self.ranked(bulkShorter).elementsEqual(Self.model(reports, now: now, length: length / 3, higherIsBetter: higherIsBetter), by: ==),
                "bulk, shorter window, at \(now)")
            // A built window then follows new reports and time like one that saw every report.
            let later = now + length / 2
            for (player, report) in reports where report.reportedAt > now && report.reportedAt <= later {
                bulk.add(report, player: player)
                bulkShorter.add(report, player: player)
            }
            bulk.advance(to: later)
            bulkShorter.advance(to: later)
            #expect(
                Self.ranked(bulk).elementsEqual(Self.model(reports, now: later, length: length, higherIsBetter: higherIsBetter), by: ==),
                "bulk after more reports, at \(later)")
            #expect(
                Self.ranked(bulkShorter).elementsEqual(Self.model(reports, now: later, length: length / 3, higherIsBetter: higherIsBetter), by: ==),
                "bulk, shorter window, after more reports, at \(later)")
        }
        // Reports arriving out of order (and twice) end in the same board.
        for (player, report) in reports.shuffled(using: &random) + reports.prefix(50) { shuffledOnce.add(report, player: player) }
        shuffledOnce.advance(to: time)
        #expect(Self.ranked(shuffledOnce).elementsEqual(Self.model(reports, now: time, length: length, higherIsBetter: higherIsBetter), by: ==))
    }
}
