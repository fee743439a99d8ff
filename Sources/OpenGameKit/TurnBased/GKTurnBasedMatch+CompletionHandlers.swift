import Foundation

/// GameKit's completion-handler forms of the turn-based calls: each calls back once, with nil or the error.
extension GKTurnBasedMatch {
    /// ``endTurn(withNextParticipants:turnTimeout:match:)`` with a completion handler.
    public func endTurn(
        withNextParticipants next: [GKTurnBasedParticipant], turnTimeout: TimeInterval, match data: Data,
        completionHandler: @escaping @Sendable ((any Error)?) -> Void
    ) {
        CompletionHandler.run(completionHandler) { try await self.endTurn(withNextParticipants: next, turnTimeout: turnTimeout, match: data) }
    }

    /// ``saveCurrentTurn(withMatch:)`` with a completion handler.
    public func saveCurrentTurn(withMatch data: Data, completionHandler: @escaping @Sendable ((any Error)?) -> Void) {
        CompletionHandler.run(completionHandler) { try await self.saveCurrentTurn(withMatch: data) }
    }

    /// ``participantQuitInTurn(with:nextParticipants:turnTimeout:match:)`` with a completion handler.
    public func participantQuitInTurn(
        with outcome: Outcome, nextParticipants: [GKTurnBasedParticipant], turnTimeout: TimeInterval, match data: Data,
        completionHandler: @escaping @Sendable ((any Error)?) -> Void
    ) {
        CompletionHandler.run(completionHandler) {
            try await self.participantQuitInTurn(with: outcome, nextParticipants: nextParticipants, turnTimeout: turnTimeout, match: data)
        }
    }

    /// ``participantQuitOutOfTurn(with:)`` with a completion handler.
    public func participantQuitOutOfTurn(with outcome: Outcome, withCompletionHandler completionHandler: @escaping @Sendable ((any Error)?) -> Void) {
        CompletionHandler.run(completionHandler) { try await self.participantQuitOutOfTurn(with: outcome) }
    }

    /// ``endMatchInTurn(withMatch:)`` with a completion handler.
    public func endMatchInTurn(withMatch data: Data, completionHandler: @escaping @Sendable ((any Error)?) -> Void) {
        CompletionHandler.run(completionHandler) { try await self.endMatchInTurn(withMatch: data) }
    }

    /// ``endMatchInTurn(withMatch:scores:achievements:)`` with a completion handler.
    public func endMatchInTurn(
        withMatch data: Data, scores: [GKScore], achievements: [GKAchievement], completionHandler: @escaping @Sendable ((any Error)?) -> Void
    ) {
        CompletionHandler.run(completionHandler) { try await self.endMatchInTurn(withMatch: data, scores: scores, achievements: achievements) }
    }

    /// ``saveMergedMatchData(_:withResolvedExchanges:)`` with a completion handler.
    public func saveMergedMatchData(
        _ data: Data, withResolvedExchanges exchanges: [GKTurnBasedExchange], completionHandler: @escaping @Sendable ((any Error)?) -> Void
    ) {
        CompletionHandler.run(completionHandler) { try await self.saveMergedMatchData(data, withResolvedExchanges: exchanges) }
    }

    /// ``rematch()`` with a completion handler.
    public func rematch(completionHandler: @escaping @Sendable (GKTurnBasedMatch?, (any Error)?) -> Void) {
        CompletionHandler.run(completionHandler) { try await self.rematch() }
    }

    /// ``remove()`` with a completion handler.
    public func remove(completionHandler: @escaping @Sendable ((any Error)?) -> Void) {
        CompletionHandler.run(completionHandler) { try await self.remove() }
    }

    /// ``acceptInvite()`` with a completion handler.
    public func acceptInvite(completionHandler: @escaping @Sendable (GKTurnBasedMatch?, (any Error)?) -> Void) {
        CompletionHandler.run(completionHandler) { try await self.acceptInvite() }
    }

    /// ``declineInvite()`` with a completion handler.
    public func declineInvite(completionHandler: @escaping @Sendable ((any Error)?) -> Void) {
        CompletionHandler.run(completionHandler) { try await self.declineInvite() }
    }

    /// ``sendReminder(to:localizableMessageKey:arguments:)`` with a completion handler.
    public func sendReminder(
        to participants: [GKTurnBasedParticipant], localizableMessageKey key: String, arguments: [String],
        completionHandler: @escaping @Sendable ((any Error)?) -> Void
    ) {
        CompletionHandler.run(completionHandler) { try await self.sendReminder(to: participants, localizableMessageKey: key, arguments: arguments) }
    }

    /// ``sendExchange(to:data:localizableMessageKey:arguments:timeout:)`` with a completion handler.
    public func sendExchange(
        to participants: [GKTurnBasedParticipant], data: Data, localizableMessageKey key: String, arguments: [String], timeout: TimeInterval,
        completionHandler: @escaping @Sendable (GKTurnBasedExchange?, (any Error)?) -> Void
    ) {
        CompletionHandler.run(completionHandler) {
            try await self.sendExchange(to: participants, data: data, localizableMessageKey: key, arguments: arguments, timeout: timeout)
        }
    }
}
