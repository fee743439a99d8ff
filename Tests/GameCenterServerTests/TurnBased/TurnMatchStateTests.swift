import Foundation
import GameCenterProtocol
import NetworkFaultProxy
import Testing
@testable import GameCenterServer

/// The turn-based rules, without I/O: each rule of the issue and GameKit's documentation, then random operations that
/// must never strand a match.
struct TurnMatchStateTests {
    static let limits = TurnBasedSettings()
    static let hour: Int64 = 3_600_000

    /// A match of `players` seats: "a" created it; the others joined by auto-match in order.
    static func match(_ players: [String], now: Int64 = 0) throws -> TurnMatchState {
        var state = TurnMatchState(
            matchID: "t_1", bundleID: "com.example.turns", creator: players[0], seats: players.count, invitees: [], playerGroup: 0,
            inviteMessage: nil, now: now)
        for player in players.dropFirst() { _ = try state.apply(.join(player: player), now: now, limits: limits) }
        return state
    }

    static func code(_ body: () throws -> Void) -> WireErrorCode? {
        do {
            try body()
            return nil
        } catch let error as APIError {
            return error.code
        } catch {
            return nil
        }
    }

    @Test func theCreatorHasTheFirstTurnAndAutoMatchFillsTheSeatsInOrder() throws {
        var state = TurnMatchState(
            matchID: "t_1", bundleID: "b", creator: "a", seats: 3, invitees: [], playerGroup: 0, inviteMessage: nil, now: 0)
        #expect(state.current == 0 && state.status == .open && state.openSeats == 2)
        let notices = try state.apply(.join(player: "b"), now: 5, limits: Self.limits)
        #expect(state.seats.map(\.playerID) == ["a", "b", nil])
        #expect(notices.map(\.kind) == [.joined] && notices[0].recipients == ["a", "b"])
        #expect(Self.code { _ = try state.apply(.join(player: "b"), now: 6, limits: Self.limits) } == .turnInvalidState)
        #expect(state.version == 2)
    }

    @Test func endTurnPassesToTheFirstWhoCanTakeItAndTellsEveryone() throws {
        var state = try Self.match(["a", "b", "c"])
        let version = state.version
        let notices = try state.apply(
            .endTurn(player: "a", version: version, next: [1, 2], timeoutMillis: Self.hour, dataSize: 10, message: "your go", outcomes: []),
            now: 100, limits: Self.limits)
        #expect(state.current == 1 && state.turnDeadline == 100 + Self.hour && state.nextOrder == [2])
        #expect(state.seats[0].lastTurnAt == 100 && state.matchDataSize == 10 && state.message == "your go")
        #expect(notices.map(\.kind) == [.turnPassed] && Set(notices[0].recipients) == ["a", "b", "c"])
        #expect(state.version == version + 1)
    }

    @Test func onlyTheCurrentParticipantWritesAndAStaleVersionOverwritesNothing() throws {
        var state = try Self.match(["a", "b"])
        let before = state
        #expect(Self.code { _ = try state.apply(.saveTurn(player: "b", version: state.version, dataSize: 1), now: 1, limits: Self.limits) } == .turnNotYourTurn)
        #expect(
            Self.code { _ = try state.apply(.saveTurn(player: "a", version: state.version - 1, dataSize: 1), now: 1, limits: Self.limits) } == .turnStaleVersion
        )
        #expect(Self.code { _ = try state.apply(.saveTurn(player: "z", version: state.version, dataSize: 1), now: 1, limits: Self.limits) } == .turnNoSuchMatch)
        #expect(state == before, "a refused write changes nothing")
        let tooLarge = Self.limits.matchDataBytes + 1
        #expect(
            Self.code { _ = try state.apply(.saveTurn(player: "a", version: state.version, dataSize: tooLarge), now: 1, limits: Self.limits) }
                == .turnMatchDataTooLarge)
    }

    @Test func aTurnThatTimesOutPassesToTheNextAndMarksTheSeatTimeExpired() throws {
        var state = try Self.match(["a", "b", "c"])
        _ = try state.apply(
            .endTurn(player: "a", version: state.version, next: [1, 2, 0], timeoutMillis: Self.hour, dataSize: 0, message: nil, outcomes: []),
            now: 0, limits: Self.limits)
        #expect(try state.apply(.expire, now: Self.hour - 1, limits: Self.limits).isEmpty, "nothing is due before the deadline")
        let notices = try state.apply(.expire, now: Self.hour, limits: Self.limits)
        #expect(notices.map(\.kind) == [.timedOut])
        #expect(state.seats[1].status == .done && state.seats[1].outcome == TurnMatchState.outcomeTimeExpired)
        #expect(state.current == 2 && state.turnDeadline == 2 * Self.hour && state.nextOrder == [0])
    }

    @Test func invitationsGoOutWithTheFirstTurnAndADeclinedSeatIsMatchedAgain() throws {
        var state = TurnMatchState(
            matchID: "t_1", bundleID: "b", creator: "a", seats: 3, invitees: ["b"], playerGroup: 0, inviteMessage: "play?", now: 0)
        #expect(!state.isVisible(to: "b"), "the invitee hears of the match with the first turn")
        let notices = try state.apply(
            .endTurn(player: "a", version: state.version, next: [1], timeoutMillis: 0, dataSize: 0, message: nil, outcomes: []), now: 1,
            limits: Self.limits)
        #expect(notices.first == TurnNotice(kind: .invited, recipients: ["b"], actor: 0, message: "play?"))
        #expect(state.isVisible(to: "b") && state.current == 1)
        _ = try state.apply(.decline(player: "b"), now: 2, limits: Self.limits)
        #expect(state.seats[1].playerID == nil && state.seats[1].status == .matching && state.status == .matching)
        #expect(!state.isVisible(to: "b") && state.openSeats == 2)
        _ = try state.apply(.join(player: "c"), now: 3, limits: Self.limits)
        #expect(state.seats[1].playerID == "c" && state.current == 1 && state.status == .open, "the waiting seat is filled first")
    }

    @Test func anInviteeAcceptsBeforeTakingTheTurn() throws {
        var state = TurnMatchState(
            matchID: "t_1", bundleID: "b", creator: "a", seats: 2, invitees: ["b"], playerGroup: 0, inviteMessage: nil, now: 0)
        _ = try state.apply(
            .endTurn(player: "a", version: state.version, next: [1], timeoutMillis: 0, dataSize: 0, message: nil, outcomes: []), now: 1, limits: Self.limits)
        #expect(
            Self.code { _ = try state.apply(.saveTurn(player: "b", version: state.version, dataSize: 0), now: 2, limits: Self.limits) } == .turnInvalidState)
        _ = try state.apply(.accept(player: "b"), now: 2, limits: Self.limits)
        _ = try state.apply(.saveTurn(player: "b", version: state.version, dataSize: 0), now: 3, limits: Self.limits)
        #expect(Self.code { _ = try state.apply(.accept(player: "b"), now: 4, limits: Self.limits) } == .turnInvalidState)
    }

    @Test func quittingInAndOutOfTurnAndTheLastPlayerStanding() throws {
        var state = try Self.match(["a", "b", "c"])
        #expect(Self.code { _ = try state.apply(.quitOutOfTurn(player: "a", outcome: 1), now: 1, limits: Self.limits) } == .turnInvalidState)
        _ = try state.apply(.quitOutOfTurn(player: "c", outcome: TurnMatchState.outcomeQuit), now: 1, limits: Self.limits)
        #expect(state.seats[2].status == .done)
        _ = try state.apply(
            .quitInTurn(player: "a", version: state.version, outcome: 1, next: [2, 1], timeoutMillis: 0, dataSize: 0, message: nil), now: 2,
            limits: Self.limits)
        #expect(state.current == 1, "a seat that is done is passed over")
        #expect(Self.code { _ = try state.apply(.remove(player: "b"), now: 3, limits: Self.limits) } == .turnInvalidState)
        _ = try state.apply(.remove(player: "a"), now: 3, limits: Self.limits)
        #expect(!state.isVisible(to: "a"))
        _ = try state.apply(.endMatch(player: "b", version: state.version, dataSize: 0, outcomes: [1, 2, 1], message: nil), now: 4, limits: Self.limits)
        #expect(state.status == .ended && state.current == nil && state.seats.allSatisfy { $0.status == .done })
        #expect(state.seats.map(\.outcome) == [1, 2, 1])
        _ = try state.apply(.remove(player: "b"), now: 5, limits: Self.limits)
        #expect(!state.isForgotten)
        _ = try state.apply(.remove(player: "c"), now: 5, limits: Self.limits)
        #expect(state.isForgotten)
    }

    @Test func endingTheMatchNeedsEveryPlayersOutcome() throws {
        var state = try Self.match(["a", "b"])
        #expect(
            Self.code {
                _ = try state.apply(.endMatch(player: "a", version: state.version, dataSize: 0, outcomes: [2, 0], message: nil), now: 1, limits: Self.limits)
            } == .turnInvalidRequest)
        #expect(
            Self.code {
                _ = try state.apply(.endMatch(player: "a", version: state.version, dataSize: 0, outcomes: [2], message: nil), now: 1, limits: Self.limits)
            } == .turnInvalidRequest)
        #expect(
            Self.code {
                _ = try state.apply(.endMatch(player: "a", version: state.version, dataSize: 0, outcomes: [2, 10], message: nil), now: 1, limits: Self.limits)
            } == .turnInvalidRequest)
        _ = try state.apply(.endMatch(player: "a", version: state.version, dataSize: 0, outcomes: [2, 0xFF_0003], message: nil), now: 1, limits: Self.limits)
        #expect(state.seats[1].outcome == 0xFF_0003)
    }

    @Test func exchangesCompleteWhenAllReplyAndMustBeMergedBeforeTheTurnEnds() throws {
        var state = try Self.match(["a", "b", "c"])
        let sent = try state.apply(
            .sendExchange(player: "b", recipients: [2], data: Data([1]), message: "trade?", timeoutMillis: Self.hour), now: 1, limits: Self.limits)
        #expect(sent.map(\.kind) == [.exchangeRequest] && sent[0].recipients == ["c"])
        let id = try #require(state.exchanges.first?.id)
        #expect(
            Self.code { _ = try state.apply(.reply(player: "a", exchangeID: id, data: Data(), message: nil), now: 2, limits: Self.limits) }
                == .turnInvalidParticipant)
        let replied = try state.apply(.reply(player: "c", exchangeID: id, data: Data([2]), message: "ok"), now: 2, limits: Self.limits)
        #expect(replied.map(\.kind) == [.exchangeCompleted] && Set(replied[0].recipients) == ["a", "b"], "the sender and the current player hear")
        #expect(
            Self.code {
                _ = try state.apply(
                    .endTurn(player: "a", version: state.version, next: [1], timeoutMillis: 0, dataSize: 0, message: nil, outcomes: []), now: 3,
                    limits: Self.limits)
            } == .turnExchangesNotMerged)
        _ = try state.apply(.saveMerged(player: "a", version: state.version, dataSize: 4, resolved: [id]), now: 3, limits: Self.limits)
        #expect(state.exchanges.isEmpty)
        _ = try state.apply(
            .endTurn(player: "a", version: state.version, next: [1], timeoutMillis: 0, dataSize: 4, message: nil, outcomes: []), now: 4, limits: Self.limits)
    }

    @Test func exchangesAreLimitedCancelledByTheirSenderAndCompletedByTheClock() throws {
        var limits = Self.limits
        limits.exchangesPerPlayer = 1
        var state = try Self.match(["a", "b"])
        _ = try state.apply(.sendExchange(player: "a", recipients: [1], data: Data(), message: nil, timeoutMillis: 10), now: 0, limits: limits)
        #expect(
            Self.code {
                _ = try state.apply(.sendExchange(player: "a", recipients: [1], data: Data(), message: nil, timeoutMillis: 10), now: 0, limits: limits)
            } == .turnTooManyExchanges)
        #expect(
            Self.code {
                _ = try state.apply(.sendExchange(player: "b", recipients: [1], data: Data(), message: nil, timeoutMillis: 10), now: 0, limits: limits)
            } == .turnInvalidParticipant)
        #expect(
            Self.code {
                _ = try state.apply(
                    .sendExchange(player: "b", recipients: [0], data: Data(count: limits.exchangeDataBytes + 1), message: nil, timeoutMillis: 10), now: 0,
                    limits: limits)
            } == .turnMatchDataTooLarge)
        #expect(state.deadline == 10)
        let expired = try state.apply(.expire, now: 10, limits: limits)
        #expect(expired.map(\.kind) == [.exchangeCompleted] && state.exchanges[0].status == .complete && state.exchanges[0].replies.isEmpty)
        _ = try state.apply(.sendExchange(player: "b", recipients: [0], data: Data(), message: nil, timeoutMillis: 0), now: 11, limits: limits)
        let id = state.exchanges[1].id
        #expect(Self.code { _ = try state.apply(.cancel(player: "a", exchangeID: id, message: nil), now: 12, limits: limits) } == .turnInvalidParticipant)
        let cancelled = try state.apply(.cancel(player: "b", exchangeID: id, message: "never mind"), now: 12, limits: limits)
        #expect(cancelled.map(\.kind) == [.exchangeCancelled] && cancelled[0].recipients == ["a"] && state.exchanges.count == 1)
    }

    @Test func remindersAreRateLimited() throws {
        var state = try Self.match(["a", "b"])
        _ = try state.apply(.remind(player: "b", recipients: [0], message: "your turn"), now: 0, limits: Self.limits)
        do {
            _ = try state.apply(.remind(player: "b", recipients: [0], message: nil), now: 30_000, limits: Self.limits)
            Issue.record("a second reminder within the minute went through")
        } catch {
            #expect(error.code == .turnReminderTooSoon && error.retryAfterSeconds == 30)
        }
        _ = try state.apply(.remind(player: "b", recipients: [0], message: nil), now: 60_000, limits: Self.limits)
    }

    @Test func refusedParametersSayWhatIsAllowed() throws {
        var state = try Self.match(["a", "b"])
        let end = { (next: [Int], timeout: Int64) in
            TurnCommand.endTurn(player: "a", version: state.version, next: next, timeoutMillis: timeout, dataSize: 0, message: nil, outcomes: [])
        }
        #expect(Self.code { _ = try state.apply(end([], 0), now: 0, limits: Self.limits) } == .turnInvalidParticipant)
        #expect(Self.code { _ = try state.apply(end([5], 0), now: 0, limits: Self.limits) } == .turnInvalidParticipant)
        #expect(Self.code { _ = try state.apply(end([1, 1], 0), now: 0, limits: Self.limits) } == .turnInvalidParticipant)
        #expect(Self.code { _ = try state.apply(end([1], TurnBasedSettings.maximumTimeoutMillis + 1), now: 0, limits: Self.limits) } == .turnInvalidRequest)
        let long = String(repeating: "x", count: TurnBasedSettings.maximumMessageLength + 1)
        #expect(Self.code { _ = try state.apply(.remind(player: "b", recipients: [0], message: long), now: 0, limits: Self.limits) } == .turnInvalidRequest)
    }

    // MARK: No state without an exit

    /// Random operations, quits and timeouts by random players: after every step, a match that is not over has a
    /// current seat that can take the turn and someone who can act, and every player can always leave — a player still
    /// playing can quit (in or out of turn) or end the match, a player done can remove it — until every player removed
    /// it and it is forgotten.
    @Test func randomOperationsNeverStrandAMatch() throws {
        var reached: [String: Int] = [:]
        for seed in 0..<400 as Range<UInt64> {
            var random = SplitMix64(seed: 0x7EB5_0000 &+ seed)
            let players = (0..<Int.random(in: 2...5, using: &random)).map { "p\($0)" }
            var state = TurnMatchState(
                matchID: "t", bundleID: "b", creator: players[0], seats: players.count + Int.random(in: 0...1, using: &random),
                invitees: Array(players.dropFirst().prefix(Int.random(in: 0...1, using: &random))), playerGroup: 0, inviteMessage: nil, now: 0)
            var now: Int64 = 0
            for _ in 0..<60 {
                now += Int64.random(in: 0...(2 * Self.hour), using: &random)
                let command = Self.randomCommand(state, players: players, using: &random)
                let before = state
                do {
                    _ = try state.apply(command, now: now, limits: Self.limits)
                    reached["\(command)".prefix { $0 != "(" }.description, default: 0] += 1
                } catch {
                    #expect(state == before, "seed \(seed): a refused \(command) changed the match")
                }
                try Self.checkHasAnExit(state, players: players, seed: seed, now: now)
            }
            // Everyone leaves: whatever the state, each player can get the match out of their list.
            for player in players where state.seatIndex(of: player) != nil {
                try Self.leave(&state, player: player, now: now + 1)
            }
            #expect(state.isForgotten, "seed \(seed): every player left, but the match is still kept: \(state)")
        }
        for kind in ["join", "endTurn", "quitInTurn", "quitOutOfTurn", "expire", "endMatch", "sendExchange", "reply", "saveMerged", "decline", "accept"] {
            #expect(reached[kind, default: 0] > 20, "the random operations rarely reach \(kind): \(reached)")
        }
    }

    static func checkHasAnExit(_ state: TurnMatchState, players: [String], seed: UInt64, now: Int64) throws {
        if state.status == .ended {
            #expect(state.current == nil && state.deadline == nil, "seed \(seed): an ended match still waits: \(state)")
            return
        }
        let current = try #require(state.current, "seed \(seed): an open match has nobody's turn: \(state)")
        #expect(state.seats[current].canTakeTurn, "seed \(seed): the turn is with a seat that cannot take it: \(state)")
        let someonePlays = state.seats.contains { $0.isPlaying }
        #expect(someonePlays, "seed \(seed): nobody can act in a match that is not over: \(state)")
        if state.seats[current].playerID != nil, state.seats[current].status == .active, state.turnTimeoutMillis > 0 {
            #expect(state.turnDeadline != nil, "seed \(seed): a timed turn has no deadline: \(state)")
        }
    }

    /// Takes `player` out of the match the way a game would, whatever its state; fails the test if no way works.
    static func leave(_ state: inout TurnMatchState, player: String, now: Int64) throws {
        guard let seat = state.seatIndex(of: player), state.isVisible(to: player) else { return }
        var attempts: [TurnCommand] = []
        if state.seats[seat].status == .invited { attempts.append(.decline(player: player)) }
        if state.current == seat, state.seats[seat].status == .active {
            let merged = state.exchanges.filter { $0.status == .complete }.map(\.id)
            if !merged.isEmpty { attempts.append(.saveMerged(player: player, version: state.version, dataSize: 0, resolved: merged)) }
        }
        for command in attempts { _ = try? state.apply(command, now: now, limits: limits) }
        guard let seat = state.seatIndex(of: player), state.isVisible(to: player) else { return }
        if state.status != .ended, state.seats[seat].status == .active {
            if state.current == seat {
                let next = Array(state.seats.indices)
                _ = try state.apply(
                    .quitInTurn(player: player, version: state.version, outcome: 1, next: next, timeoutMillis: 0, dataSize: 0, message: nil), now: now,
                    limits: limits)
            } else {
                _ = try state.apply(.quitOutOfTurn(player: player, outcome: 1), now: now, limits: limits)
            }
        }
        _ = try state.apply(.remove(player: player), now: now, limits: limits)
    }

    static func randomCommand(_ state: TurnMatchState, players: [String], using random: inout SplitMix64) -> TurnCommand {
        let player = players.randomElement(using: &random)!
        let seats = state.seats.indices
        let someSeats = { (random: inout SplitMix64) in Array(seats.shuffled(using: &random).prefix(Int.random(in: 1...seats.count, using: &random))) }
        let timeout = [0, hour, 3 * hour].randomElement(using: &random)!
        let version = Int.random(in: 0..<10, using: &random) == 0 ? state.version - 1 : state.version
        switch Int.random(in: 0..<17, using: &random) {
        case 0: return .join(player: player)
        case 1, 2: return .endTurn(player: player, version: version, next: someSeats(&random), timeoutMillis: timeout, dataSize: 5, message: nil, outcomes: [])
        case 3: return .saveTurn(player: player, version: version, dataSize: 3)
        case 4: return .quitInTurn(player: player, version: version, outcome: 1, next: someSeats(&random), timeoutMillis: timeout, dataSize: 1, message: nil)
        case 5: return .quitOutOfTurn(player: player, outcome: 3)
        case 6 where Int.random(in: 0..<3, using: &random) == 0:
            let holder = state.current.flatMap { state.seats[$0].playerID } ?? player
            return .endMatch(player: holder, version: version, dataSize: 1, outcomes: seats.map { _ in Int.random(in: 1...9, using: &random) }, message: nil)
        case 7:
            // Mostly a plausible exchange: from an active player to the other active players.
            let active = seats.filter { state.seats[$0].status == .active }
            guard let sender = active.randomElement(using: &random), let from = state.seats[sender].playerID, active.count > 1 else {
                return .sendExchange(player: player, recipients: someSeats(&random), data: Data([1]), message: nil, timeoutMillis: timeout)
            }
            return .sendExchange(player: from, recipients: active.filter { $0 != sender }, data: Data([1]), message: nil, timeoutMillis: timeout)
        case 8:
            // Mostly a recipient who still owes a reply.
            let owed = state.exchanges.filter { $0.status == .active }.flatMap { exchange in
                exchange.recipients.filter { recipient in !exchange.replies.contains { $0.recipient == recipient } }.map { (exchange.id, $0) }
            }
            if let (id, seat) = owed.randomElement(using: &random), let recipient = state.seats[seat].playerID {
                return .reply(player: recipient, exchangeID: id, data: Data([2]), message: nil)
            }
            return .reply(player: player, exchangeID: state.exchanges.randomElement(using: &random)?.id ?? "ex1", data: Data([2]), message: nil)
        case 9:
            let completed = state.exchanges.filter { $0.status == .complete }.map(\.id)
            let holder = state.current.flatMap { state.seats[$0].playerID } ?? player
            return .saveMerged(player: holder, version: version, dataSize: 2, resolved: completed)
        case 10: return .accept(player: player)
        case 11: return .decline(player: player)
        case 12: return .remove(player: player)
        case 15, 16:
            // Whoever holds the turn plays it (the match moves on rather than wait for the clock).
            let holder = state.current.flatMap { state.seats[$0].playerID } ?? player
            return .endTurn(player: holder, version: state.version, next: someSeats(&random), timeoutMillis: timeout, dataSize: 5, message: nil, outcomes: [])
        case 13: return .cancel(player: player, exchangeID: state.exchanges.randomElement(using: &random)?.id ?? "ex1", message: nil)
        default: return .expire
        }
    }
}
