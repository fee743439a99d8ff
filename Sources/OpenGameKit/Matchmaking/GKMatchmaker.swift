import Foundation
import GameCenterProtocol
import Synchronization

/// How an invitee answered, as the inviting device sees it.
public enum GKInviteeState: String, Sendable {
    /// The invitation was sent and is not answered yet.
    case pending
    /// The invitee joined the forming match.
    case accepted
    /// The invitee said no, or the invitation expired.
    case declined
    /// The match started with the invitee in it.
    case connected

    init(_ state: InviteeState) {
        switch state {
        case .pending: self = .pending
        case .accepted: self = .accepted
        case .declined: self = .declined
        case .connected: self = .connected
        }
    }
}

/// Finds players for matches: auto-match, invitations, hosted matches, and player activity.
///
/// A request waits on the server only while the device's realtime channel is open (it opens when the player
/// authenticates); if the channel drops while a request waits, the request fails with `communicationsFailure`
/// and has left the server's queue. Matches and invitations arrive on the channel, so nothing is missed while
/// the game runs; invitations sent while the game was not running — and those the player accepted in the Game Center
/// app, and friends they chose there to play with — are fetched when the channel opens.
public final class GKMatchmaker: Sendable {
    /// The default device's matchmaker.
    public static func shared() -> GKMatchmaker { GKGameCenter.default.matchmaker }

    /// Called with an invitation the local player accepted (`(acceptedInvite, nil)`, the seed's call: join it with
    /// ``match(for:)``), or with friends the player chose in the Game Center app to play with (`(nil, playerIDs)`:
    /// make a request that invites them). What arrives before a handler is set is kept and handed to it when it is set.
    ///
    /// An invitation is accepted in the Game Center app (it then arrives when the game next starts, or at once if it
    /// runs) or in the game with ``accept(_:)``. Invitations not answered yet never reach the handler: they are
    /// ``GKGameCenterEvent/invitationReceived(_:)`` events and ``receivedInvites``, for the game to show. Each choice
    /// of friends reaches one device of the game, once.
    public var inviteHandler: (@Sendable (GKInvite?, [String]?) -> Void)? {
        get { state.withLock { $0.inviteHandler } }
        set {
            let waiting = state.withLock { state -> [(InvitationInfo?, [String]?)] in
                state.inviteHandler = newValue
                guard newValue != nil else { return [] }
                defer { state.waitingForHandler = [] }
                return state.waitingForHandler
            }
            guard let newValue, let device = try? device else { return }
            for (info, players) in waiting { newValue(info.map { GKInvite(info: $0, device: device) }, players) }
        }
    }

    private let state = Mutex(MatchmakerState())

    private var device: GKGameCenter {
        get throws {
            guard let device = state.withLock({ $0.device.device }) else { throw GKError(.cancelled, "the device was released") }
            return device
        }
    }

    init() {}

    func attach(to device: GKGameCenter) {
        state.withLock { $0.device = WeakDevice(device: device) }
    }

    // MARK: Making matches

    /// Finds players for a relayed match and returns it once it starts (auto-matched seats, and invited
    /// friends who accepted). ``cancel()`` makes it throw `cancelled`.
    public func findMatch(for request: GKMatchRequest) async throws -> GKMatch {
        let info = try await submit(request, hosted: false, matchID: nil)
        return try makeMatch(info, relayOnly: request.relayOnly)
    }

    /// Completion-handler form of ``findMatch(for:)``.
    public func findMatch(for request: GKMatchRequest, completionHandler: @escaping @Sendable (GKMatch?, (any Error)?) -> Void) {
        CompletionHandler.run(completionHandler) { try await self.findMatch(for: request) }
    }

    /// Finds players for a hosted match (your own server connects them): the player ids of the whole match,
    /// the local player included.
    public func findPlayersForHostedMatch(for request: GKMatchRequest) async throws -> [String] {
        try await submit(request, hosted: true, matchID: nil).players
    }

    /// Completion-handler form of ``findPlayersForHostedMatch(for:)``.
    public func findPlayersForHostedMatch(for request: GKMatchRequest, completionHandler: @escaping @Sendable ([String]?, (any Error)?) -> Void) {
        CompletionHandler.run(completionHandler) { try await self.findPlayersForHostedMatch(for: request) }
    }

    /// Finds players for a hosted match through the request's rule-based queue (``GKMatchRequest/queueName``): the
    /// players, and the properties the queue's rules saw (with each player's team when the rule set has teams).
    public func findMatchedPlayers(_ request: GKMatchRequest) async throws -> GKMatchedPlayers {
        guard request.queueName != nil else {
            throw GKError(.matchRequestInvalid, "findMatchedPlayers needs a queueName: use findPlayersForHostedMatch(for:) for classic matchmaking")
        }
        let info = try await submit(request, hosted: true, matchID: nil)
        let device = try self.device
        guard let playerID = device.state.withLock({ $0.session?.player.playerID }) else {
            throw GKError(.notAuthenticated, "the player signed out while the match formed")
        }
        return GKMatchedPlayers(info: info, localPlayerID: playerID)
    }

    /// Completion-handler form of ``findMatchedPlayers(_:)``.
    public func findMatchedPlayers(_ request: GKMatchRequest, completionHandler: @escaping @Sendable (GKMatchedPlayers?, (any Error)?) -> Void) {
        CompletionHandler.run(completionHandler) { try await self.findMatchedPlayers(request) }
    }

    /// Joins the match of an invitation the local player received; returns it once it starts.
    public func match(for invite: GKInvite) async throws -> GKMatch {
        guard !invite.isHosted else {
            throw GKError(.invalidParameter, "this invitation is to a hosted match: join it with findPlayers(for:)")
        }
        return try makeMatch(try await join(invite))
    }

    /// Completion-handler form of ``match(for:)``.
    public func match(for invite: GKInvite, completionHandler: @escaping @Sendable (GKMatch?, (any Error)?) -> Void) {
        CompletionHandler.run(completionHandler) { try await self.match(for: invite) }
    }

    /// Joins the hosted match of an invitation; returns the player ids of the whole match once it starts.
    public func findPlayers(for invite: GKInvite) async throws -> [String] {
        guard invite.isHosted else {
            throw GKError(.invalidParameter, "this invitation is to a relayed match: join it with match(for:)")
        }
        return try await join(invite).players
    }

    /// Completion-handler form of ``findPlayers(for:)``.
    public func findPlayers(for invite: GKInvite, completionHandler: @escaping @Sendable ([String]?, (any Error)?) -> Void) {
        CompletionHandler.run(completionHandler) { try await self.findPlayers(for: invite) }
    }

    /// Finds more players for a running match (for example to replace one who left). `matchRequest` sizes
    /// count the whole match; returns when the new players are in (the match's delegate hears each one).
    public func addPlayers(to match: GKMatch, matchRequest: GKMatchRequest) async throws {
        let info = try await submit(matchRequest, hosted: false, matchID: match.matchID)
        match.membersChanged(to: info.players)
    }

    /// Completion-handler form of ``addPlayers(to:matchRequest:)``: called once with nil when the new players are
    /// in, or with the error.
    public func addPlayers(to match: GKMatch, matchRequest: GKMatchRequest, completionHandler: @escaping @Sendable ((any Error)?) -> Void) {
        CompletionHandler.run(completionHandler) { try await self.addPlayers(to: match, matchRequest: matchRequest) }
    }

    /// Stops every request of this device that is still waiting: each pending call throws `cancelled`, and the
    /// requests have left the server's queue by then. Cancelling when nothing waits does nothing.
    public func cancel() {
        let requestIDs = state.withLock { Array($0.pending.keys) }
        for requestID in requestIDs { cancel(requestID: requestID) }
    }

    /// Calls waiting for a match, and how many of them the server has received (for tests).
    var waitingRequests: (registered: Int, sent: Int) {
        state.withLock { state in (state.pending.count, state.pending.values.filter(\.sent).count) }
    }

    /// Invitations and friend lists kept until an `inviteHandler` is set (for tests).
    var heldForInviteHandler: Int {
        state.withLock { $0.waitingForHandler.count }
    }

    /// Tells the matchmaking screens of a hosted match that `playerID` connected to the game's own server.
    public func setHostedPlayerReady(_ playerID: String) {
        for controller in state.withLock({ $0.controllers.values.compactMap(\.controller) }) {
            controller.hostedPlayerReady(playerID)
        }
    }

    // MARK: Invitations

    /// Invitations the local player received in this game and has not answered on this device, oldest first: what a
    /// game shows so the player can ``accept(_:)`` or decline one (each also came as an
    /// ``GKGameCenterEvent/invitationReceived(_:)`` event). Invitations cancelled by their inviter leave the list.
    public var receivedInvites: [GKInvite] {
        guard let device = try? device else { return [] }
        return state.withLock { $0.received }.map { GKInvite(info: $0, device: device) }
    }

    /// The player accepts `invite`: the ``inviteHandler`` is called with it accepted (``GKInvite/isAccepted``), as
    /// the seed's `acceptedInvite` (or keeps it until a handler is set); the game then joins with ``match(for:)``.
    public func accept(_ invite: GKInvite) {
        var info = invite.info
        info.acceptedAt = info.acceptedAt ?? Date()
        deliver(info, nil)
    }

    /// Forgets a received invitation once it is answered or gone.
    func answered(_ invitationID: String) {
        state.withLock { state in state.received.removeAll { $0.invitationID == invitationID } }
    }

    // MARK: Activity

    /// Players of this game who asked for a match in the last 2 minutes.
    public func queryActivity() async throws -> Int {
        let activity: MatchmakingActivity = try await device.authenticated(.get, "/v1/matchmaking/activity")
        return activity.players
    }

    /// Completion-handler form of ``queryActivity()``, as the seed's `queryActivityWithCompletionHandler:`: the count,
    /// or 0 and the error.
    public func queryActivity(completionHandler: @escaping @Sendable (Int, (any Error)?) -> Void) {
        CompletionHandler.run({ players, error in completionHandler(players ?? 0, error) }) { try await self.queryActivity() }
    }

    /// Players of this game and `playerGroup` who asked for a match in the last 2 minutes.
    public func queryPlayerGroupActivity(_ playerGroup: UInt32) async throws -> Int {
        let activity: MatchmakingActivity = try await device.authenticated(.get, "/v1/matchmaking/activity?playerGroup=\(playerGroup)")
        return activity.players
    }

    /// Completion-handler form of ``queryPlayerGroupActivity(_:)``: the count, or 0 and the error.
    public func queryPlayerGroupActivity(_ playerGroup: UInt32, completionHandler: @escaping @Sendable (Int, (any Error)?) -> Void) {
        CompletionHandler.run({ players, error in completionHandler(players ?? 0, error) }) {
            try await self.queryPlayerGroupActivity(playerGroup)
        }
    }

    /// Match requests that entered the rule-based queue `queueName` in the last 60 seconds.
    public func queryQueueActivity(_ queueName: String) async throws -> Int {
        guard let path = queueName.addingPercentEncoding(withAllowedCharacters: .alphanumerics.union(CharacterSet(charactersIn: "-."))) else {
            throw GKError(.invalidParameter, "queueName cannot be sent")
        }
        let activity: QueueActivity = try await device.authenticated(.get, "/v1/matchmaking/queues/\(path)/activity")
        return activity.requests
    }

    /// Completion-handler form of ``queryQueueActivity(_:)``: the count, or 0 and the error.
    public func queryQueueActivity(_ queueName: String, completionHandler: @escaping @Sendable (Int, (any Error)?) -> Void) {
        CompletionHandler.run({ requests, error in completionHandler(requests ?? 0, error) }) { try await self.queryQueueActivity(queueName) }
    }

    /// Why this matchmaker's request in a rule-based queue (``GKMatchRequest/queueName``) is still waiting: how many
    /// requests wait in its queue, how many of them passed each stage of the queue's rules with it, the rules that turn
    /// away the most, and how long requests of the queue matched in the last 15 minutes waited. Nil when none of this
    /// matchmaker's requests waits in a rule-based queue (not sent yet, matched, cancelled, or classic matchmaking).
    public func explainWaiting() async throws -> GKMatchmakingExplanation? {
        let sent = state.withLock { $0.pending.filter(\.value.sent).keys.sorted() }
        for requestID in sent {
            let status: MatchRequestStatus = try await device.authenticated(.get, "/v1/matchmaking/requests/\(requestID)?explain=true")
            if let explanation = status.explanation { return explanation }
        }
        return nil
    }

    /// Completion-handler form of ``explainWaiting()``.
    public func explainWaiting(completionHandler: @escaping @Sendable (GKMatchmakingExplanation?, (any Error)?) -> Void) {
        CompletionHandler.run({ explanation, error in completionHandler(explanation ?? nil, error) }) { try await self.explainWaiting() }
    }

    // MARK: Requests

    /// Sends a request and waits for its match; `requestID` lets a caller follow it (the lobby model polls it), and
    /// `onSent` runs once the server holds the request.
    func submit(
        _ request: GKMatchRequest, hosted: Bool, matchID: String?,
        requestID: String = UUID().uuidString.lowercased(), onSent: (@Sendable () -> Void)? = nil
    ) async throws -> MatchInfo {
        try request.check()
        let device = try self.device
        _ = try device.requireToken()
        try await waitForChannel()
        let body = request.body(requestID: requestID, hosted: hosted, matchID: matchID)
        let responses = request.inviteeResponseHandler
        return try await awaitMatch(requestID: requestID, inviteeResponses: responses) {
            try await self.sendOnceTheChannelIsOpen {
                let _: MatchRequestStatus = try await device.authenticated(.post, "/v1/matchmaking/requests", body: body)
            }
            onSent?()
        }
    }

    /// Sends a request that the server takes only while this device's realtime channel is open. When the server
    /// saw the channel close before the device did (it answers `communicationsFailure` saying so, and stores
    /// nothing), the request is sent once more after the channel has reconnected.
    private func sendOnceTheChannelIsOpen(_ send: @Sendable () async throws -> Void) async throws {
        do {
            try await send()
        } catch let error as GKError where error.code == .communicationsFailure && error.message.hasPrefix("open the realtime channel") {
            try await Task.sleep(for: .milliseconds(200))
            try await waitForChannel()
            try await send()
        }
    }

    /// Accepts an invitation and waits for its match.
    func join(_ invite: GKInvite, requestID: String = UUID().uuidString.lowercased()) async throws -> MatchInfo {
        answered(invite.invitationID)
        let device = try self.device
        _ = try device.requireToken()
        try await waitForChannel()
        return try await awaitMatch(requestID: requestID, inviteeResponses: nil) {
            try await self.sendOnceTheChannelIsOpen {
                let _: MatchRequestStatus = try await device.authenticated(
                    .post, "/v1/invitations/\(invite.invitationID)/accept", body: AcceptInvitation(requestID: requestID)
                )
            }
        }
    }

    /// Registers the request before sending it (its match may be pushed before the answer arrives), then waits.
    private func awaitMatch(
        requestID: String, inviteeResponses: (@Sendable (String, GKInviteeState) -> Void)?, send: @escaping @Sendable () async throws -> Void
    ) async throws -> MatchInfo {
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<MatchInfo, any Error>) in
                state.withLock { $0.pending[requestID] = PendingRequest(continuation: continuation, inviteeResponses: inviteeResponses) }
                Task {
                    do {
                        try await send()
                    } catch {
                        self.resolve(requestID, with: .failure(error))
                        return
                    }
                    // A cancel that came while the request was on its way withdraws it now that the server has it.
                    let cancelRequested = self.state.withLock { state -> Bool in
                        state.pending[requestID]?.sent = true
                        return state.cancelling.contains(requestID)
                    }
                    if cancelRequested { await self.withdraw(requestID) }
                }
            }
        } onCancel: {
            cancel(requestID: requestID)
        }
    }

    /// Cancels one request: withdrawn from the server now if it arrived there, or as soon as it does.
    func cancel(requestID: String) {
        let sent = state.withLock { state -> Bool? in
            guard let pending = state.pending[requestID], state.cancelling.insert(requestID).inserted else { return nil }
            return pending.sent
        }
        guard sent == true else { return }
        Task { await withdraw(requestID) }
    }

    /// Takes a request out of the server's queue, then ends its call with `cancelled` (unless its match won the race).
    private func withdraw(_ requestID: String) async {
        guard let device = try? device else { return }
        do {
            let _: APIClient.Empty = try await device.authenticated(.delete, "/v1/matchmaking/requests/\(requestID)")
        } catch {
            device.logger.debug("cancelling a match request", metadata: [LogKey.requestID: "\(requestID)", LogKey.error: "\(error)"])
        }
        resolve(requestID, with: .failure(GKError(.cancelled, "the match request was cancelled")))
    }

    /// Ends every waiting call with `error` (the device closed, or the player signed out).
    func failAll(_ error: GKError) {
        let requestIDs = state.withLock { Array($0.pending.keys) }
        for requestID in requestIDs { resolve(requestID, with: .failure(error)) }
    }

    private func resolve(_ requestID: String, with result: Result<MatchInfo, any Error>) {
        let pending = state.withLock { state in
            state.cancelling.remove(requestID)
            return state.pending.removeValue(forKey: requestID)
        }
        pending?.continuation.resume(with: result)
    }

    /// The match `info` describes, connected; `relayOnly` keeps this device's data on the relay.
    func makeMatch(_ info: MatchInfo, relayOnly: Bool = false) throws -> GKMatch {
        let device = try self.device
        guard let playerID = device.state.withLock({ $0.session?.player.playerID }) else {
            throw GKError(.notAuthenticated, "the player signed out while the match formed")
        }
        let match = GKMatch(info: info, localPlayerID: playerID, relayOnly: relayOnly, device: device)
        state.withLock { $0.matches[info.matchID] = WeakMatch(match: match) }
        match.connect()
        return match
    }

    func forget(_ match: GKMatch) {
        state.withLock { _ = $0.matches.removeValue(forKey: match.matchID) }
    }

    func register(_ controller: GKMatchmakerViewController) {
        state.withLock { $0.controllers[ObjectIdentifier(controller)] = WeakController(controller: controller) }
    }

    func unregister(_ controller: GKMatchmakerViewController) {
        state.withLock { _ = $0.controllers.removeValue(forKey: ObjectIdentifier(controller)) }
    }

    // MARK: The realtime channel

    /// Waits (up to 10 s) until the realtime channel is open: a request made without it would be refused.
    private func waitForChannel() async throws {
        let deadline = ContinuousClock.now + .seconds(10)
        while !state.withLock({ $0.channelOpen }) {
            guard ContinuousClock.now < deadline else {
                throw GKError(.communicationsFailure, "the realtime channel to Game Center is not open; a match request needs it")
            }
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    /// The channel opened (again): fetch invitations sent while it was closed, and settle requests that were
    /// waiting when it dropped.
    func channelOpened() {
        let interrupted = state.withLock { state -> [String] in
            state.channelOpen = true
            defer { state.interrupted = [] }
            return Array(state.interrupted)
        }
        guard let device = try? device else { return }
        Task {
            for requestID in interrupted { await settleInterrupted(requestID, device: device) }
            do {
                let list: InvitationList = try await device.authenticated(.get, "/v1/invitations")
                for invitation in list.invitations { deliver(invitation, nil) }
            } catch {
                device.logger.debug("loading invitations failed", metadata: [LogKey.error: "\(error)"])
            }
            await claimPlayWithFriends(device: device)
        }
    }

    /// Takes the friends the player chose in the Game Center app to play this game with (the server hands each
    /// choice to one device, once) and passes them to the invitation handler.
    private func claimPlayWithFriends(device: GKGameCenter) async {
        do {
            let list: PlayWithFriendsList = try await device.authenticated(.post, "/v1/matchmaking/play-with-friends/claim")
            for choice in list.choices {
                if choice.turnBased == true {
                    device.turnBasedListeners.requestMatch(with: choice.playerIDs, playerID: device.localPlayer.playerID)
                } else {
                    deliver(nil, choice.playerIDs)
                }
            }
        } catch {
            device.logger.debug("claiming friends to play with failed", metadata: [LogKey.error: "\(error)"])
        }
    }

    /// The channel dropped: the server took this device's requests out of its queue.
    func channelClosed() {
        state.withLock { state in
            state.channelOpen = false
            state.interrupted.formUnion(state.pending.keys)
        }
    }

    private func settleInterrupted(_ requestID: String, device: GKGameCenter) async {
        do {
            let status: MatchRequestStatus = try await device.authenticated(.get, "/v1/matchmaking/requests/\(requestID)")
            if status.state == .matched, let matchID = status.matchID {
                var info: MatchInfo = try await device.authenticated(.get, "/v1/matches/\(matchID)")
                info.requestID = requestID
                resolve(requestID, with: .success(info))
                return
            }
            if status.state == .waiting { return }
        } catch {
            device.logger.debug("checking an interrupted match request", metadata: [LogKey.error: "\(error)"])
        }
        resolve(
            requestID,
            with: .failure(
                GKError(
                    .communicationsFailure, "the connection to Game Center dropped while the request waited; it left the queue"
                )))
    }

    /// A matchmaking event from the realtime channel.
    func handle(_ kind: EventKind, payload: Data, bundleID: String) {
        let decoder = WireCoding.makeDecoder()
        switch kind {
        case .matchInvitation, .invitationAccepted:
            if let info = try? decoder.decode(InvitationInfo.self, from: payload), info.bundleID == bundleID { deliver(info, nil) }
        case .invitationCancelled:
            if let cancelled = try? decoder.decode(InvitationCancelled.self, from: payload) {
                state.withLock { state in
                    state.waitingForHandler.removeAll { $0.0?.invitationID == cancelled.invitationID }
                    state.received.removeAll { $0.invitationID == cancelled.invitationID }
                }
            }
        case .inviteeAnswered:
            if let answer = try? decoder.decode(InviteeAnswered.self, from: payload), answer.bundleID == bundleID {
                let (handler, controllers) = state.withLock { state in
                    (state.pending[answer.requestID]?.inviteeResponses, state.controllers.values.compactMap(\.controller))
                }
                handler?(answer.playerID, GKInviteeState(answer.state))
                for controller in controllers { controller.inviteeAnswered(answer) }
            }
        case .matchFound:
            if let info = try? decoder.decode(MatchInfo.self, from: payload), info.bundleID == bundleID { matchFound(info) }
        case .matchRequestFailed:
            if let failed = try? decoder.decode(MatchRequestFailed.self, from: payload), failed.bundleID == bundleID {
                resolve(failed.requestID, with: .failure(GKError(.cancelled, "the match did not start: \(failed.reason)")))
            }
        case .matchPlayerLeft:
            if let left = try? decoder.decode(MatchPlayerLeft.self, from: payload) {
                state.withLock { $0.matches[left.matchID]?.match }?.memberLeft(left.playerID)
            }
        case .playWithFriends:
            // The event says a choice waits; claiming it makes sure one device gets it, once.
            if let chosen = try? decoder.decode(PlayWithFriends.self, from: payload), chosen.bundleID == bundleID, let device = try? device {
                Task { await claimPlayWithFriends(device: device) }
            }
        default:
            break
        }
    }

    private func matchFound(_ info: MatchInfo) {
        if let requestID = info.requestID, state.withLock({ $0.pending[requestID] != nil }) {
            resolve(requestID, with: .success(info))
        } else if let match = state.withLock({ $0.matches[info.matchID]?.match }) {
            match.membersChanged(to: info.players)
        }
    }

    /// Hands an accepted invitation (or a friend list) to the handler once, or keeps it until a handler is set. An
    /// unanswered invitation is announced once instead (an event, and ``receivedInvites``) until it is answered.
    private func deliver(_ info: InvitationInfo?, _ players: [String]?) {
        if let info, info.acceptedAt == nil {
            let isNew = state.withLock { state in
                guard state.delivered.insert(info.invitationID).inserted else { return false }
                state.received.append(info)
                return true
            }
            if isNew, let device = try? device { device.eventHub.publish(.invitationReceived(GKInvite(info: info, device: device))) }
            return
        }
        let handler = state.withLock { state -> (@Sendable (GKInvite?, [String]?) -> Void)? in
            if let info {
                guard state.delivered.insert("\(info.invitationID) accepted").inserted else { return nil }
                // Once accepted, the unanswered form is stale: not announced later, and no longer listed.
                state.delivered.insert(info.invitationID)
                state.received.removeAll { $0.invitationID == info.invitationID }
            }
            guard let handler = state.inviteHandler else {
                state.waitingForHandler.append((info, players))
                return nil
            }
            return handler
        }
        guard let handler, let device = try? device else { return }
        handler(info.map { GKInvite(info: $0, device: device) }, players)
    }
}

/// What the matchmaker tracks.
private struct MatchmakerState: Sendable {
    var device = WeakDevice(device: nil)
    var pending: [String: PendingRequest] = [:]
    var cancelling: Set<String> = []
    var interrupted: Set<String> = []
    var channelOpen = false
    var matches: [String: WeakMatch] = [:]
    var controllers: [ObjectIdentifier: WeakController] = [:]
    var inviteHandler: (@Sendable (GKInvite?, [String]?) -> Void)?
    var waitingForHandler: [(InvitationInfo?, [String]?)] = []
    var delivered: Set<String> = []
    /// Invitations announced and not answered yet, oldest first.
    var received: [InvitationInfo] = []
}

/// A request waiting for its match.
private struct PendingRequest {
    let continuation: CheckedContinuation<MatchInfo, any Error>
    let inviteeResponses: (@Sendable (String, GKInviteeState) -> Void)?
    /// Whether the server has accepted the request (so a cancel must withdraw it there).
    var sent = false
}

private struct WeakMatch {
    weak var match: GKMatch?
}

private struct WeakController {
    weak var controller: GKMatchmakerViewController?
}

private struct WeakDevice: Sendable {
    weak var device: GKGameCenter?
}
