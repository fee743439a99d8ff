import GameCenterProtocol
import DequeModule
import JMESPath

/// The rule-based queues of the games whose matchmaking this node owns: the requests waiting in each, and when each
/// is due a pass. Pure: passes (``RuleMatcher``) run on a snapshot outside the matchmaker's lock, and their matches
/// come back through ``apply(_:key:)``.
struct RuleQueues: Sendable {
    /// A queue of one game and environment; hosted and relayed requests never mix.
    struct Key: Hashable, Sendable {
        var game: String
        var queue: String
        var hosted: Bool
    }

    /// What one due queue's pass needs.
    struct DuePass: Sendable {
        var key: Key
        var matcher: RuleMatcher
        /// The experiment rule set, run on the same requests: its matches are counted, never made.
        var experiment: RuleMatcher?
        var requests: [RuleRequest]
    }

    private struct Queue: Sendable {
        var matcher: RuleMatcher {
            didSet { ageSensitive = Self.readsAge(matcher, experiment) }
        }
        var experiment: RuleMatcher? {
            didSet { ageSensitive = Self.readsAge(matcher, experiment) }
        }
        var waiting: [TicketID: (request: RuleRequest, playerID: String)] = [:]
        /// Requests arrived or left, or a match could not be made, since the last pass.
        var changed = true
        /// When the last pass began (nil: none yet).
        var lastPass: Int64?
        /// When requests arrived, for the activity count (trimmed to ``RuleQueues/activityWindowMillis``).
        var arrivals = Deque<Int64>()
        /// When requests were matched and how long each had waited (ms), for the wait estimate (trimmed to
        /// ``RuleQueues/estimateWindowMillis`` and ``RuleQueues/estimateSamplesKept``).
        var waits = Deque<(matchedAt: Int64, waited: Int64)>()

        /// The rules read `secondsInQueue`: waiting alone may make a match, so the queue runs a pass every second.
        /// Kept with the rule sets, not found again on every tick.
        private(set) var ageSensitive: Bool

        init(matcher: RuleMatcher, experiment: RuleMatcher?) {
            self.matcher = matcher
            self.experiment = experiment
            ageSensitive = Self.readsAge(matcher, experiment)
        }

        static func readsAge(_ matcher: RuleMatcher, _ experiment: RuleMatcher?) -> Bool {
            (matcher.ruleSet.rules + (experiment?.ruleSet.rules ?? [])).contains { $0.expression.source.contains("secondsInQueue") }
        }
    }

    /// A request that left its queue, for the queue's metrics (``takeDepartures()``).
    struct Departure: Sendable, Equatable {
        var key: Key
        var result: QueueMetricsBucket.Result
        /// When it entered the queue, on the server's clock.
        var arrival: Int64
        var players: Int
        /// When it left, on the server's clock; nil when it was taken out (the matchmaker notes the time).
        var leftAt: Int64?
    }

    private var queues: [Key: Queue] = [:]
    private var keyOfTicket: [TicketID: Key] = [:]
    private var matchesMade: UInt64 = 0
    /// Requests that left since the last ``takeDepartures()``.
    private var departures: [Departure] = []

    /// How long after a change a queue's pass runs, so that requests arriving together are matched together.
    static let passDelayMillis: Int64 = 20
    /// How often a queue whose rules depend on time runs a pass while requests wait.
    static let agedPassMillis: Int64 = 1000
    /// How far back ``activity(game:queue:now:)`` counts arrivals (Apple's `queryQueueActivity`: the last 60 s).
    static let activityWindowMillis: Int64 = 60_000
    /// How far back the wait estimate looks at matched requests: 15 minutes.
    static let estimateWindowMillis: Int64 = 15 * 60_000
    /// The most matched requests a queue keeps for its wait estimate.
    static let estimateSamplesKept = 4096

    /// Requests waiting in all queues.
    var waitingCount: Int { keyOfTicket.count }

    /// Requests waiting in the queue `key`.
    func waitingCount(in key: Key) -> Int { queues[key]?.waiting.count ?? 0 }

    /// Whether `ticket` waits in a rule-based queue.
    func contains(_ ticket: TicketID) -> Bool { keyOfTicket[ticket] != nil }

    /// The waiting request `ticket`.
    func request(_ ticket: TicketID) -> RuleRequest? {
        keyOfTicket[ticket].flatMap { queues[$0]?.waiting[ticket]?.request }
    }

    /// Puts a request in its queue; the queue takes the rule sets given (a reloaded manifest changes them).
    mutating func enqueue(
        _ request: RuleRequest, playerID: String, key: Key, ruleSet: MatchmakingRuleSet, experiment: MatchmakingRuleSet?, now: Int64
    ) {
        precondition(keyOfTicket[request.ticket] == nil, "ticket \(request.ticket) already waits")
        var queue = queues[key] ?? Queue(matcher: RuleMatcher(ruleSet: ruleSet), experiment: experiment.map(RuleMatcher.init))
        if queue.matcher.ruleSet != ruleSet { queue.matcher = RuleMatcher(ruleSet: ruleSet) }
        if queue.experiment?.ruleSet != experiment { queue.experiment = experiment.map(RuleMatcher.init) }
        queue.waiting[request.ticket] = (request, playerID)
        queue.changed = true
        queue.arrivals.append(now)
        while let first = queue.arrivals.first, first <= now - Self.activityWindowMillis { queue.arrivals.removeFirst() }
        queues[key] = queue
        keyOfTicket[request.ticket] = key
    }

    /// Puts `request` in the place of the waiting request with its ticket (a party lost a player); its queue runs
    /// again.
    mutating func replace(_ request: RuleRequest) {
        guard let key = keyOfTicket[request.ticket], let playerID = queues[key]?.waiting[request.ticket]?.playerID else { return }
        queues[key]?.waiting[request.ticket] = (request, playerID)
        queues[key]?.changed = true
    }

    /// Takes a request out of its queue; false when it was not waiting in one.
    mutating func remove(_ ticket: TicketID) -> Bool {
        guard let key = keyOfTicket.removeValue(forKey: ticket) else { return false }
        if let request = queues[key]?.waiting.removeValue(forKey: ticket)?.request {
            departures.append(Departure(key: key, result: .canceled, arrival: request.arrival, players: request.playerCount, leftAt: nil))
        }
        queues[key]?.changed = true
        return true
    }

    /// The requests that left their queues since the last call, oldest first.
    mutating func takeDepartures() -> [Departure] {
        defer { departures = [] }
        return departures
    }

    /// The queues due a pass at `now`, each with a snapshot of its requests; they are marked as passed.
    mutating func takeDuePasses(now: Int64) -> [DuePass] {
        var due: [DuePass] = []
        for (key, queue) in queues {
            guard !queue.waiting.isEmpty else {
                if queue.arrivals.last.map({ $0 <= now - Self.activityWindowMillis }) ?? true { queues[key] = nil }
                continue
            }
            let sinceLast = queue.lastPass.map { now - $0 } ?? .max
            let changedAndSettled = queue.changed && sinceLast >= Self.passDelayMillis
            let aged = queue.ageSensitive && sinceLast >= Self.agedPassMillis
            guard changedAndSettled || aged else { continue }
            due.append(DuePass(key: key, matcher: queue.matcher, experiment: queue.experiment, requests: queue.waiting.values.map(\.request)))
            queues[key]?.changed = false
            queues[key]?.lastPass = now
        }
        return due.sorted { ($0.key.game, $0.key.queue, $0.key.hosted ? 1 : 0) < ($1.key.game, $1.key.queue, $1.key.hosted ? 1 : 0) }
    }

    /// What explaining why `ticket` waits needs, taken under the matchmaker's lock and evaluated outside it
    /// (``RuleMatcher/explain(_:among:now:estimate:)``): its queue's rules and waiting requests, and the queue's wait
    /// estimate at `now` (on the clock of the requests' arrivals).
    func explanationInput(_ ticket: TicketID, now: Int64) -> (matcher: RuleMatcher, requests: [RuleRequest], estimate: (seconds: Double?, samples: Int))? {
        guard let key = keyOfTicket[ticket], let queue = queues[key] else { return nil }
        let waits = queue.waits.filter { $0.matchedAt > now - Self.estimateWindowMillis }.map(\.waited).sorted()
        let median: Double? =
            waits.count < MatchRequestExplanation.estimateMinimumSamples
            ? nil
            : waits.count % 2 == 1
                ? Double(waits[waits.count / 2]) / 1000 : Double(waits[waits.count / 2 - 1] + waits[waits.count / 2]) / 2000
        return (queue.matcher, queue.waiting.values.map(\.request), (median, waits.count))
    }

    /// Starts a pass's matches whose requests all still wait (a request may have left while the pass ran; its match is
    /// dropped and the queue runs again); `now` is when on the clock of the requests' arrivals (the server's clock,
    /// which `--test-clock` moves), for the wait estimate. Also answers how long each request it matched waited (ms).
    mutating func apply(_ matches: [RuleMatch], key: Key, now: Int64) -> (outcome: MatchmakingOutcome, waits: [Int64]) {
        var outcome = MatchmakingOutcome()
        var waits: [Int64] = []
        guard var queue = queues[key] else { return (outcome, waits) }
        for match in matches {
            guard match.tickets.allSatisfy({ queue.waiting[$0] != nil }) else {
                queue.changed = true
                continue
            }
            var members: [LobbyMember] = []
            var properties: [String: [String: JSONValue]] = [:]
            for ticket in match.tickets {
                let (request, playerID) = queue.waiting.removeValue(forKey: ticket)!
                keyOfTicket[ticket] = nil
                waits.append(max(0, now - request.arrival))
                departures.append(Departure(key: key, result: .matched, arrival: request.arrival, players: request.playerCount, leftAt: now))
                queue.waits.append((now, waits.last!))
                members.append(.ticket(ticket, playerID: playerID))
                for player in request.players {
                    var own = player.properties
                    own["gc"] = match.teams[player.playerID].map { ["team": .string($0)] } ?? [:]
                    properties[player.playerID] = own
                }
            }
            matchesMade += 1
            outcome.started.append(
                StartedMatch(
                    lobby: LobbyID(1 << 62 | matchesMade), key: QueueKey(game: key.game, hosted: key.hosted, playerGroup: 0), members: members,
                    mask: 0, reason: .full, playerProperties: properties))
        }
        while let first = queue.waits.first, first.matchedAt <= now - Self.estimateWindowMillis || queue.waits.count > Self.estimateSamplesKept {
            queue.waits.removeFirst()
        }
        queues[key] = queue
        return (outcome, waits)
    }

    /// Requests that entered queue `queue` of `game` in the last 60 s (Apple's `queryQueueActivity`).
    func activity(game: String, queue: String, now: Int64) -> Int {
        queues.filter { $0.key.game == game && $0.key.queue == queue }.values
            .map { $0.arrivals.reversed().prefix { $0 > now - Self.activityWindowMillis }.count }
            .reduce(0, +)
    }
}
