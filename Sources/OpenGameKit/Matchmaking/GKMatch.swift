import Foundation
import GameCenterProtocol
import Synchronization

/// A member's connection state, as ``GKMatchDelegate`` hears it.
public enum GKPlayerConnectionState: Sendable {
    case unknown, connected, disconnected
}

/// Hears what happens in a match.
public protocol GKMatchDelegate: AnyObject, Sendable {
    /// Data arrived from another member.
    func match(_ match: GKMatch, didReceive data: Data, fromPlayer playerID: String)
    /// A member connected (joined) or disconnected (left).
    func match(_ match: GKMatch, player playerID: String, didChange state: GKPlayerConnectionState)
    /// An error ended the match for this device.
    func match(_ match: GKMatch, didFailWithError error: (any Error)?)
}

/// What happens in a match, for games that prefer a sequence to the delegate.
public enum GKMatchEvent: Sendable {
    case data(Data, fromPlayer: String)
    case playerStateChanged(playerID: String, state: GKPlayerConnectionState)
    case failed(GKError?)
}

/// A match the matchmaker formed: its members, and (with the relay) the data path between them.
public final class GKMatch: @unchecked Sendable {
    /// The server's id for the match.
    public let matchID: String
    /// The other members connected now, in the order they joined.
    public var playerIDs: [String] { state.withLock { state in state.members.filter { $0 != localPlayerID && !state.left.contains($0) } } }
    /// Members still expected to join before the match is complete (0 once every member is in).
    public var expectedPlayerCount: Int { 0 }
    /// Hears data, member changes and failures.
    public weak var delegate: (any GKMatchDelegate)? {
        get { state.withLock { $0.delegate.value } }
        set { state.withLock { $0.delegate = WeakDelegate(value: newValue) } }
    }

    /// The match's events as an `AsyncSequence`; each access returns a new stream that sees events from then on.
    public var events: AsyncStream<GKMatchEvent> {
        let (stream, continuation) = AsyncStream.makeStream(of: GKMatchEvent.self, bufferingPolicy: .bufferingNewest(1000))
        let id = state.withLock { state -> Int in
            state.nextSubscriber += 1
            state.subscribers[state.nextSubscriber] = continuation
            return state.nextSubscriber
        }
        continuation.onTermination = { [weak self] _ in _ = self?.state.withLock { $0.subscribers.removeValue(forKey: id) } }
        return stream
    }

    let device: GKGameCenter
    let localPlayerID: String
    private let state: Mutex<MatchState>

    private struct WeakDelegate: @unchecked Sendable {
        weak var value: (any GKMatchDelegate)?
    }

    private struct MatchState: @unchecked Sendable {
        var members: [String]
        var left: Set<String> = []
        var disconnected = false
        var delegate = WeakDelegate(value: nil)
        var subscribers: [Int: AsyncStream<GKMatchEvent>.Continuation] = [:]
        var nextSubscriber = 0
    }

    init(info: MatchInfo, localPlayerID: String, device: GKGameCenter) {
        self.matchID = info.matchID
        self.localPlayerID = localPlayerID
        self.device = device
        self.state = Mutex(MatchState(members: info.players))
    }

    /// Leaves the match: the other members are told at once; this object sends nothing more.
    public func disconnect() {
        let first = state.withLock { state -> Bool in
            defer { state.disconnected = true }
            return !state.disconnected
        }
        guard first else { return }
        device.matchmaker.forget(self)
        let device = self.device, matchID = self.matchID
        Task {
            do {
                let _: APIClient.Empty = try await device.authenticated(.post, "/v1/matches/\(matchID)/leave")
            } catch {
                device.logger.info("leaving a match failed", metadata: ["match_id": "\(matchID)", "error": "\(error)"])
            }
        }
    }

    /// The server's member list grew (players were added): tell the game about each newcomer.
    func membersChanged(to players: [String]) {
        let added = state.withLock { state -> [String] in
            let added = players.filter { !state.members.contains($0) }
            state.members.append(contentsOf: added)
            return state.disconnected ? [] : added.filter { $0 != localPlayerID }
        }
        for player in added { announce(.playerStateChanged(playerID: player, state: .connected)) }
    }

    /// A member left.
    func memberLeft(_ playerID: String) {
        let changed = state.withLock { state in !state.disconnected && state.left.insert(playerID).inserted }
        if changed { announce(.playerStateChanged(playerID: playerID, state: .disconnected)) }
    }

    private func announce(_ event: GKMatchEvent) {
        let (delegate, subscribers) = state.withLock { ($0.delegate.value, Array($0.subscribers.values)) }
        for subscriber in subscribers { subscriber.yield(event) }
        guard let delegate else { return }
        switch event {
        case .data(let data, let player): delegate.match(self, didReceive: data, fromPlayer: player)
        case .playerStateChanged(let player, let change): delegate.match(self, player: player, didChange: change)
        case .failed(let error): delegate.match(self, didFailWithError: error)
        }
    }
}
