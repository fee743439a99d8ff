import Foundation
import GameCenterProtocol
import Synchronization

/// The player signed in on a device. Every Game Center feature needs one: authenticate first.
public final class GKLocalPlayer: GKPlayer, @unchecked Sendable {
    // `@unchecked Sendable`: the handler is behind a Mutex; `device` is set once, in `GKGameCenter.init`, before the
    // player is shared.
    private weak var device: GKGameCenter?
    private let handler = Mutex<Callback<(any Error)?>?>(nil)

    init() {
        super.init(profile: PlayerProfile(playerID: "", alias: "", isFriend: false))
    }

    func attach(to device: GKGameCenter) {
        self.device = device
    }

    var gameCenter: GKGameCenter {
        guard let device else { preconditionFailure("the GKGameCenter of this local player was deallocated") }
        return device
    }

    private var session: SavedSession? { gameCenter.state.withLock { $0.session } }

    /// The player on the default device (`GKGameCenter.default.localPlayer`).
    public static var local: GKLocalPlayer { GKGameCenter.default.localPlayer }

    /// Empty until a player is signed in.
    public override var playerID: String { session?.player.playerID ?? "" }
    /// Empty until a player is signed in.
    public override var alias: String { session?.player.alias ?? "" }
    /// The local player is never their own friend.
    public override var isFriend: Bool { false }
    /// The local player's status message.
    public override var status: String? { session?.player.status }
    /// Whether a player is signed in on this device. Check it, not the error, after ``authenticate(_:)``.
    public var isAuthenticated: Bool { session != nil }
    /// Underage players cannot send or accept friend requests.
    public var isUnderage: Bool { session?.player.underage ?? false }
    /// Whether this player may not talk to other players (voice chat): an underage account, or a device whose owner
    /// turned voice chat off (``GKDeviceRestrictions``).
    public var isPersonalizedCommunicationRestricted: Bool { communicationRestriction != nil }

    /// Why this player may not talk to others, or nil when they may.
    var communicationRestriction: String? {
        if isUnderage { return "parental controls block it for an underage account" }
        let restrictions = gameCenter.restrictions
        if let problem = restrictions.problem { return "the device's restrictions keep it off: \(problem)" }
        if !restrictions.allowsVoiceChat { return "the device's owner turned it off (\"voiceChat\": false in \(gameCenter.restrictionsFile.path))" }
        return nil
    }
    /// The friends' player ids: nil until ``loadFriends()``.
    public var friends: [String]? { gameCenter.state.withLock { $0.friends } }

    /// Called on every change of the signed-in state: sign-in (nil), failed sign-in (the error), sign-out (nil),
    /// and a session that ends elsewhere — revoked or expired (`notAuthenticated`). Runs on no particular thread.
    public var authenticateHandler: (@Sendable ((any Error)?) -> Void)? {
        get { handler.withLock { $0 }?.call }
        set { handler.withLock { $0 = newValue.map(Callback.init) } }
    }

    private func notify(_ error: (any Error)?) {
        handler.withLock { $0 }?.call(error)
    }

    /// Signs a player in (or up, or resumes the saved session) and starts the realtime channel.
    ///
    /// The error tells "no Game Center here" from "not now": ``GKError/Code/notSupported`` when the device has no
    /// server configured or what answers there is not a Game Center server, ``GKError/Code/gameUnrecognized`` when the
    /// server does not know this game (its bundle id or client key) — turn Game Center features off, as the seed asks
    /// — and ``GKError/Code/communicationsFailure`` when the server cannot be reached now: try again later.
    ///
    /// With `.stored`, when the server cannot be reached but a saved session exists, the player is authenticated
    /// from the saved data (``isAuthenticated`` is true) and the `communicationsFailure` is still thrown, as the
    /// seed describes; the realtime channel keeps trying to connect.
    public func authenticate(_ credentials: GKCredentials) async throws {
        try await authenticate { device in try await self.openSession(credentials, device: device) }
    }

    /// Signs in with a session the server opened for this device (a sign-in the player confirmed in the Game Center
    /// app, ``GKSignInViewController``), as ``authenticate(_:)`` does.
    func authenticate(with response: SessionResponse) async throws {
        try await authenticate { device in self.saved(response, device: device) }
    }

    private func authenticate(_ open: @Sendable (GKGameCenter) async throws -> SavedSession) async throws {
        let device = gameCenter
        guard device.hasServer else {
            notify(APIClient.noServer)
            throw APIClient.noServer
        }
        let busy = device.state.withLock { state -> Bool in
            if state.authenticating { return true }
            state.authenticating = true
            return false
        }
        if busy { throw GKError(.authenticationInProgress, "another authentication is in progress on this device") }
        defer { device.state.withLock { $0.authenticating = false } }
        do {
            let saved = try await open(device)
            install(saved, device: device)
            await device.retryOutbox()
            notify(nil)
        } catch let error as GKError where error.code == .communicationsFailure && isAuthenticated {
            notify(error)
            throw error
        } catch {
            notify(error)
            throw error
        }
    }

    /// The most times the device's players may dismiss the standard sign-in that ``authenticate()`` starts (answer
    /// "Not now", or let it expire), in any game, before the device remembers that they opted out of Game Center.
    public static let signInDismissalsBeforeOptOut = 3

    /// Authenticates as the seed's games do, with nothing to give: the player signed in on the device is restored (this
    /// game's saved session, or a session opened from another game's), or else the standard sign-in starts by itself —
    /// the Game Center app's sign-in in the player's browser (``GKSignInViewController/present()``) — and this returns
    /// once the player confirmed there. Call it at every launch, as the seed asks.
    ///
    /// A player who dismissed that sign-in ``signInDismissalsBeforeOptOut`` times, in any game on the device, opted out
    /// of Game Center: the device remembers it for every game, and this then returns at once with
    /// ``GKError/Code/cancelled``, opening nothing, until the player signs in from any game (its sign-in screen, or
    /// ``authenticate(_:)`` with an account) — the seed's "do not implement your own mechanism".
    public func authenticate() async throws {
        let device = gameCenter
        if !device.hasServer || device.sessionFile.load() != nil || device.devicePlayerFile.load() != nil {
            do {
                try await authenticate(.stored)
                return
            } catch let error as GKError where error.code == .notAuthenticated && !isAuthenticated {
                // Nobody is signed in after all (the sessions ended): the player signs in below.
            }
        }
        let dismissals = device.signInOptOutFile.load()?.dismissals ?? 0
        guard dismissals < Self.signInDismissalsBeforeOptOut else {
            let error = GKError(
                .cancelled,
                "the player opted out of Game Center on this device (they dismissed its sign-in \(dismissals) times); they can sign in from a game's sign-in screen"
            )
            notify(error)
            throw error
        }
        do {
            try await GKSignInViewController(in: device).present()
        } catch let error as GKError where (error.code == .cancelled || error.code == .notAuthenticated) && !Task.isCancelled {
            // "Not now" (cancelled), or the page left unanswered until it expired (notAuthenticated).
            device.signInOptOutFile.update { $0 = DeviceSignInOptOut(dismissals: ($0?.dismissals ?? 0) + 1) }
            notify(error)
            throw error
        }
    }

    /// The completion-handler form of ``authenticate()``.
    public func authenticate(completionHandler: @escaping @Sendable ((any Error)?) -> Void) {
        CompletionHandler.run(completionHandler) { try await self.authenticate() }
    }

    /// The completion-handler form of ``authenticate(_:)``.
    public func authenticate(_ credentials: GKCredentials, completionHandler: @escaping @Sendable ((any Error)?) -> Void) {
        CompletionHandler.run(completionHandler) { try await self.authenticate(credentials) }
    }

    private func openSession(_ credentials: GKCredentials, device: GKGameCenter) async throws -> SavedSession {
        let response: SessionResponse
        switch credentials {
        case .signUp(let account, let password, let alias, let underage):
            response = try await device.api.send(
                .POST, "/v1/accounts",
                body: SignUpRequest(account: account, password: password, alias: alias, underage: underage), as: SessionResponse.self)
        case .signIn(let account, let password):
            response = try await device.api.send(
                .POST, "/v1/sessions", body: SignInRequest(account: account, password: password),
                as: SessionResponse.self)
        case .stored:
            return try await resumeSavedSession(device: device)
        }
        return saved(response, device: device)
    }

    /// What the device keeps of a session the server opened.
    private func saved(_ response: SessionResponse, device: GKGameCenter) -> SavedSession {
        SavedSession(
            server: device.server.absoluteString, bundleID: device.bundleID, environment: device.environment,
            token: response.token, sessionID: response.sessionID, expiresAt: response.expiresAt,
            player: response.player, eventCursor: response.eventCursor
        )
    }

    /// This game's saved session, or else a session for this game opened from another game's session of the player
    /// signed in on the device (the seed: one player per device, for every game).
    private func resumeSavedSession(device: GKGameCenter) async throws -> SavedSession {
        let devicePlayer = device.devicePlayerFile.load()
        if var saved = device.sessionFile.load(), saved.server == device.server.absoluteString, saved.bundleID == device.bundleID,
            saved.environment == device.environment, devicePlayer == nil || devicePlayer?.playerID == saved.player.playerID
        {
            do {
                saved.player = try await device.api.send(.GET, "/v1/me", token: saved.token, as: LocalPlayerProfile.self)
                return saved
            } catch let error as GKError where error.code == .notAuthenticated {
                device.sessionFile.delete()
                if devicePlayer == nil { throw error }
            } catch let error as GKError where error.code == .communicationsFailure {
                install(saved, device: device)
                throw error
            }
        }
        guard let devicePlayer else {
            throw GKError(.notAuthenticated, "nobody is signed in on this device for this server and environment; sign in or sign up")
        }
        return try await openGameSession(for: devicePlayer, device: device)
    }

    /// Opens a session for this game from one of the device player's sessions of other games; sessions the server no
    /// longer knows are forgotten, and with none left nobody is signed in on the device.
    private func openGameSession(for devicePlayer: DevicePlayer, device: GKGameCenter) async throws -> SavedSession {
        for (bundleID, session) in devicePlayer.sessions.sorted(by: { $0.key < $1.key }) {
            do {
                let response = try await device.api.send(
                    .POST, "/v1/sessions/for-game", body: GameSessionRequest(token: session.token), as: SessionResponse.self)
                return saved(response, device: device)
            } catch let error as GKError where error.code == .notAuthenticated {
                device.devicePlayerFile.update { $0?.sessions[bundleID] = nil }
            }
        }
        device.devicePlayerFile.update { if $0?.sessions.isEmpty == true { $0 = nil } }
        throw GKError(.notAuthenticated, "the player signed in on this device has signed out; sign in or sign up")
    }

    private func install(_ saved: SavedSession, device: GKGameCenter) {
        try? device.sessionFile.save(saved)
        device.devicePlayerFile.update { player in
            if player?.playerID != saved.player.playerID { player = DevicePlayer(playerID: saved.player.playerID, sessions: [:]) }
            player?.sessions[device.bundleID] = DevicePlayer.GameSession(token: saved.token, sessionID: saved.sessionID)
        }
        // A player signed in: whatever dismissals of the sign-in the device remembered no longer count.
        device.signInOptOutFile.update { $0 = nil }
        let previous = device.state.withLock { state -> Task<Void, Never>? in
            let previous = state.session?.token == saved.token ? nil : state.realtime
            if state.session?.player.playerID != saved.player.playerID { state.friends = nil }
            state.session = saved
            if previous != nil || state.realtime == nil {
                state.realtime = RealtimeClient(device: device, token: saved.token).start()
            }
            if state.devicePlayerWatch == nil { state.devicePlayerWatch = followDevicePlayer() }
            return previous
        }
        previous?.cancel()
    }

    /// How often a running game looks at the player signed in on the device.
    static let devicePlayerPollInterval: Duration = .milliseconds(250)

    /// Follows the player signed in on the device while the game runs, as the seed's one player per device ("only one
    /// player can be connected to Game Center at a time"): when another game on the device signs out, this game's
    /// session ends at once (``authenticateHandler`` hears `notAuthenticated`); when another game signs a different
    /// player in, this game moves to them (the handler hears nil, and ``playerID`` is theirs).
    private func followDevicePlayer() -> Task<Void, Never> {
        Task { [weak self] in
            var tried: DevicePlayer?
            while !Task.isCancelled {
                try? await Task.sleep(for: Self.devicePlayerPollInterval)
                guard let self else { return }
                await self.followDevicePlayerOnce(skipping: &tried)
            }
        }
    }

    /// Looks once; a move to `tried` that failed is not tried again until the device's player changes.
    private func followDevicePlayerOnce(skipping tried: inout DevicePlayer?) async {
        guard let device else { return }
        let (session, busy) = device.state.withLock { ($0.session, $0.authenticating) }
        guard let session, !busy else { return }
        guard let devicePlayer = device.devicePlayerFile.load() else {
            await sessionEnded(token: session.token, error: GKError(.notAuthenticated, "the player signed out in another game on this device"))
            return
        }
        guard devicePlayer.playerID != session.player.playerID, devicePlayer != tried else { return }
        tried = devicePlayer
        do {
            try await authenticate { device in try await self.openGameSession(for: devicePlayer, device: device) }
            // The previous player's session of this game is no longer the device's: end it on the server too.
            _ = try? await device.api.send(.DELETE, "/v1/sessions/current", token: session.token, as: APIClient.Empty.self)
        } catch {
            // The handler heard why; the next look tries again.
        }
    }

    /// Registers `listener` for turn-based events (held weakly: keep it alive while it should hear them).
    public func register(_ listener: any GKTurnBasedEventListener) {
        gameCenter.turnBasedListeners.register(listener)
    }

    /// Stops `listener` hearing turn-based events.
    public func unregisterListener(_ listener: any GKTurnBasedEventListener) {
        gameCenter.turnBasedListeners.unregister(listener)
    }

    /// Stops every registered listener hearing anything: turn-based events and changes to saves.
    public func unregisterAllListeners() {
        gameCenter.turnBasedListeners.unregisterAll()
        gameCenter.savedGameListeners.unregisterAll()
    }

    /// Signs out on the server and on this device, for every game: the device's player and this game's saved session
    /// are deleted and the player's sessions of the device's other games end too (running games hear it in their
    /// ``authenticateHandler``), as the seed's one player per device.
    public func signOut() async {
        let device = gameCenter
        guard let token = device.state.withLock({ $0.session?.token }) else { return }
        // Locally first, so the game hears exactly one change (not the echo from the realtime channel).
        await sessionEnded(token: token, error: nil)
        var others: [String: DevicePlayer.GameSession] = [:]
        device.devicePlayerFile.update { player in
            others = player?.sessions.filter { $0.key != device.bundleID } ?? [:]
            player = nil
        }
        for session in others.values {
            _ = try? await device.api.send(.DELETE, "/v1/sessions/\(pathComponent(session.sessionID))", token: token, as: APIClient.Empty.self)
        }
        _ = try? await device.api.send(.DELETE, "/v1/sessions/current", token: token, as: APIClient.Empty.self)
    }

    /// Signs out and calls `completionHandler` once it is done.
    public func signOut(completionHandler: @escaping @Sendable () -> Void) {
        CompletionHandler.run(completionHandler) { await self.signOut() }
    }

    /// Forgets the session `token` if it is still the current one, and tells the game.
    func sessionEnded(token: String, error: (any Error)?) async {
        let device = gameCenter
        let ended = device.state.withLock { state -> Task<Void, Never>?? in
            guard state.session?.token == token else { return .none }
            state.session = nil
            state.friends = nil
            defer { state.realtime = nil }
            return .some(state.realtime)
        }
        guard case .some(let realtime) = ended else { return }
        realtime?.cancel()
        device.matchmaker.failAll(GKError(.notAuthenticated, "the player signed out while the match request waited"))
        await device.outbox.stopRetrying()
        await device.savedGameOutbox.stopRetrying()
        device.sessionFile.delete()
        device.devicePlayerFile.update { player in
            guard player?.sessions[device.bundleID]?.token == token else { return }
            player?.sessions[device.bundleID] = nil
            if player?.sessions.isEmpty == true { player = nil }
        }
        notify(error)
        device.eventHub.publish(.signedOut(reason: (error as? GKError)?.message ?? "signed out"))
    }

    /// Loads the friends' player ids (also kept in ``friends``).
    ///
    /// When a load fails because the server cannot be reached (or is failing), the error carries the friends this
    /// device last knew (``friends``): `error.partialResult(as: [String].self)`.
    @discardableResult
    public func loadFriends() async throws -> [String] {
        let list: FriendList
        do {
            list = try await gameCenter.authenticated(.get, "/v1/friends", as: FriendList.self)
        } catch var error as GKError {
            if error.isTransient, let known = friends { error.partialResult = known }
            throw error
        }
        gameCenter.state.withLock { $0.friends = list.playerIDs }
        return list.playerIDs
    }

    /// Loads the friends' player ids and calls `completionHandler` once with them (or, after a failure, the ones
    /// last known) and any error, as the seed's `loadFriendsWithCompletionHandler:` does.
    public func loadFriends(completionHandler: @escaping @Sendable ([String]?, (any Error)?) -> Void) {
        CompletionHandler.run(completionHandler) { try await self.loadFriends() }
    }

    /// Sets the status message friends see (at most 140 characters; empty clears it).
    public func setStatus(_ message: String) async throws {
        try await updateProfile(UpdateProfileRequest(status: message))
    }

    /// Sets the status message and calls `completionHandler` once with nil or the error.
    public func setStatus(_ message: String, completionHandler: @escaping @Sendable ((any Error)?) -> Void) {
        CompletionHandler.run(completionHandler) { try await self.setStatus(message) }
    }

    /// Changes the alias others see (1 to 32 characters).
    public func setAlias(_ alias: String) async throws {
        try await updateProfile(UpdateProfileRequest(alias: alias))
    }

    /// Changes the alias and calls `completionHandler` once with nil or the error.
    public func setAlias(_ alias: String, completionHandler: @escaping @Sendable ((any Error)?) -> Void) {
        CompletionHandler.run(completionHandler) { try await self.setAlias(alias) }
    }

    /// Items the game sends its own server so that server can check who the local player is, as GameKit's: the
    /// server downloads the certificate at `publicKeyURL` and checks `signature` (RSA with SHA-256) over the player id
    /// (UTF-8), the bundle id (UTF-8), `timestamp` (milliseconds since 1970, 8 bytes big-endian) and `salt`.
    public func fetchItemsForIdentityVerificationSignature() async throws -> (publicKeyURL: URL, signature: Data, salt: Data, timestamp: UInt64) {
        let items = try await identityVerificationItems()
        guard let url = URL(string: items.publicKeyURL) else {
            throw GKError(.communicationsFailure, "the server answered a publicKeyURL that is not a URL: \(items.publicKeyURL.prefix(100))")
        }
        return (url, items.signature, items.salt, items.timestamp)
    }

    /// Fetches the identity verification items and calls `completionHandler` once with them or the error, as
    /// GameKit's `fetchItems(forIdentityVerificationSignature:)` does.
    public func fetchItems(forIdentityVerificationSignature completionHandler: @escaping @Sendable (URL?, Data?, Data?, UInt64, (any Error)?) -> Void) {
        Task {
            do {
                let items = try await fetchItemsForIdentityVerificationSignature()
                completionHandler(items.publicKeyURL, items.signature, items.salt, items.timestamp, nil)
            } catch {
                completionHandler(nil, nil, nil, 0, error)
            }
        }
    }

    /// A short-lived JSON Web Token (ES256, 10 minutes) saying who the local player is, for a game server that prefers
    /// tokens: `sub` is the player id, `aud` the bundle id, `iss` the Game Center server; its keys are at the server's
    /// `/.well-known/jwks.json`.
    public func fetchIdentityToken() async throws -> String {
        try await identityVerificationItems().identityToken
    }

    private func identityVerificationItems() async throws -> IdentityVerificationItems {
        try await gameCenter.authenticated(.post, "/v1/identity-verification", as: IdentityVerificationItems.self)
    }

    private func updateProfile(_ request: UpdateProfileRequest) async throws {
        let profile = try await gameCenter.authenticated(.patch, "/v1/me", body: request, as: LocalPlayerProfile.self)
        let saved = gameCenter.state.withLock { state -> SavedSession? in
            state.session?.player = profile
            return state.session
        }
        if let saved { try? gameCenter.sessionFile.save(saved) }
    }

    /// Signs this player out everywhere else; their other devices see `notAuthenticated`.
    public func revokeOtherSessions() async throws {
        _ = try await gameCenter.authenticated(.delete, "/v1/sessions/others", as: APIClient.Empty.self)
    }

    /// Signs this player out everywhere else and calls `completionHandler` once with nil or the error.
    public func revokeOtherSessions(completionHandler: @escaping @Sendable ((any Error)?) -> Void) {
        CompletionHandler.run(completionHandler) { try await self.revokeOtherSessions() }
    }

    func advanceCursor(to seq: Int64, token: String) {
        let saved = gameCenter.state.withLock { state -> SavedSession? in
            guard state.session?.token == token, let cursor = state.session?.eventCursor, seq > cursor else { return nil }
            state.session?.eventCursor = seq
            return state.session
        }
        // Not flushed: a cursor lost with the machine's power only has the server send its events again (the
        // game may hear one twice then), and an fsync per event cost more than the event itself.
        if let saved { try? gameCenter.sessionFile.save(saved, flushed: false) }
    }

    func updateFriends(_ change: (inout [String]) -> Void) {
        gameCenter.state.withLock { state in
            guard var friends = state.friends else { return }
            change(&friends)
            state.friends = friends
        }
    }
}
