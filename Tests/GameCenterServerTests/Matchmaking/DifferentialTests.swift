import Testing
@testable import GameCenterServer
import NetworkFaultProxy

/// Random operation sequences run against the real queue and the brute-force model in lockstep.
@Suite struct DifferentialTests {
    static let sequences = 1_000
    static let steps = 120

    @Test func randomSequencesMatchTheReferenceModel() {
        guard let coverage = Self.runSequences(Self.sequences, firstSeed: 0xC0FF_EE00, driver: RandomDriver()) else { return }
        print("differential coverage: \(coverage)")
        #expect(coverage.isBroad, "the random sequences no longer reach every kind of outcome: \(coverage)")
    }

    /// Everything under one key, so lone tickets pile up and invitation lobbies absorb several.
    @Test func randomSingleKeySequencesMatchTheReferenceModel() {
        let driver = RandomDriver(
            key: QueueKey(game: "chess", hosted: false, playerGroup: 0),
            mix: .init(enqueue: 33, remove: 25, invite: 15, inviteMore: 3, removeFirstJoiners: true))
        guard let coverage = Self.runSequences(Self.sequences / 2, firstSeed: 0x5EED_0000, driver: driver) else { return }
        print("single-key differential coverage: \(coverage)")
        #expect(coverage.absorbed >= 400 && coverage.absorbedSeveral >= 5, "too few absorptions: \(coverage)")
    }

    /// Runs `count` sequences with consecutive seeds; records the first divergence and returns nil then.
    static func runSequences(_ count: Int, firstSeed: UInt64, driver: RandomDriver) -> Coverage? {
        var coverage = Coverage()
        for sequence in 0..<count {
            let seed = firstSeed &+ UInt64(sequence)
            if let failure = run(seed: seed, steps: steps, driver: driver, coverage: &coverage) {
                Issue.record("seed \(seed): \(failure)")
                return nil
            }
        }
        return coverage
    }

    /// How often each kind of outcome occurred, so a generator change cannot silently narrow the test.
    struct Coverage: CustomStringConvertible {
        var joins = 0, opened = 0, errors = 0, failed = 0, dissolved = 0, requeued = 0
        /// Players invited into waiting lobbies, and such invitations refused (not the creator, no seat, already in).
        var invitedMore = 0, inviteMoreRefused = 0
        /// Lone tickets pulled into a newly opened invitation lobby; openings that pulled in several.
        var absorbed = 0, absorbedSeveral = 0
        var started: [StartReason: Int] = [:]

        mutating func count(_ result: Result<MatchmakingOutcome, MatchmakingError>, of operation: Operation) {
            if case .inviteMore(_, let players) = operation {
                if case .success = result { invitedMore += players.count } else { inviteMoreRefused += 1 }
            }
            guard case .success(let outcome) = result else { errors += 1; return }
            if case .openInvitationLobby = operation {
                absorbed += outcome.placements.count - 1
                if outcome.placements.count > 2 { absorbedSeveral += 1 }
            }
            joins += outcome.placements.filter { !$0.openedLobby }.count
            opened += outcome.placements.filter(\.openedLobby).count
            failed += outcome.failed.count
            dissolved += outcome.dissolved.count
            requeued += outcome.dissolved.reduce(0) { $0 + $1.requeued.count }
            for match in outcome.started { started[match.reason, default: 0] += 1 }
        }

        var isBroad: Bool {
            [joins, opened, errors, failed, dissolved, requeued].allSatisfy { $0 > 0 }
                && absorbed >= 300 && invitedMore >= 300 && inviteMoreRefused >= 100
                && [StartReason.full, .rolesComplete, .fillDeadline, .closed].allSatisfy { started[$0, default: 0] > 0 }
        }

        var description: String {
            "joins \(joins) invited more \(invitedMore) (\(inviteMoreRefused) refused) absorbed \(absorbed) (\(absorbedSeveral)× several) opened \(opened) errors \(errors) failed \(failed) dissolved \(dissolved) requeued \(requeued) started \(started)"
        }
    }

    /// Runs one sequence; returns a description of the first divergence.
    static func run(seed: UInt64, steps: Int, driver: RandomDriver, coverage: inout Coverage) -> String? {
        var rng = SplitMix64(seed: seed)
        var real = MatchmakingQueue()
        var model = ReferenceQueue()
        var driver = driver
        var now: Int64 = 0
        for step in 0..<steps {
            if Int.random(in: 0..<3, using: &rng) > 0 { now += Int64.random(in: 0...1_500, using: &rng) }  // equal ages happen
            let operation = driver.operation(model: model, now: &now, using: &rng)
            let realResult = operation.apply(to: &real, now: now)
            let modelResult = operation.apply(to: &model, now: now)
            coverage.count(realResult, of: operation)
            if realResult != modelResult {
                return "step \(step) \(operation): real \(realResult) model \(modelResult)"
            }
            if real.snapshots() != model.snapshots() {
                return "step \(step) \(operation): lobbies differ\nreal  \(real.snapshots())\nmodel \(model.snapshots())"
            }
            if real.waitingCount != model.waitingCount || real.nextDeadline != model.nextDeadline {
                return
                    "step \(step) \(operation): waiting \(real.waitingCount)/\(model.waitingCount) deadline \(String(describing: real.nextDeadline))/\(String(describing: model.nextDeadline))"
            }
            let game = ["chess", "go"].randomElement(using: &rng)!
            let group: UInt32? = ([nil, 0, 1, 7] as [UInt32?]).randomElement(using: &rng)!
            let since = now - Int64.random(in: 0...120_000, using: &rng)
            if real.activity(game: game, playerGroup: group, since: since) != model.activity(game: game, playerGroup: group, since: since) {
                return "step \(step): activity(\(game), \(String(describing: group)), \(since)) differs"
            }
        }
        return nil
    }
}

/// One operation of a random sequence, applicable to both the real queue and the model.
enum Operation: CustomStringConvertible {
    case enqueue(Ticket)
    case openInvitationLobby(Ticket, invited: [String], base: [String], open: Bool)
    case answer(LobbyID, String, Bool)
    case remove(TicketID)
    case removeInvited(LobbyID, String)
    case inviteMore(TicketID, [String])
    case tick

    var description: String {
        switch self {
        case .enqueue(let t):
            "enqueue(\(t.id) \(t.key.game)/\(t.key.hosted)/\(t.key.playerGroup) \(t.minPlayers)..\(t.maxPlayers) role \(t.playerAttributes) fill \(t.fillTime))"
        case .openInvitationLobby(let t, let invited, let base, let open):
            "invite(\(t.id) \(t.minPlayers)..\(t.maxPlayers) role \(t.playerAttributes) invited \(invited) base \(base) open \(open))"
        case .answer(let lobby, let player, let accepted): "answer(\(lobby), \(player), \(accepted))"
        case .remove(let ticket): "remove(\(ticket))"
        case .removeInvited(let lobby, let player): "removeInvited(\(lobby), \(player))"
        case .inviteMore(let ticket, let players): "inviteMore(\(ticket), \(players))"
        case .tick: "tick"
        }
    }

    func apply(to queue: inout MatchmakingQueue, now: Int64) -> Result<MatchmakingOutcome, MatchmakingError> {
        Result { () throws(MatchmakingError) in
            switch self {
            case .enqueue(let ticket): queue.enqueue(ticket, now: now)
            case .openInvitationLobby(let creator, let invited, let base, let open):
                queue.openInvitationLobby(creator: creator, invited: invited, baseMembers: base, openToAutoMatch: open, now: now)
            case .answer(let lobby, let player, let accepted): try queue.answer(lobby: lobby, player: player, accepted: accepted, now: now)
            case .remove(let ticket): try queue.remove(ticket: ticket, now: now)
            case .removeInvited(let lobby, let player): try queue.removeInvited(lobby: lobby, player: player, now: now)
            case .inviteMore(let ticket, let players): try queue.invite(players, by: ticket, now: now)
            case .tick: queue.tick(now: now)
            }
        }
    }

    func apply(to model: inout ReferenceQueue, now: Int64) -> Result<MatchmakingOutcome, MatchmakingError> {
        Result { () throws(MatchmakingError) in
            switch self {
            case .enqueue(let ticket): model.enqueue(ticket, now: now)
            case .openInvitationLobby(let creator, let invited, let base, let open):
                model.openInvitationLobby(creator: creator, invited: invited, baseMembers: base, openToAutoMatch: open, now: now)
            case .answer(let lobby, let player, let accepted): try model.answer(lobby: lobby, player: player, accepted: accepted, now: now)
            case .remove(let ticket): try model.remove(ticket: ticket, now: now)
            case .removeInvited(let lobby, let player): try model.removeInvited(lobby: lobby, player: player, now: now)
            case .inviteMore(let ticket, let players): try model.invite(players, by: ticket, now: now)
            case .tick: model.tick(now: now)
            }
        }
    }
}

/// Draws random operations from small value sets, aimed at the model's current state.
struct RandomDriver {
    /// Percentages of enqueues, removals of waiting tickets and invitation lobbies; answers,
    /// invalid calls and ticks share the rest as before.
    struct Mix {
        var enqueue = 45, remove = 15, invite = 7
        /// Invitations into waiting lobbies (taken from the ticks).
        var inviteMore = 5
        /// Half the removals take the oldest ticket of a lobby with several (leaving lone tickets behind).
        var removeFirstJoiners = false
    }

    /// The one key of every ticket, or nil for random keys.
    let key: QueueKey?
    let mix: Mix
    private var tickets = TicketFactory(idsOutOfOrder: true)
    private var nextInvitee = 1
    private var nextBase = 1

    init(key: QueueKey? = nil, mix: Mix = Mix()) {
        self.key = key
        self.mix = mix
    }

    static let ranges = [(2, 2), (2, 3), (2, 4), (3, 3), (3, 4), (4, 4), (2, 8), (4, 8), (2, 16)]
    static let roles: [UInt32] = [
        Role.fighter, Role.cleric, Role.wizard, Role.thief, 0xFFFF_0000, 0x0000_FFFF, 0xFFFF_FFFF, 0x0F00_0000,
    ]

    mutating func operation(model: ReferenceQueue, now: inout Int64, using rng: inout SplitMix64) -> Operation {
        let roll = Int.random(in: 0..<100, using: &rng)
        let waiting = model.lobbies.flatMap(\.tickets)
        let pending = model.lobbies.flatMap { lobby in lobby.invitations.filter { $0.answer == nil }.map { (lobby.id, $0.player) } }
        let accepted = model.lobbies.flatMap { lobby in
            lobby.members.compactMap { if case .invited(let player) = $0 { (lobby.id, player) } else { nil } }
        }
        let removed = mix.enqueue + mix.remove, invited = removed + 1 + mix.invite
        switch roll {
        case 0..<mix.enqueue:
            return .enqueue(randomTicket(key: key, using: &rng))
        case mix.enqueue..<removed where !waiting.isEmpty:
            let firstJoiners = model.lobbies.filter { $0.tickets.count > 1 }.map { $0.tickets[0] }
            let pool = mix.removeFirstJoiners && !firstJoiners.isEmpty && Bool.random(using: &rng) ? firstJoiners : waiting
            return .remove(pool.randomElement(using: &rng)!.ticket.id)
        case removed..<removed + 1:
            return .remove(TicketID(999_999))
        case removed + 1..<invited:
            // Half the invitation lobbies share the key of a ticket waiting alone, so they may absorb it.
            let lone = model.lobbies.filter { !$0.invitationLobby && $0.members.count == 1 }.map(\.tickets[0].ticket.key)
            let creator = randomTicket(key: Bool.random(using: &rng) ? lone.randomElement(using: &rng) : key, using: &rng)
            var invited = (0..<Int.random(in: 0...3, using: &rng)).map { _ in nextName(&nextInvitee, "i") }
            var base = (0..<Int.random(in: 0...2, using: &rng)).map { _ in nextName(&nextBase, "b") }
            while 1 + invited.count + base.count > creator.maxPlayers {
                if base.isEmpty { invited.removeLast() } else { base.removeLast() }
            }
            return .openInvitationLobby(creator, invited: invited, base: base, open: Bool.random(using: &rng))
        case invited..<invited + 12 where !pending.isEmpty:
            let (lobby, player) = pending.randomElement(using: &rng)!
            return .answer(lobby, player, Int.random(in: 0..<3, using: &rng) > 0)
        case invited + 12..<invited + 14:
            let lobby = model.lobbies.randomElement(using: &rng)?.id ?? LobbyID(999_999)
            return .answer(lobby, "i\(Int.random(in: 1...nextInvitee, using: &rng))", true)
        case invited + 14..<invited + 18 where !accepted.isEmpty:
            let (lobby, player) = accepted.randomElement(using: &rng)!
            return .removeInvited(lobby, player)
        case invited + 18..<invited + 19:
            return .removeInvited(LobbyID(Int.random(in: 1...3, using: &rng) == 1 ? 999_999 : 1), "nobody")
        case invited + 19..<invited + 19 + mix.inviteMore where !model.lobbies.isEmpty:
            return inviteMore(model: model, using: &rng)
        default:
            now += Int64.random(in: 0...6_000, using: &rng)
            return .tick
        }
    }

    /// Mostly a lobby's creator inviting new players (sometimes more than fit); now and then another ticket of
    /// the lobby, an unknown ticket, or a player already in the lobby or invited to it.
    private mutating func inviteMore(model: ReferenceQueue, using rng: inout SplitMix64) -> Operation {
        let lobby = model.lobbies.randomElement(using: &rng)!
        var players = (0..<Int.random(in: 1...3, using: &rng)).map { _ in nextName(&nextInvitee, "i") }
        switch Int.random(in: 0..<10, using: &rng) {
        case 0:
            return .inviteMore(lobby.tickets.randomElement(using: &rng)!.ticket.id, players)
        case 1:
            return .inviteMore(TicketID(999_999), players)
        case 2:
            let present = lobby.members.map(\.playerID) + lobby.invitations.map(\.player)
            players.insert(present.randomElement(using: &rng)!, at: Int.random(in: 0...players.count, using: &rng))
        default:
            break
        }
        return .inviteMore(lobby.creator, players)
    }

    /// A ticket with a random range, role and fill time, under `key` or a random one.
    private mutating func randomTicket(key: QueueKey? = nil, using rng: inout SplitMix64) -> Ticket {
        let (min, max) = Self.ranges.randomElement(using: &rng)!
        let role = Int.random(in: 0..<10, using: &rng) < 4 ? 0 : Self.roles.randomElement(using: &rng)!
        let group: UInt32 = [0, 1, 7].randomElement(using: &rng)!
        let hosted = Int.random(in: 0..<10, using: &rng) == 0
        let game = Int.random(in: 0..<4, using: &rng) == 0 ? "go" : "chess"
        return tickets.make(
            min: min, max: max, role: role, group: key?.playerGroup ?? group, hosted: key?.hosted ?? hosted,
            game: key?.game ?? game, fillTime: [0, 500, 2_000, 10_000].randomElement(using: &rng)!)
    }

    private func nextName(_ counter: inout Int, _ prefix: String) -> String {
        defer { counter += 1 }
        return "\(prefix)\(counter)"
    }
}
