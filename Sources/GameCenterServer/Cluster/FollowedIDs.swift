/// Which rows of a table that other nodes append to a node has seen: every id up to ``cursor``, except the ``holes``
/// (the reports of ``ScoreFollower``, the notices of ``PostgresEventBus`` when it polls).
///
/// Ids come from one database sequence, but transactions commit in any order: a row with a smaller id can become
/// visible after a larger one was read. So an id skipped over is a hole, looked for again until it appears or
/// ``holeLifetime`` has passed (its transaction rolled back, or the id was never used). Holes are bounded
/// (``maximumHoles``; the oldest go first).
struct FollowedIDs {
    /// How long a skipped id is looked for. A row's transaction commits within milliseconds of taking its id.
    static let holeLifetime: Duration = .seconds(10)
    /// Holes kept at most.
    static let maximumHoles = 10_000

    /// Every id up to this one was seen or is a hole.
    private(set) var cursor: Int64
    /// Ids skipped over, with when they were first missed.
    private(set) var holes: [Int64: ContinuousClock.Instant] = [:]

    /// Starts after `cursor`.
    init(after cursor: Int64) {
        self.cursor = cursor
    }

    /// Notes the ids read after ``cursor`` (in increasing order): the ids between them become holes, and the cursor
    /// moves to the last.
    mutating func read(_ ids: [Int64], at now: ContinuousClock.Instant) {
        for id in ids where id > cursor {
            // Only the newest holes can still fill: a gap larger than the bound keeps its top end.
            for missing in max(cursor + 1, id - Int64(Self.maximumHoles))..<id { holes[missing] = now }
            cursor = id
        }
        trim()
    }

    /// Notes holes that were filled.
    mutating func filled(_ ids: [Int64]) {
        for id in ids { holes[id] = nil }
    }

    /// Forgets holes missed for longer than ``holeLifetime``.
    mutating func expire(at now: ContinuousClock.Instant) {
        holes = holes.filter { now - $0.value < Self.holeLifetime }
    }

    private mutating func trim() {
        guard holes.count > Self.maximumHoles else { return }
        for id in holes.keys.sorted().prefix(holes.count - Self.maximumHoles) { holes[id] = nil }
    }
}
