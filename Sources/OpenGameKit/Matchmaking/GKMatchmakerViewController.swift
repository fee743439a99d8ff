import Foundation
import GameCenterProtocol
import Synchronization

/// Hears the outcome of a matchmaking screen (the seed's `GKMatchmakerViewControllerDelegate`).
public protocol GKMatchmakerViewControllerDelegate: AnyObject, Sendable {
    /// The player cancelled before a match was made.
    func matchmakerViewControllerWasCancelled(_ viewController: GKMatchmakerViewController)
    /// Matchmaking failed (for example the network dropped).
    func matchmakerViewController(_ viewController: GKMatchmakerViewController, didFailWithError error: any Error)
    /// A relayed match started.
    func matchmakerViewController(_ viewController: GKMatchmakerViewController, didFind match: GKMatch)
    /// A hosted match's players are all connected to the game's server (see ``GKMatchmaker/setHostedPlayerReady(_:)``).
    func matchmakerViewController(_ viewController: GKMatchmakerViewController, didFindPlayers playerIDs: [String])
}

extension GKMatchmakerViewControllerDelegate {
    /// Games that make only hosted matches need not implement it.
    public func matchmakerViewController(_ viewController: GKMatchmakerViewController, didFind match: GKMatch) {}
    /// Games that make only relayed matches need not implement it.
    public func matchmakerViewController(_ viewController: GKMatchmakerViewController, didFindPlayers playerIDs: [String]) {}
}

/// What a matchmaking screen shows: one slot per seat, the invitees' answers and the auto-match progress.
public struct GKMatchmakerLobby: Sendable, Equatable {
    /// Where the screen is.
    public enum Phase: Sendable, Equatable {
        /// Not presented yet.
        case idle
        /// Waiting for invitees and auto-matched players.
        case searching
        /// Hosted: the match is made; waiting for every player to connect to the game's server.
        case waitingForHostedPlayers
        /// Done: the delegate was given the match or players.
        case found
        case cancelled
        case failed
    }

    /// One seat.
    public enum Slot: Sendable, Equatable {
        /// The local player.
        case localPlayer
        /// An invited friend and their answer.
        case invitee(playerID: String, state: GKInviteeState)
        /// A player auto-match found (known by id once the match starts).
        case autoMatched(playerID: String?)
        /// A seat auto-match is still trying to fill.
        case open
    }

    public var phase: Phase = .idle
    public var slots: [Slot] = []
    /// Players in the forming match, the local player included.
    public var players = 1
    /// Hosted matches: players reported ready with ``GKMatchmakerViewController/setHostedPlayerReady(_:)``.
    public var readyPlayers: [String] = []
}

/// The standard matchmaking screen as a model a game can draw (no UIKit here): present it, show ``lobby``
/// (or follow ``updates``), and hear the outcome on ``matchmakerDelegate`` — the seed's four calls.
public final class GKMatchmakerViewController: Sendable {
    /// Hears the outcome.
    public weak var matchmakerDelegate: (any GKMatchmakerViewControllerDelegate)? {
        get { state.withLock { $0.delegate.value } }
        set { state.withLock { $0.delegate = WeakDelegate(value: newValue) } }
    }
    /// Make a hosted match: the delegate gets player ids (`didFindPlayers`) instead of a ``GKMatch``.
    public var hosted: Bool {
        get { state.withLock { $0.hosted } }
        set { state.withLock { $0.hosted = newValue } }
    }
    /// What the screen shows now.
    public var lobby: GKMatchmakerLobby { state.withLock { $0.lobby } }

    /// Every change of ``lobby``, starting with the current one; each access returns a new stream.
    public var updates: AsyncStream<GKMatchmakerLobby> {
        let (stream, continuation) = AsyncStream.makeStream(of: GKMatchmakerLobby.self, bufferingPolicy: .bufferingNewest(100))
        let id = state.withLock { state -> Int in
            state.nextSubscriber += 1
            state.subscribers[state.nextSubscriber] = continuation
            continuation.yield(state.lobby)
            return state.nextSubscriber
        }
        continuation.onTermination = { [weak self] _ in _ = self?.state.withLock { $0.subscribers.removeValue(forKey: id) } }
        return stream
    }

    private let device: GKGameCenter
    private let request: GKMatchRequest?
    private let invite: GKInvite?
    private let requestID = UUID().uuidString.lowercased()
    private let state: Mutex<ControllerState>

    /// A screen that makes a new match from `matchRequest` (its `playersToInvite` fill the first seats).
    public init(matchRequest: GKMatchRequest, in gameCenter: GKGameCenter = .default) {
        self.device = gameCenter
        self.request = matchRequest
        self.invite = nil
        var lobby = GKMatchmakerLobby()
        lobby.slots = [.localPlayer] + (matchRequest.playersToInvite ?? []).map { .invitee(playerID: $0, state: .pending) }
        lobby.slots += Array(repeating: .open, count: max(0, matchRequest.maxPlayers - lobby.slots.count))
        self.state = Mutex(ControllerState(lobby: lobby))
    }

    /// A screen that joins the match of an invitation (set ``hosted`` from ``GKInvite/isHosted``).
    public init(invite: GKInvite) {
        self.device = invite.device
        self.request = nil
        self.invite = invite
        var lobby = GKMatchmakerLobby()
        lobby.slots = [.localPlayer] + Array(repeating: .open, count: max(0, invite.maxPlayers - 1))
        var state = ControllerState(lobby: lobby)
        state.hosted = invite.isHosted
        self.state = Mutex(state)
    }

    /// Shows the screen: starts matchmaking. Presenting twice does nothing.
    public func present() {
        let first = state.withLock { state -> Bool in
            guard state.lobby.phase == .idle else { return false }
            state.lobby.phase = .searching
            return true
        }
        guard first else { return }
        publish()
        device.matchmaker.register(self)
        let task = Task { await run() }
        state.withLock { $0.task = task }
    }

    /// The player tapped Cancel: the request leaves the queue and the delegate hears `wasCancelled`.
    public func cancel() {
        let task = state.withLock { state -> Task<Void, Never>? in
            guard state.lobby.phase == .searching || state.lobby.phase == .waitingForHostedPlayers else { return nil }
            state.userCancelled = true
            return state.task
        }
        guard let task else { return }
        device.matchmaker.cancel(requestID: requestID)
        task.cancel()
    }

    /// A hosted match's player connected to the game's server; when every player is ready the delegate hears
    /// `didFindPlayers`. As the seed says, each device calls it for every player that connects, the local player
    /// included: the screen does not mark anyone ready by itself, since only the game knows who reached its server.
    public func setHostedPlayerReady(_ playerID: String) {
        hostedPlayerReady(playerID)
    }

    /// The player picked friends for open seats while the screen is shown, as Apple's screen lets them tap an empty
    /// slot and invite a friend. They are invited as the request's `playersToInvite` were (an invitation each, listed
    /// by ``GKMatchmaker``'s received invites on their devices) and show as pending ``GKMatchmakerLobby/Slot/invitee(playerID:state:)``
    /// slots whose answers update ``lobby``; the match starts once they have answered.
    ///
    /// Throws a ``GKError`` saying what was wrong: the screen is not shown and searching, it was made from an
    /// invitation (only the match's host invites), or the server refused — a player who is not a friend, the local
    /// player, someone already in or invited to the match, or more players than open seats (auto-match may have
    /// taken some meanwhile). Nothing is sent when it throws.
    public func invite(playerIDs: [String]) async throws {
        guard request != nil else {
            throw GKError(.invalidParameter, "this screen joins an invitation's match; only the screen of the player who made the match request invites more")
        }
        guard !playerIDs.isEmpty else { throw GKError(.invalidParameter, "name 1 or more friends to invite") }
        try await waitUntilRequestSent()
        let status: MatchRequestStatus = try await device.authenticated(
            .post, "/v1/matchmaking/requests/\(requestID)/invitations", body: MatchInvitationsBody(playerIDs: playerIDs))
        let answers = Dictionary(status.invitees.map { ($0.playerID, GKInviteeState($0.state)) }, uniquingKeysWith: { first, _ in first })
        let changed = state.withLock { state -> Bool in
            guard state.lobby.phase == .searching else { return false }
            var invitees = state.lobby.slots.filter { if case .invitee = $0 { true } else { false } }
            var others = state.lobby.slots.filter {
                switch $0 {
                case .localPlayer, .invitee: false
                case .autoMatched, .open: true
                }
            }
            for player in playerIDs where !invitees.contains(where: { if case .invitee(player, _) = $0 { true } else { false } }) {
                invitees.append(.invitee(playerID: player, state: answers[player] ?? .pending))
                if let open = others.firstIndex(of: .open) { others.remove(at: open) }
            }
            state.lobby.slots = [.localPlayer] + invitees + others
            return true
        }
        if changed { publish() }
    }

    /// Completion-handler form of ``invite(playerIDs:)``: nil when the friends were invited, else the error.
    public func invite(playerIDs: [String], completionHandler: @escaping @Sendable ((any Error)?) -> Void) {
        CompletionHandler.run(completionHandler) { try await self.invite(playerIDs: playerIDs) }
    }

    /// Waits while the screen searches until the server holds its request; throws when the screen is not searching.
    private func waitUntilRequestSent() async throws {
        while true {
            let (phase, sent) = state.withLock { ($0.lobby.phase, $0.requestSent) }
            guard phase == .searching else {
                throw GKError(.invalidParameter, "friends can be invited only while the screen is shown and searching; it is \(phase)")
            }
            if sent { return }
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    private func run() async {
        let poller = Task { await pollProgress() }
        defer { poller.cancel() }
        do {
            let info: MatchInfo
            if let invite {
                info = try await device.matchmaker.join(invite, requestID: requestID)
            } else if let request {
                info = try await device.matchmaker.submit(request, hosted: hosted, matchID: nil, requestID: requestID) { [weak self] in
                    self?.state.withLock { $0.requestSent = true }
                }
            } else {
                return
            }
            poller.cancel()
            try await found(info)
        } catch {
            finish(error)
        }
    }

    private func found(_ info: MatchInfo) async throws {
        let localID = device.state.withLock { $0.session?.player.playerID }
        let isHosted = hosted
        var match: GKMatch?
        if !isHosted { match = try device.matchmaker.makeMatch(info, relayOnly: request?.relayOnly ?? false) }
        state.withLock { state in
            state.players = info.players
            state.lobby.players = info.players.count
            let invited = Set(state.lobby.slots.compactMap { if case .invitee(let player, _) = $0 { player } else { nil } })
            state.lobby.slots = info.players.map { player in
                if player == localID { return .localPlayer }
                return invited.contains(player) ? .invitee(playerID: player, state: .connected) : .autoMatched(playerID: player)
            }
            state.lobby.phase = isHosted ? .waitingForHostedPlayers : .found
        }
        publish()
        if let match {
            device.matchmaker.unregister(self)
            matchmakerDelegate?.matchmakerViewController(self, didFind: match)
        } else {
            completeHostedIfReady()
        }
    }

    private func finish(_ error: any Error) {
        let cancelled = state.withLock { state -> Bool in
            state.lobby.phase = state.userCancelled ? .cancelled : .failed
            return state.userCancelled
        }
        publish()
        device.matchmaker.unregister(self)
        if cancelled {
            matchmakerDelegate?.matchmakerViewControllerWasCancelled(self)
        } else {
            matchmakerDelegate?.matchmakerViewController(self, didFailWithError: error)
        }
    }

    func hostedPlayerReady(_ playerID: String) {
        let changed = state.withLock { state -> Bool in
            guard !state.lobby.readyPlayers.contains(playerID) else { return false }
            state.lobby.readyPlayers.append(playerID)
            return true
        }
        guard changed else { return }
        publish()
        completeHostedIfReady()
    }

    private func completeHostedIfReady() {
        let players = state.withLock { state -> [String]? in
            guard state.lobby.phase == .waitingForHostedPlayers, !state.players.isEmpty,
                state.players.allSatisfy(state.lobby.readyPlayers.contains)
            else { return nil }
            state.lobby.phase = .found
            return state.players
        }
        guard let players else { return }
        publish()
        device.matchmaker.unregister(self)
        matchmakerDelegate?.matchmakerViewController(self, didFindPlayers: players)
    }

    func inviteeAnswered(_ answer: InviteeAnswered) {
        guard answer.requestID == requestID else { return }
        state.withLock { state in
            guard let index = state.lobby.slots.firstIndex(where: { if case .invitee(answer.playerID, _) = $0 { true } else { false } }) else { return }
            state.lobby.slots[index] = .invitee(playerID: answer.playerID, state: GKInviteeState(answer.state))
        }
        publish()
    }

    /// Follows the forming match's size while searching (auto-matched players are not pushed one by one).
    private func pollProgress() async {
        while !Task.isCancelled {
            try? await Task.sleep(for: .milliseconds(250))
            guard let status: MatchRequestStatus = try? await device.authenticated(.get, "/v1/matchmaking/requests/\(requestID)"),
                status.state == .waiting
            else { continue }
            state.withLock { state in
                state.lobby.players = status.players
                let invitees = state.lobby.slots.filter { if case .invitee = $0 { true } else { false } }
                let accepted = status.invitees.filter { $0.state == .accepted }.count
                let autoMatched = max(0, status.players - 1 - accepted)
                let open = max(0, status.maxPlayers - 1 - invitees.count - autoMatched)
                state.lobby.slots =
                    [.localPlayer] + invitees + Array(repeating: .autoMatched(playerID: nil), count: autoMatched)
                    + Array(repeating: .open, count: open)
            }
            publish()
        }
    }

    private func publish() {
        let (lobby, subscribers) = state.withLock { ($0.lobby, Array($0.subscribers.values)) }
        for subscriber in subscribers { subscriber.yield(lobby) }
    }
}

private struct WeakDelegate: Sendable {
    weak var value: (any GKMatchmakerViewControllerDelegate)?
}

private struct ControllerState: Sendable {
    var lobby: GKMatchmakerLobby
    var hosted = false
    var delegate = WeakDelegate(value: nil)
    var task: Task<Void, Never>?
    var userCancelled = false
    /// The server holds the match request (invitations into its lobby can be sent).
    var requestSent = false
    /// The match's players once it is made.
    var players: [String] = []
    var subscribers: [Int: AsyncStream<GKMatchmakerLobby>.Continuation] = [:]
    var nextSubscriber = 0
}
