import DequeModule
import Foundation
import GameCenterProtocol
import NIOCore
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

/// How a match message travels.
public enum GKMatchSendDataMode: Sendable {
    /// Delivered once, in order per sender, even across a short network break (at most 87 KB).
    case reliable
    /// Sent once over UDP, directly or through the relay (its WebSocket when UDP does not get through): may be lost or
    /// reordered (at most 1000 bytes).
    case unreliable
}

/// A match the matchmaker formed: its members, and the data paths between them — peer to peer where a direct path
/// works (encrypted with keys only the two members hold), through the server's relay where it does not (per pair,
/// switching as paths come and go without losing or reordering reliable data).
///
/// The match connects to the relay as soon as it exists; data can be sent at once (reliable messages wait for
/// the connection). Delegate calls and `events` come from the SDK's network threads, in order per sender.
public final class GKMatch: Sendable {
    /// The server's id for the match.
    public let matchID: String
    /// A rule-based match: the local player's properties as the queue's rules saw them, with Game Center's own under
    /// `gc` (`gc.team`: the player's team, when the rule set has teams). Nil for classic matches.
    public let properties: [String: GKMatchProperty]?
    /// A rule-based match: every other member's properties, by player id, with Game Center's own under `gc`. Nil for
    /// classic matches.
    public let playerProperties: [String: [String: GKMatchProperty]]?
    /// The other members connected to the relay now, in the order they joined the match.
    public var playerIDs: [String] {
        state.withLock { state in state.members.filter { $0 != localPlayerID && state.connected.contains($0) && !state.left.contains($0) } }
    }
    /// Members who have not connected to the relay yet (0 once every member is in).
    public var expectedPlayerCount: Int {
        state.withLock { state in state.members.filter { $0 != localPlayerID && !state.connected.contains($0) && !state.left.contains($0) }.count }
    }
    /// Hears data, member changes and failures. Data that arrived before the game set a delegate or subscribed to
    /// ``events`` is kept (up to ``heldDataLimit`` messages) and handed to the first delegate set, in order, before
    /// anything that arrives later.
    public weak var delegate: (any GKMatchDelegate)? {
        get { state.withLock { $0.delegate.value } }
        set {
            let drain = state.withLock { state -> Bool in
                state.delegate = WeakDelegate(value: newValue)
                guard newValue != nil, !state.held.isEmpty, !state.draining else { return false }
                state.draining = true
                return true
            }
            // Handed over from another thread, as every delegate call is: the game's setter returns at once.
            if drain { DispatchQueue.global().async { self.deliverHeld() } }
        }
    }

    /// The match's events as an `AsyncSequence`; each access returns a new stream that sees events from then on (the
    /// first one made also sees the data that arrived before anyone listened).
    public var events: AsyncStream<GKMatchEvent> {
        let (stream, continuation) = AsyncStream.makeStream(of: GKMatchEvent.self, bufferingPolicy: .bufferingNewest(10_000))
        let id = state.withLock { state -> Int in
            state.nextSubscriber += 1
            state.subscribers[state.nextSubscriber] = continuation
            // Under the lock: no later event can reach the stream before these.
            if !state.draining {
                for event in state.held { continuation.yield(event) }
                state.held.removeAll()
            }
            return state.nextSubscriber
        }
        continuation.onTermination = { [weak self] _ in _ = self?.state.withLock { $0.subscribers.removeValue(forKey: id) } }
        return stream
    }

    /// The most data messages kept for a game that has set no delegate and subscribed to no events yet; past it the
    /// oldest are dropped (and logged).
    public static let heldDataLimit = 10_000

    /// How unreliable data and voice travel now (test hook).
    var unreliablePath: UnreliablePath { relay.unreliablePath }

    /// The match's voice transport, for `OpenGameKitVoice`.
    package let voice: MatchVoice
    let device: GKGameCenter
    let localPlayerID: String
    private let state: Mutex<MatchState>
    private let relay: MatchRelayClient

    private struct WeakDelegate: Sendable {
        weak var value: (any GKMatchDelegate)?
    }

    private struct MatchState: Sendable {
        var members: [String]
        var connected: Set<String> = []
        var left: Set<String> = []
        var disconnected = false
        var delegate = WeakDelegate(value: nil)
        var subscribers: [Int: AsyncStream<GKMatchEvent>.Continuation] = [:]
        var nextSubscriber = 0
        /// Data that arrived while nobody listened, oldest first.
        var held: Deque<GKMatchEvent> = []
        /// Whether the held data is being handed to a delegate just set (what arrives meanwhile queues behind it).
        var draining = false
    }

    /// The other members this device reaches directly now, peer to peer; data to the others goes through the
    /// server's relay (their direct path is being tried, did not answer, or one side keeps to the relay).
    public var directPlayerIDs: [String] { relay.directPlayers }

    init(info: MatchInfo, localPlayerID: String, relayOnly: Bool = false, device: GKGameCenter) {
        self.matchID = info.matchID
        self.properties = info.playerProperties?[localPlayerID]
        self.playerProperties = info.playerProperties?.filter { $0.key != localPlayerID }
        self.localPlayerID = localPlayerID
        self.device = device
        self.state = Mutex(MatchState(members: info.players))
        let box = WeakMatchBox()
        self.relay = MatchRelayClient(
            matchID: info.matchID, localPlayerID: localPlayerID, players: info.players, relayURL: info.relayURL.flatMap(URL.init(string:)),
            relayOnly: relayOnly, device: device
        ) { event in
            box.match?.relayEvent(event)
        }
        self.voice = MatchVoice(localPlayerID: localPlayerID, relay: relay, logger: device.logger) { [localPlayer = device.localPlayer] in
            localPlayer.communicationRestriction
        }
        box.match = self
    }

    /// Connects to the match's relay; called once, by the matchmaker, when the match is handed to the game.
    func connect() {
        relay.start()
    }

    deinit {
        relay.stop()
    }

    /// Sends `data` to every other member.
    ///
    /// Throws `invalidParameter` for a message over the mode's limit (87 KB reliable, 1000 bytes unreliable) or
    /// after ``disconnect()``, and `communicationsFailure` when sending faster than the relay allows; nothing is sent
    /// then. Never blocks: reliable messages are queued until the relay has them.
    public func sendData(toAllPlayers data: Data, with mode: GKMatchSendDataMode) throws {
        try relay.send(data, to: nil, reliable: mode == .reliable)
    }

    /// Sends `data` to the members named by `playerIDs`; the same errors as ``sendData(toAllPlayers:with:)``, and
    /// `invalidParameter` for a player who is not another member of the match.
    public func send(_ data: Data, to playerIDs: [String], with mode: GKMatchSendDataMode) throws {
        guard !playerIDs.isEmpty else { throw GKError(.invalidParameter, "name at least one player to send to") }
        try relay.send(data, to: playerIDs, reliable: mode == .reliable)
    }

    /// Leaves the match: the other members are told at once; this object sends nothing more.
    public func disconnect() {
        let first = state.withLock { state -> Bool in
            defer { state.disconnected = true }
            return !state.disconnected
        }
        guard first else { return }
        relay.stop()
        voice.deliver(.ended)
        device.matchmaker.forget(self)
        let device = self.device, matchID = self.matchID
        Task {
            do {
                let _: APIClient.Empty = try await device.authenticated(.post, "/v1/matches/\(matchID)/leave")
            } catch {
                device.logger.info("leaving a match failed", metadata: [LogKey.matchID: "\(matchID)", LogKey.error: "\(error)"])
            }
        }
    }

    /// The server's member list grew (players were added); they count as expected until they reach the relay.
    func membersChanged(to players: [String]) {
        state.withLock { state in
            state.members.append(contentsOf: players.filter { !state.members.contains($0) })
        }
    }

    /// A member left.
    func memberLeft(_ playerID: String) {
        let changed = state.withLock { state in !state.disconnected && state.left.insert(playerID).inserted }
        if changed {
            voice.deliver(.memberLeft(playerID))
            announce(.playerStateChanged(playerID: playerID, state: .disconnected))
        }
    }

    private func relayEvent(_ event: MatchRelayClient.Event) {
        switch event {
        case .data(let data, let player):
            announce(.data(data, fromPlayer: player), unlessDisconnected: true)
        case .voice(let channel, let payload, let player):
            voice.deliver(.packet(channel: channel, payload: payload, from: player))
        case .voiceChannel(let channel, let player, let membership):
            voice.deliver(.membership(channel: channel, player: player, membership))
        case .member(let member):
            guard member.playerID != localPlayerID else { return }
            switch member.state {
            case .expected:
                state.withLock { state in if !state.members.contains(member.playerID) { state.members.append(member.playerID) } }
            case .connected:
                let changed = state.withLock { state -> Bool in
                    if !state.members.contains(member.playerID) { state.members.append(member.playerID) }
                    return !state.disconnected && !state.left.contains(member.playerID) && state.connected.insert(member.playerID).inserted
                }
                if changed { announce(.playerStateChanged(playerID: member.playerID, state: .connected)) }
            case .left:
                memberLeft(member.playerID)
            }
        case .ended(let error):
            let wasOpen = state.withLock { state -> Bool in
                defer { state.disconnected = true }
                return !state.disconnected
            }
            if wasOpen { voice.deliver(.ended) }
            if wasOpen, let error {
                device.matchmaker.forget(self)
                announce(.failed(error))
            }
        }
    }

    /// Tells the subscribers and the delegate; with `unlessDisconnected`, nobody once this device left the match.
    /// Data that finds nobody listening is held for the first listener (member changes are not: ``playerIDs`` says
    /// who is connected).
    private func announce(_ event: GKMatchEvent, unlessDisconnected: Bool = false) {
        let listeners = state.withLock { state -> ((any GKMatchDelegate)?, [AsyncStream<GKMatchEvent>.Continuation])? in
            if unlessDisconnected && state.disconnected { return nil }
            var isData = false
            if case .data = event { isData = true }
            if state.draining || (isData && state.delegate.value == nil && state.subscribers.isEmpty) {
                if state.held.count >= Self.heldDataLimit {
                    state.held.removeFirst()
                    device.logger.warning("a match's data waits for a delegate that was never set: the oldest message was dropped")
                }
                state.held.append(event)
                return nil
            }
            return (state.delegate.value, state.subscribers.isEmpty ? [] : Array(state.subscribers.values))
        }
        guard let (delegate, subscribers) = listeners else { return }
        tell(event, delegate: delegate, subscribers: subscribers)
    }

    /// Hands the held data to the delegate just set, in order, then what arrived while it did.
    private func deliverHeld() {
        while true {
            let batch = state.withLock { state -> ([GKMatchEvent], (any GKMatchDelegate)?, [AsyncStream<GKMatchEvent>.Continuation])? in
                guard !state.held.isEmpty else {
                    state.draining = false
                    return nil
                }
                defer { state.held.removeAll() }
                return (Array(state.held), state.delegate.value, Array(state.subscribers.values))
            }
            guard let (events, delegate, subscribers) = batch else { return }
            for event in events { tell(event, delegate: delegate, subscribers: subscribers) }
        }
    }

    private func tell(_ event: GKMatchEvent, delegate: (any GKMatchDelegate)?, subscribers: [AsyncStream<GKMatchEvent>.Continuation]) {
        for subscriber in subscribers { subscriber.yield(event) }
        guard let delegate else { return }
        switch event {
        case .data(let data, let player): delegate.match(self, didReceive: data, fromPlayer: player)
        case .playerStateChanged(let player, let change): delegate.match(self, player: player, didChange: change)
        case .failed(let error): delegate.match(self, didFailWithError: error)
        }
    }
}

/// Lets the relay client reach its match without keeping it alive.
private final class WeakMatchBox: Sendable {
    private struct Reference {
        weak var match: GKMatch?
    }

    private let reference = Mutex(Reference())

    /// The match, once it is made; `nil` after it is released.
    var match: GKMatch? {
        get { reference.withLock { $0.match } }
        set { reference.withLock { $0.match = newValue } }
    }
}
