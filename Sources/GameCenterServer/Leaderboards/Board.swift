import GameCenterStorage
import Synchronization

/// One leaderboard (or aggregate) of one game environment, in memory: the all-time index and the two rolling
/// windows; or one occurrence of a recurring leaderboard (its index; the windows stay empty). Storage holds the
/// truth; a board is built from it (``LeaderboardIndex``) and then follows every accepted report. Safe to use from
/// any task.
final class Board: Sendable {
    /// The time windows of `LeaderboardTimeScope`, in milliseconds.
    static let dayMillis: Int64 = 24 * 3600 * 1000
    static let weekMillis: Int64 = 7 * dayMillis

    /// A report as the board takes it.
    struct Report: Sendable {
        var player: UInt32
        var value: Int64
        var scoreID: Int64
        var earnedAt: Int64
    }

    /// A board's contents in one time scope, read under the lock.
    enum Scope {
        case allTime, today, week
    }

    private struct State {
        var allTime = RankIndex()
        var today: WindowBoard
        var week: WindowBoard
        /// Reports that arrived while the board was being built; applied again once it is built.
        var pending: [Report]? = []
    }

    /// Which values are better on this board.
    let higherIsBetter: Bool
    /// The leaderboards whose reports feed this board: itself, or an aggregate's members.
    let categories: [String]
    /// The occurrence (its start) this board ranks; nil for a classic board or a recurring board's lifetime bests.
    let occurrence: Int64?
    private let state: Mutex<State>

    init(higherIsBetter: Bool, categories: [String], occurrence: Int64? = nil) {
        self.higherIsBetter = higherIsBetter
        self.categories = categories
        self.occurrence = occurrence
        self.state = Mutex(
            State(
                today: WindowBoard(length: Self.dayMillis, higherIsBetter: higherIsBetter),
                week: WindowBoard(length: Self.weekMillis, higherIsBetter: higherIsBetter)))
    }

    /// Whether a stored report counts on this board.
    func takes(_ record: ScoreRecord) -> Bool {
        categories.contains(record.category) && (occurrence == nil || occurrence == record.occurrence)
    }

    /// Applies an accepted report. Idempotent: a report applied twice changes nothing the second time.
    func apply(_ report: Report) {
        state.withLock { state in
            state.pending?.append(report)
            Self.apply(report, to: &state, higherIsBetter: higherIsBetter)
        }
    }

    /// The day's and the week's windows built at once from the reports of the last week, in parallel.
    static func windows(from recent: RecentReports, higherIsBetter: Bool, now: Int64) async -> Handover<(today: WindowBoard, week: WindowBoard)> {
        async let today = Handover(WindowBoard(length: dayMillis, higherIsBetter: higherIsBetter, reports: recent, now: now))
        let week = WindowBoard(length: weekMillis, higherIsBetter: higherIsBetter, reports: recent, now: now)
        return Handover((await today.value, week))
    }

    /// Installs what was built from storage, then replays the reports that arrived meanwhile. Called once by
    /// ``LeaderboardIndex``.
    func finishBuilding(allTime: Handover<RankIndex>, windows: Handover<(today: WindowBoard, week: WindowBoard)>) {
        state.withLock { state in
            let pending = state.pending ?? []
            state.allTime = allTime.value
            state.today = windows.value.today
            state.week = windows.value.week
            state.pending = nil
            for report in pending { Self.apply(report, to: &state, higherIsBetter: higherIsBetter) }
        }
    }

    /// Removes a player's entries (their scores were erased).
    func remove(player: UInt32) {
        state.withLock { state in
            state.pending?.removeAll { $0.player == player }
            state.allTime.remove(player: player)
            state.today.remove(player: player)
            state.week.remove(player: player)
        }
    }

    /// Runs `body` on the index of `scope` as of `now` (windows drop what aged out first).
    func withIndex<T: Sendable>(_ scope: Scope, now: Int64, _ body: @Sendable (RankIndex) -> T) -> T {
        state.withLock { state in
            switch scope {
            case .allTime:
                return body(state.allTime)
            case .today:
                state.today.advance(to: now)
                return body(state.today.index)
            case .week:
                state.week.advance(to: now)
                return body(state.week.index)
            }
        }
    }

    private static func apply(_ report: Report, to state: inout State, higherIsBetter: Bool) {
        let key = RankKey(value: report.value, scoreID: report.scoreID, higherIsBetter: higherIsBetter)
        if let current = state.allTime.key(of: report.player) {
            if key < current { state.allTime.set(player: report.player, key: key) }
        } else {
            state.allTime.set(player: report.player, key: key)
        }
        let windowed = WindowBoard.Report(value: report.value, scoreID: report.scoreID, earnedAt: report.earnedAt)
        state.today.add(windowed, player: report.player)
        state.week.add(windowed, player: report.player)
    }
}
