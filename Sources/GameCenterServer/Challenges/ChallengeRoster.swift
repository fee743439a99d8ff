import GameCenterStorage
import Synchronization

/// Which players are in running challenges, on which boards, as this node knows it: a score report asks storage for
/// the reporter's challenges only when the roster says they may have one, so the reports of players in no challenge
/// (nearly all) cost no statement more.
///
/// Joins on this node enter at once; the clock (``ChallengeClock``) reads every node's recent joins each tick (with
/// ten seconds of overlap, for clocks that differ and commits that lag), so a join on another node is known within a
/// tick. Entries leave when their challenge's end passes. A player who left stays until then: storage answers that
/// they count in nothing.
final class ChallengeRoster: Sendable {
    private struct Key: Hashable {
        var playerID: String
        var bundleID: String
        var environment: String
        var category: String
    }

    private struct State {
        /// The latest end of the running challenges of each player on each board.
        var ends: [Key: Int64] = [:]
        /// Joins at or after this instant are still to be read (0: every join, at start).
        var readSince: Int64 = 0
    }

    /// How far back each read reaches before the last one: nodes' clocks and commits differ by less.
    static let overlapMillis: Int64 = 10_000

    private let state = Mutex(State())

    /// Adds players who joined (here or on another node).
    func add(_ joins: [ChallengeJoin]) {
        state.withLock { state in
            for join in joins {
                let key = Key(playerID: join.playerID, bundleID: join.bundleID, environment: join.environment, category: join.category)
                state.ends[key] = max(state.ends[key] ?? .min, join.endsAt)
            }
        }
    }

    /// Whether `playerID` may be in a running challenge on one of `categories` of the game at `now`.
    func mayCount(playerID: String, bundleID: String, environment: String, categories: [String], now: Int64) -> Bool {
        state.withLock { state in
            categories.contains { category in
                (state.ends[Key(playerID: playerID, bundleID: bundleID, environment: environment, category: category)] ?? .min) > now
            }
        }
    }

    /// Reads the joins since the last read (all of them the first time) and forgets the challenges that ended.
    func follow(_ database: Database, now: Int64) async throws {
        let since = state.withLock { $0.readSince }
        let joins = try await database.read { try await $0.challengeJoins(since: since) }
        add(joins)
        state.withLock { state in
            state.readSince = max(state.readSince, now - Self.overlapMillis)
            state.ends = state.ends.filter { $0.value > now }
        }
    }
}
