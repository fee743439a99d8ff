import Foundation
import GameCenterProtocol
import Synchronization

/// GameKit's turn-based callbacks; register one with ``GKLocalPlayer/register(_:)-(GKTurnBasedEventListener)``. Every method has a default that
/// does nothing. The same events, each saying exactly what happened, also arrive on ``GKGameCenter/events`` as
/// ``GKGameCenterEvent/turnBased(_:)``.
public protocol GKTurnBasedEventListener: AnyObject, Sendable {
    /// The match changed: a turn passed (`didBecomeActive` when it is now the local player's), was saved, timed out;
    /// a participant joined, accepted, declined or quit; the local player was invited or reminded.
    func player(_ playerID: String, receivedTurnEventFor match: GKTurnBasedMatch, didBecomeActive: Bool)
    /// The match ended.
    func player(_ playerID: String, matchEnded match: GKTurnBasedMatch)
    /// Another participant sent the local player an exchange.
    func player(_ playerID: String, receivedExchangeRequest exchange: GKTurnBasedExchange, for match: GKTurnBasedMatch)
    /// An exchange sent to the local player was canceled.
    func player(_ playerID: String, receivedExchangeCancellation exchange: GKTurnBasedExchange, for match: GKTurnBasedMatch)
    /// An exchange the local player sent (or must merge, holding the turn) completed.
    func player(
        _ playerID: String, receivedExchangeReplies replies: [GKTurnBasedExchangeReply], forCompletedExchange exchange: GKTurnBasedExchange,
        for match: GKTurnBasedMatch)
    /// The player chose friends in the Game Center app to start a turn-based match with: find one that invites them
    /// (``GKMatchRequest/playersToInvite``). A choice made before any listener is registered reaches the first one.
    func player(_ playerID: String, didRequestMatchWithOtherPlayers playerIDsToInvite: [String])
    /// The player asked to leave the match outside the game (the Game Center app's turns page): quit it with
    /// ``GKTurnBasedMatch/participantQuitInTurn(with:nextParticipants:turnTimeout:match:)`` or
    /// ``GKTurnBasedMatch/participantQuitOutOfTurn(with:)`` and the outcome the game chooses.
    func player(_ playerID: String, wantsToQuitMatch match: GKTurnBasedMatch)
}

/// Every callback does nothing unless the listener implements it.
extension GKTurnBasedEventListener {
    /// Does nothing.
    public func player(_ playerID: String, receivedTurnEventFor match: GKTurnBasedMatch, didBecomeActive: Bool) {}
    /// Does nothing.
    public func player(_ playerID: String, matchEnded match: GKTurnBasedMatch) {}
    /// Does nothing.
    public func player(_ playerID: String, receivedExchangeRequest exchange: GKTurnBasedExchange, for match: GKTurnBasedMatch) {}
    /// Does nothing.
    public func player(_ playerID: String, receivedExchangeCancellation exchange: GKTurnBasedExchange, for match: GKTurnBasedMatch) {}
    /// Does nothing.
    public func player(
        _ playerID: String, receivedExchangeReplies replies: [GKTurnBasedExchangeReply], forCompletedExchange exchange: GKTurnBasedExchange,
        for match: GKTurnBasedMatch
    ) {}
    /// Does nothing.
    public func player(_ playerID: String, didRequestMatchWithOtherPlayers playerIDsToInvite: [String]) {}
    /// Does nothing.
    public func player(_ playerID: String, wantsToQuitMatch match: GKTurnBasedMatch) {}
}

/// What happened in a turn-based match, as the server recorded it: one event per change, in the match's order,
/// delivered once per device even when it was away when it happened.
public struct GKTurnBasedMatchEvent: Sendable {
    /// The kinds of change.
    public enum Kind: String, Sendable {
        case turnPassed, turnSaved, timedOut, participantQuit, invited, accepted, declined, joined
        case exchangeRequest, exchangeCancelled, exchangeCompleted, exchangesMerged, matchEnded, reminder, removed
        /// The local player asked in the Game Center app to leave the match (``GKTurnBasedEventListener/player(_:wantsToQuitMatch:)``).
        case quitRequested
    }

    /// What happened.
    public let kind: Kind
    /// The match the change concerns.
    public let matchID: String
    /// The match as it was right after the change (its ``GKTurnBasedMatch/version`` numbers the change).
    public let match: GKTurnBasedMatch
    /// Whether the change made it the local player's turn.
    public let didBecomeActive: Bool
    /// The participant who acted (nil: the server's clock, as for ``Kind/timedOut``).
    public let actor: GKTurnBasedParticipant?
    /// The exchange concerned, for the exchange kinds.
    public let exchange: GKTurnBasedExchange?
    /// The reminder's or invitation's message.
    public let message: String?
}

/// The registered listeners, held weakly, and the dispatch of turn-based events to them.
final class TurnBasedListeners: Sendable {
    private struct Entry: @unchecked Sendable {
        weak var listener: (any GKTurnBasedEventListener)?
    }

    private struct State {
        var entries: [Entry] = []
        /// Friends the player chose for a turn-based match before any listener was registered: handed to the first one.
        var waitingChoices: [(playerID: String, friends: [String])] = []
    }

    /// One lock for both lists, so a choice arriving while the first listener registers is neither lost nor heard twice.
    private let state = Mutex(State())

    private var listeners: [any GKTurnBasedEventListener] { state.withLock { $0.entries.compactMap(\.listener) } }

    func register(_ listener: any GKTurnBasedEventListener) {
        let waiting = state.withLock { state in
            state.entries.removeAll { $0.listener == nil || $0.listener === listener }
            state.entries.append(Entry(listener: listener))
            defer { state.waitingChoices.removeAll() }
            return state.waitingChoices
        }
        for choice in waiting { listener.player(choice.playerID, didRequestMatchWithOtherPlayers: choice.friends) }
    }

    /// The player chose friends for a turn-based match in the Game Center app: every listener hears it, or the first
    /// one registered when there is none yet.
    func requestMatch(with friends: [String], playerID: String) {
        let listeners = state.withLock { state in
            let listeners = state.entries.compactMap(\.listener)
            if listeners.isEmpty { state.waitingChoices.append((playerID, friends)) }
            return listeners
        }
        for listener in listeners { listener.player(playerID, didRequestMatchWithOtherPlayers: friends) }
    }

    func unregister(_ listener: any GKTurnBasedEventListener) {
        state.withLock { $0.entries.removeAll { $0.listener == nil || $0.listener === listener } }
    }

    func unregisterAll() {
        state.withLock { $0.entries.removeAll() }
    }

    /// Hands `info` to the game: the event stream, then each listener's matching callback.
    func deliver(_ info: TurnBasedEventInfo, playerID: String, device: GKGameCenter) {
        guard let kind = GKTurnBasedMatchEvent.Kind(rawValue: info.kind.rawValue) else { return }
        let match = GKTurnBasedMatch(info: info.match, in: device)
        let exchange = info.exchange.map { GKTurnBasedExchange(info: $0, match: match) }
        let participants = match.participants
        let actor = info.actorIndex.flatMap { participants.indices.contains($0) ? participants[$0] : nil }
        device.eventHub.publish(
            .turnBased(
                GKTurnBasedMatchEvent(
                    kind: kind, matchID: match.matchID, match: match, didBecomeActive: info.becameActive, actor: actor, exchange: exchange,
                    message: info.message)))
        for listener in listeners {
            switch kind {
            case .matchEnded:
                listener.player(playerID, matchEnded: match)
            case .exchangeRequest:
                if let exchange { listener.player(playerID, receivedExchangeRequest: exchange, for: match) }
            case .exchangeCancelled:
                if let exchange { listener.player(playerID, receivedExchangeCancellation: exchange, for: match) }
            case .exchangeCompleted:
                if let exchange { listener.player(playerID, receivedExchangeReplies: exchange.replies ?? [], forCompletedExchange: exchange, for: match) }
            case .removed:
                break
            case .quitRequested:
                listener.player(playerID, wantsToQuitMatch: match)
            case .turnPassed, .turnSaved, .timedOut, .participantQuit, .invited, .accepted, .declined, .joined, .exchangesMerged, .reminder:
                listener.player(playerID, receivedTurnEventFor: match, didBecomeActive: info.becameActive)
            }
        }
    }
}
