import Foundation
import GameCenterProtocol

/// The transitions of ``TurnMatchState``, one function per command; each checks first and changes after.
extension TurnMatchState {
    mutating func applying(_ command: TurnCommand, now: Int64, limits: TurnBasedSettings) throws(APIError) -> [TurnNotice] {
        switch command {
        case .join(let player):
            return try join(player, now: now)
        case .endTurn(let player, let version, let order, let timeout, let size, let message, let outcomes):
            let seat = try inTurn(player, version: version, dataSize: size, limits: limits, closingTurn: true)
            try Self.check(message: message)
            let timeout = try Self.checkedTimeout(timeout)
            let order = try checkedOrder(order)
            if !outcomes.isEmpty {
                guard outcomes.count == seats.count, outcomes.allSatisfy(Self.isValidOutcome) else { throw .turnInvalidOutcomes(seats.count) }
                // A turn may settle the outcomes of seats that are done (GameKit lets it); the players still in play keep theirs.
                for index in seats.indices where seats[index].status == .done && outcomes[index] != 0 { seats[index].outcome = outcomes[index] }
            }
            matchDataSize = size
            self.message = message
            seats[seat].lastTurnAt = now
            return passTurn(from: seat, order: order, timeoutMillis: timeout, now: now, kind: .turnPassed)
        case .saveTurn(let player, let version, let size):
            let seat = try inTurn(player, version: version, dataSize: size, limits: limits, closingTurn: false)
            matchDataSize = size
            return [TurnNotice(kind: .turnSaved, recipients: members, actor: seat)]
        case .quitInTurn(let player, let version, let outcome, let order, let timeout, let size, let message):
            let seat = try inTurn(player, version: version, dataSize: size, limits: limits, closingTurn: true)
            try Self.check(message: message)
            try Self.checkQuitOutcome(outcome)
            let timeout = try Self.checkedTimeout(timeout)
            let order = try checkedOrder(order)
            matchDataSize = size
            self.message = message
            seats[seat].lastTurnAt = now
            leave(seat, outcome: outcome)
            let notices = passTurn(from: seat, order: order, timeoutMillis: timeout, now: now, kind: .participantQuit)
            return notices + completeExchangesWithoutMissingReplies(now: now)
        case .endMatch(let player, let version, let size, let outcomes, let message):
            let seat = try inTurn(player, version: version, dataSize: size, limits: limits, closingTurn: true)
            try Self.check(message: message)
            guard outcomes.count == seats.count, outcomes.allSatisfy(Self.isValidOutcome) else { throw .turnInvalidOutcomes(seats.count) }
            for index in seats.indices where seats[index].isPlaying && outcomes[index] == 0 && seats[index].outcome == 0 {
                throw .turnOutcomeMissing(index)
            }
            for index in seats.indices where seats[index].playerID != nil && outcomes[index] != 0 { seats[index].outcome = outcomes[index] }
            matchDataSize = size
            self.message = message
            seats[seat].lastTurnAt = now
            finish()
            return [TurnNotice(kind: .matchEnded, recipients: members, actor: seat)]
        case .saveMerged(let player, let version, let size, let resolved):
            let seat = try inTurn(player, version: version, dataSize: size, limits: limits, closingTurn: false)
            guard !resolved.isEmpty, Set(resolved).count == resolved.count else {
                throw .turnInvalidRequest("resolvedExchangeIDs must name one or more distinct completed exchanges")
            }
            for id in resolved {
                guard let exchange = exchanges.first(where: { $0.id == id }) else { throw .turnNoSuchExchange(id) }
                guard exchange.status == .complete else { throw .turnExchangeNotComplete(id) }
            }
            exchanges.removeAll { resolved.contains($0.id) }
            matchDataSize = size
            return [TurnNotice(kind: .exchangesMerged, recipients: members, actor: seat)]
        case .accept(let player):
            let seat = try visibleSeat(of: player)
            guard seats[seat].status == .invited else { throw .turnNotInvited }
            seats[seat].status = .active
            if current == seat, turnTimeoutMillis > 0 { turnDeadline = now + turnTimeoutMillis }
            return [TurnNotice(kind: .accepted, recipients: members, actor: seat)]
        case .decline(let player):
            let seat = try visibleSeat(of: player)
            guard seats[seat].status == .invited else { throw .turnNotInvited }
            let told = members
            // The seat goes back to auto-match: somebody else may take it.
            seats[seat] = Seat(playerID: nil, status: .matching)
            if current == seat {
                status = .matching
                turnDeadline = nil
            }
            return [TurnNotice(kind: .declined, recipients: told, actor: seat)]
        case .quitOutOfTurn(let player, let outcome):
            let seat = try visibleSeat(of: player)
            guard status != .ended, seats[seat].status == .active else { throw .turnCannotQuit }
            guard current != seat else { throw .turnQuitInTurnInstead }
            try Self.checkQuitOutcome(outcome)
            leave(seat, outcome: outcome)
            return [TurnNotice(kind: .participantQuit, recipients: members, actor: seat)] + completeExchangesWithoutMissingReplies(now: now)
        case .remove(let player):
            let seat = try visibleSeat(of: player)
            guard status == .ended || seats[seat].status == .done else { throw .turnStillPlaying }
            seats[seat].removed = true
            return [TurnNotice(kind: .removed, recipients: [player], actor: seat)]
        case .remind(let player, let recipients, let message):
            let seat = try visibleSeat(of: player)
            guard status != .ended else { throw .turnMatchEnded }
            try Self.check(message: message)
            let recipients = try checkedRecipients(recipients, sender: seat, mustBeActive: false)
            if let last = seats[seat].lastReminderAt, now - last < TurnBasedSettings.reminderIntervalMillis {
                throw .turnReminderTooSoon(retryAfterMillis: TurnBasedSettings.reminderIntervalMillis - (now - last))
            }
            seats[seat].lastReminderAt = now
            return [TurnNotice(kind: .reminder, recipients: recipients.compactMap { seats[$0].playerID }, actor: seat, message: message)]
        case .sendExchange(let player, let recipients, let data, let message, let timeout):
            let seat = try visibleSeat(of: player)
            guard status != .ended else { throw .turnMatchEnded }
            guard seats[seat].status == .active else { throw .turnCannotAct }
            try Self.check(message: message)
            guard data.count <= limits.exchangeDataBytes else { throw .turnDataTooLarge(data.count, limit: limits.exchangeDataBytes, what: "exchange data") }
            let timeout = try Self.checkedTimeout(timeout)
            let recipients = try checkedRecipients(recipients, sender: seat, mustBeActive: true)
            guard exchanges.count(where: { $0.sender == seat && $0.status == .active }) < limits.exchangesPerPlayer else {
                throw .turnTooManyExchanges(limits.exchangesPerPlayer)
            }
            let exchange = Exchange(
                id: "ex\(nextExchangeNumber)", sender: seat, recipients: recipients, data: data, message: message, sentAt: now,
                timeoutAt: timeout > 0 ? now + timeout : nil, status: .active)
            nextExchangeNumber += 1
            exchanges.append(exchange)
            return [TurnNotice(kind: .exchangeRequest, recipients: recipients.compactMap { seats[$0].playerID }, actor: seat, exchange: exchange)]
        case .reply(let player, let id, let data, let message):
            let seat = try visibleSeat(of: player)
            try Self.check(message: message)
            guard let index = exchanges.firstIndex(where: { $0.id == id }) else { throw .turnNoSuchExchange(id) }
            guard exchanges[index].status == .active else { throw .turnExchangeNotActive(id) }
            guard exchanges[index].recipients.contains(seat), !exchanges[index].replies.contains(where: { $0.recipient == seat }) else {
                throw .turnNotARecipient(id)
            }
            guard data.count <= limits.exchangeDataBytes else { throw .turnDataTooLarge(data.count, limit: limits.exchangeDataBytes, what: "a reply") }
            exchanges[index].replies.append(Exchange.Reply(recipient: seat, data: data, message: message, repliedAt: now))
            return completeExchangesWithoutMissingReplies(now: now)
        case .cancel(let player, let id, let message):
            let seat = try visibleSeat(of: player)
            try Self.check(message: message)
            guard let index = exchanges.firstIndex(where: { $0.id == id }) else { throw .turnNoSuchExchange(id) }
            guard exchanges[index].sender == seat else { throw .turnNotTheSender(id) }
            guard exchanges[index].status == .active else { throw .turnExchangeNotActive(id) }
            var canceled = exchanges.remove(at: index)
            canceled.status = .canceled
            canceled.completedAt = now
            return [
                TurnNotice(
                    kind: .exchangeCancelled, recipients: canceled.recipients.compactMap { seats[$0].playerID }, actor: seat, exchange: canceled,
                    message: message)
            ]
        case .expire:
            return expire(now: now)
        case .arbitrate(let version, let outcomes, let message):
            guard status != .ended else { throw .turnMatchEnded }
            guard version == self.version else { throw .turnStaleVersion(read: version, stored: self.version) }
            try Self.check(message: message)
            guard outcomes.count == seats.count, outcomes.allSatisfy(Self.isValidOutcome) else { throw .turnInvalidOutcomes(seats.count) }
            for index in seats.indices where seats[index].isPlaying && outcomes[index] == 0 && seats[index].outcome == 0 {
                throw .turnOutcomeMissing(index)
            }
            for index in seats.indices where seats[index].playerID != nil && outcomes[index] != 0 { seats[index].outcome = outcomes[index] }
            if let message { self.message = message }
            finish()
            return [TurnNotice(kind: .matchEnded, recipients: members, actor: nil)]
        }
    }

    // MARK: The turn

    /// The seat of `player` when it is their turn in an open match, `version` is the stored one and `dataSize` fits.
    private func inTurn(_ player: String, version: Int64, dataSize: Int, limits: TurnBasedSettings, closingTurn: Bool) throws(APIError) -> Int {
        let seat = try visibleSeat(of: player)
        guard status != .ended else { throw .turnMatchEnded }
        guard current == seat else { throw .turnNotYourTurn }
        guard seats[seat].status == .active else { throw .turnAcceptFirst }
        guard version == self.version else { throw .turnStaleVersion(read: version, stored: self.version) }
        guard dataSize <= limits.matchDataBytes else { throw .turnDataTooLarge(dataSize, limit: limits.matchDataBytes, what: "match data") }
        if closingTurn, let unmerged = exchanges.first(where: { $0.status == .complete }) { throw .turnExchangesNotMerged(unmerged.id) }
        return seat
    }

    /// Gives the turn to the first seat of `order` that can take it; when none can, to the next seat after `from`
    /// that can; when none at all, the match ends. Invitations go out with the first turn that passes.
    private mutating func passTurn(from seat: Int, order: [Int], timeoutMillis: Int64, now: Int64, kind: TurnBasedEventInfo.Kind) -> [TurnNotice] {
        var notices: [TurnNotice] = []
        if !invitationsSent {
            invitationsSent = true
            let invitees = seats.compactMap { $0.status == .invited ? $0.playerID : nil }
            if !invitees.isEmpty { notices.append(TurnNotice(kind: .invited, recipients: invitees, actor: seat, message: inviteMessage)) }
        }
        turnTimeoutMillis = timeoutMillis
        var candidates = order.filter { seats[$0].canTakeTurn }
        if candidates.isEmpty {
            candidates = (1...seats.count).map { (seat + $0) % seats.count }.filter { seats[$0].canTakeTurn }
        }
        guard let first = candidates.first else {
            finish()
            return notices + [TurnNotice(kind: .matchEnded, recipients: members, actor: seat)]
        }
        giveTurn(to: first, then: Array(candidates.dropFirst()), now: now)
        return notices + [TurnNotice(kind: kind, recipients: members, actor: seat)]
    }

    private mutating func giveTurn(to seat: Int, then order: [Int], now: Int64) {
        current = seat
        nextOrder = order
        let waitsForAutoMatch = seats[seat].playerID == nil
        status = waitsForAutoMatch ? .matching : .open
        turnDeadline = !waitsForAutoMatch && turnTimeoutMillis > 0 ? now + turnTimeoutMillis : nil
    }

    /// The seat leaves play with `outcome`; exchanges it started are canceled.
    private mutating func leave(_ seat: Int, outcome: Int) {
        seats[seat].status = .done
        seats[seat].outcome = outcome
        exchanges.removeAll { $0.sender == seat && $0.status == .active }
    }

    /// Ends the match: every player still in play is done, active exchanges are dropped, nobody has the turn.
    mutating func finish() {
        status = .ended
        current = nil
        turnDeadline = nil
        nextOrder = []
        // Invitees who were never told keep nothing of a match that ended before its first turn passed.
        for index in seats.indices where seats[index].status == .invited && !invitationsSent { seats[index] = Seat(playerID: nil, status: .matching) }
        for index in seats.indices where seats[index].playerID != nil && seats[index].status != .done { seats[index].status = .done }
        exchanges.removeAll { $0.status == .active }
    }

    // MARK: Joining

    private mutating func join(_ player: String, now: Int64) throws(APIError) -> [TurnNotice] {
        guard status != .ended else { throw .turnMatchEnded }
        guard seatIndex(of: player) == nil else { throw .turnAlreadyInMatch }
        let open = seats.indices.filter { seats[$0].playerID == nil && seats[$0].status == .matching }
        // The seat whose turn it is first: the match is waiting for it.
        guard let seat = open.first(where: { $0 == current }) ?? open.first else { throw .turnNoOpenSeat }
        seats[seat] = Seat(playerID: player, status: .active)
        if current == seat {
            status = .open
            if turnTimeoutMillis > 0 { turnDeadline = now + turnTimeoutMillis }
        }
        return [TurnNotice(kind: .joined, recipients: members, actor: seat)]
    }

    // MARK: Exchanges and the clock

    /// Completes every active exchange that waits for no reply any more (every recipient replied or left play).
    private mutating func completeExchangesWithoutMissingReplies(now: Int64) -> [TurnNotice] {
        var notices: [TurnNotice] = []
        for index in exchanges.indices where exchanges[index].status == .active {
            let exchange = exchanges[index]
            let waiting = exchange.recipients.filter { recipient in
                seats[recipient].status == .active && !exchange.replies.contains { $0.recipient == recipient }
            }
            guard waiting.isEmpty else { continue }
            notices.append(complete(index, now: now))
        }
        return notices
    }

    /// Marks exchange `index` complete; its sender and the current participant (who merges it) are told.
    private mutating func complete(_ index: Int, now: Int64) -> TurnNotice {
        exchanges[index].status = .complete
        exchanges[index].completedAt = now
        let exchange = exchanges[index]
        var told = [exchange.sender] + [current].compactMap { $0 }
        told = told.filter { seats[$0].playerID != nil }
        var recipients: [String] = []
        for seat in told { if let player = seats[seat].playerID, !recipients.contains(player) { recipients.append(player) } }
        return TurnNotice(kind: .exchangeCompleted, recipients: recipients, actor: nil, exchange: exchange)
    }

    /// What the server's clock changes at `now`: exchanges past their timeout complete with the replies they have, and
    /// a turn past its timeout passes on, the seat that let it lapse done with `timeExpired`.
    private mutating func expire(now: Int64) -> [TurnNotice] {
        guard status != .ended else { return [] }
        var notices: [TurnNotice] = []
        for index in exchanges.indices where exchanges[index].status == .active {
            if let timeout = exchanges[index].timeoutAt, timeout <= now { notices.append(complete(index, now: now)) }
        }
        if let deadline = turnDeadline, deadline <= now, let seat = current {
            leave(seat, outcome: Self.outcomeTimeExpired)
            notices += passTurn(from: seat, order: nextOrder, timeoutMillis: turnTimeoutMillis, now: now, kind: .timedOut)
            notices += completeExchangesWithoutMissingReplies(now: now)
        }
        return notices
    }

    // MARK: Checks

    /// The seat of `player`, who must see the match.
    private func visibleSeat(of player: String) throws(APIError) -> Int {
        guard isVisible(to: player), let seat = seatIndex(of: player) else { throw .turnNoSuchMatch }
        return seat
    }

    /// The next participants: valid, distinct seat indexes.
    private func checkedOrder(_ order: [Int]) throws(APIError) -> [Int] {
        guard !order.isEmpty else { throw .turnInvalidParticipant("nextParticipants must name at least one participant") }
        guard Set(order).count == order.count else { throw .turnInvalidParticipant("nextParticipants names a participant twice") }
        for index in order where !seats.indices.contains(index) {
            throw .turnInvalidParticipant("participant \(index) does not exist; this match has \(seats.count) (0 to \(seats.count - 1))")
        }
        return order
    }

    /// Recipients of an exchange or reminder: valid, distinct seats of other players (active ones, for exchanges).
    private func checkedRecipients(_ recipients: [Int], sender: Int, mustBeActive: Bool) throws(APIError) -> [Int] {
        guard !recipients.isEmpty, Set(recipients).count == recipients.count else {
            throw .turnInvalidParticipant("name one or more distinct participants")
        }
        for index in recipients {
            guard seats.indices.contains(index) else {
                throw .turnInvalidParticipant("participant \(index) does not exist; this match has \(seats.count) (0 to \(seats.count - 1))")
            }
            guard index != sender else { throw .turnInvalidParticipant("a player cannot name themselves") }
            guard seats[index].playerID != nil, !mustBeActive || seats[index].status == .active else {
                throw .turnInvalidParticipant("participant \(index) is not an active player")
            }
        }
        return recipients
    }

    static func checkedTimeout(_ millis: Int64) throws(APIError) -> Int64 {
        guard (0...TurnBasedSettings.maximumTimeoutMillis).contains(millis) else {
            throw .turnInvalidRequest("a timeout must be 0 (none) to 90 days (7776000 seconds); got \(Double(millis) / 1000) seconds")
        }
        return millis
    }

    static func check(message: String?) throws(APIError) {
        if let message, message.count > TurnBasedSettings.maximumMessageLength {
            throw .turnInvalidRequest("a message has at most \(TurnBasedSettings.maximumMessageLength) characters; this one has \(message.count)")
        }
    }

    static func checkQuitOutcome(_ outcome: Int) throws(APIError) {
        guard outcome != 0, isValidOutcome(outcome) else {
            throw .turnInvalidRequest("a quitting participant's outcome must be 1 to 9 or a custom outcome (0xFF0000 to 0xFFFFFF); got \(outcome)")
        }
    }
}

extension APIError {
    static let turnNoSuchMatch = APIError(.turnNoSuchMatch, "no turn-based match with this id has you as a participant (or you removed it)")
    static let turnMatchEnded = APIError(.turnInvalidState, "the match has ended; only remove and rematch are left")
    static let turnNotYourTurn = APIError(.turnNotYourTurn, "it is not your turn; only the current participant can do this")
    static let turnAcceptFirst = APIError(.turnInvalidState, "accept the invitation before taking the turn")
    static let turnNotInvited = APIError(.turnInvalidState, "you are not an invitee waiting to answer in this match")
    static let turnCannotQuit = APIError(.turnInvalidState, "you can quit only a match that is still going and that you are playing in")
    static let turnQuitInTurnInstead = APIError(
        .turnInvalidState, "it is your turn: quit in turn (participantQuitInTurn), naming who plays next")
    static let turnStillPlaying = APIError(.turnInvalidState, "you are still playing this match: quit it or end it before removing it")
    static let turnCannotAct = APIError(.turnInvalidState, "only an active participant can start an exchange")
    static let turnAlreadyInMatch = APIError(.turnInvalidState, "you are already a participant of this match")
    static let turnNoOpenSeat = APIError(.turnInvalidState, "the match has no open seat left")

    static func turnStaleVersion(read: Int64, stored: Int64) -> APIError {
        APIError(
            .turnStaleVersion,
            "the match changed since you read it (you read version \(read), it is at \(stored)); load it again and retry. Nothing was overwritten")
    }
    static func turnDataTooLarge(_ size: Int, limit: Int, what: String) -> APIError {
        APIError(.turnMatchDataTooLarge, "\(what) is \(size) bytes; this game allows at most \(limit)")
    }
    static func turnExchangesNotMerged(_ id: String) -> APIError {
        APIError(.turnExchangesNotMerged, "exchange \(id) is complete: merge it with saveMergedMatchData before ending the turn or the match")
    }
    static func turnInvalidOutcomes(_ count: Int) -> APIError {
        APIError(.turnInvalidRequest, "outcomes must give all \(count) participants an outcome of 0 to 9 or a custom one (0xFF0000 to 0xFFFFFF)")
    }
    static func turnOutcomeMissing(_ index: Int) -> APIError {
        APIError(.turnInvalidRequest, "participant \(index) is still playing and has no outcome; set every participant's matchOutcome first")
    }
    static func turnInvalidRequest(_ message: String) -> APIError { APIError(.turnInvalidRequest, message) }
    static func turnInvalidParticipant(_ message: String) -> APIError { APIError(.turnInvalidParticipant, message) }
    static func turnNoSuchExchange(_ id: String) -> APIError {
        let shown = id.count <= 64 ? id : String(id.prefix(64)) + "…"
        return APIError(.turnNoSuchExchange, "the match has no unresolved exchange '\(shown)'")
    }
    static func turnExchangeNotComplete(_ id: String) -> APIError {
        APIError(.turnInvalidState, "exchange \(id) is not complete yet: only completed exchanges can be resolved")
    }
    static func turnExchangeNotActive(_ id: String) -> APIError {
        APIError(.turnInvalidState, "exchange \(id) is no longer active: it completed or was canceled")
    }
    static func turnNotARecipient(_ id: String) -> APIError {
        APIError(.turnInvalidParticipant, "you are not a recipient of exchange \(id) waiting to reply")
    }
    static func turnNotTheSender(_ id: String) -> APIError {
        APIError(.turnInvalidParticipant, "only the sender of exchange \(id) can cancel it")
    }
    static func turnTooManyExchanges(_ limit: Int) -> APIError {
        APIError(.turnTooManyExchanges, "you already have \(limit) active exchanges in this match, this game's most; wait for one to complete")
    }
    static func turnTooManyMatches(_ limit: Int) -> APIError {
        APIError(.turnTooManyMatches, "you already have \(limit) open turn-based matches in this game, its most; finish or quit one first")
    }
    static func turnReminderTooSoon(retryAfterMillis: Int64) -> APIError {
        let seconds = Int((retryAfterMillis + 999) / 1000)
        return APIError(.turnReminderTooSoon, "you can remind the players of a match once a minute; try again in \(seconds) s", retryAfterSeconds: seconds)
    }
}
