import Foundation
import GameCenterProtocol
import GameCenterStorage

/// The account rules: sign-up, sign-in (throttled), sessions, profile. Used by HTTP and the realtime channel.
struct AccountService: Sendable {
    let database: Database
    let bus: any EventBus
    let configuration: AccountPolicy
    let credentials: Credentials
    let sessionCache = SessionCache()
    /// Told when a profile or the games a player played change.
    let players: PlayerCache
    let clock: ServerClock
    let limiter: RateLimiter

    init(
        database: Database, bus: any EventBus, configuration: AccountPolicy, players: PlayerCache, limiter: RateLimiter,
        clock: ServerClock
    ) {
        self.limiter = limiter
        self.database = database
        self.bus = bus
        self.players = players
        self.configuration = configuration
        self.credentials = Credentials(bcryptCost: configuration.bcryptCost)
        self.clock = clock
    }

    /// Creates an account and signs it in; each attempt from a client `address` counts against its `sign-ups` limit.
    func signUp(_ request: SignUpRequest, device: DeviceIdentity, from address: ClientAddress?) async throws -> SessionResponse {
        let account = try AccountRules.accountName(request.account)
        try AccountRules.password(request.password)
        let alias = try AccountRules.alias(request.alias)
        let skeleton = AliasSkeleton.of(alias)
        if let address { try limiter.take(.signUps, for: address.key) }
        let now = clock.nowMillis()
        let player = PlayerRecord(
            playerID: Credentials.newID(prefix: "G:"), environment: device.environment.rawValue, accountName: account,
            passwordHash: try await credentials.hashPassword(request.password), alias: alias,
            underage: request.underage ?? false, createdAt: now
        )
        return try await database.write { storage in
            try await Self.refuseLookAlike(alias, skeleton: skeleton, of: player, in: storage)
            guard try await storage.insertPlayer(player, aliasSkeleton: skeleton) else { throw APIError.accountNameTaken(account) }
            return try await openSession(for: player, device: device, now: now, in: storage)
        }
    }

    /// Signs in with an account name and password. Each attempt is counted as a failure of the account and of the
    /// client `address` before its password is checked, in the one transaction that checks both locks, so however
    /// many attempts arrive at once (on however many nodes), no more passwords are checked than the allowances let
    /// through; a success takes its count back.
    ///
    /// The rule against locking a player out: an account's lock lasts at most `maximumLockout` after its last
    /// counted failure, and an address that failed `allowedAddressFailures` times is locked alone — its refused
    /// attempts are neither checked nor counted against any account. Keeping an account locked therefore takes a
    /// steady supply of fresh addresses, and no failures from other addresses ever lock the player's own address.
    func signIn(_ request: SignInRequest, device: DeviceIdentity, from address: ClientAddress?) async throws -> SessionResponse {
        // Any string may be tried; only a well-formed name can exist, but all count towards the throttle.
        let account = request.account.lowercased()
        guard account.count <= 256, request.password.count <= 1024 else { throw APIError.invalidCredentials }
        if let address { try limiter.take(.signIns, for: address.key) }
        let environment = device.environment.rawValue
        let now = clock.nowMillis()
        let throttle = SignInThrottle(policy: configuration)
        let (player, addressLock) = try await database.write { storage in
            let lock = try await throttle.countAttempt(namespace: environment, account: account, address: address, now: now, in: storage)
            return (try await storage.player(environment: environment, accountName: account), lock)
        }
        let valid = try await credentials.verifyPassword(request.password, hash: player?.passwordHash ?? credentials.decoyHash)
        guard let player, valid else { throw APIError.invalidCredentials }
        let opened = try await database.write { storage in
            // A banned player who knows their password is told so (``openSession``); the attempt stays counted.
            try await throttle.succeeded(namespace: environment, account: account, address: address, lock: addressLock, now: now, in: storage)
            return try await openSession(for: player, device: device, now: now, in: storage)
        }
        players.playerChanged(player.playerID)  // the game is now among their recently played
        return opened
    }

    /// Opens a session of the device's game for `player`, expiring after the configured lifetime or at `expiresBy`,
    /// whichever comes first. Throws `account.banned` when the studio banned the player, and
    /// `account.invalid_credentials` when their password changed since `player` was read (checked holding the
    /// player's row, so a ban or new password stored at the same moment ends the session or is seen).
    private func openSession(
        for player: PlayerRecord, device: DeviceIdentity, now: Int64, expiresBy: Int64 = .max, in storage: StorageSession
    ) async throws -> SessionResponse {
        try await Self.refuseClosedAccess(player, in: storage)
        let token = Credentials.newToken()
        let session = SessionRecord(
            sessionID: Credentials.newID(prefix: "s_"), tokenHash: Credentials.tokenHash(token), playerID: player.playerID,
            bundleID: device.game.bundleID, environment: device.environment.rawValue, createdAt: now,
            expiresAt: min(now + Int64(configuration.sessionLifetime * 1000), expiresBy)
        )
        try await storage.insertSession(session)
        try await recordPlay(playerID: player.playerID, device: device, now: now, in: storage)
        return SessionResponse(
            token: token, sessionID: session.sessionID, expiresAt: StoredTime.date(session.expiresAt),
            player: Self.profile(player), eventCursor: player.eventSeq
        )
    }

    /// Opens a session for the device's game from a live session of another game of the same environment: the player
    /// signed in on the device is signed in for every game (the seed). The other session stays, and the new one
    /// expires no later than it: a session cannot be prolonged by opening another from it.
    func openSession(from request: GameSessionRequest, device: DeviceIdentity) async throws -> SessionResponse {
        let other = try await liveSession(token: request.token)
        guard other.environment == device.environment.rawValue else { throw APIError.sessionForOtherGame }
        let now = clock.nowMillis()
        return try await database.write { storage in
            guard let player = try await storage.player(id: other.playerID) else { throw APIError.notAuthenticated }
            return try await openSession(for: player, device: device, now: now, expiresBy: other.expiresAt, in: storage)
        }
    }

    /// Opens a session of the device's game for a player who confirmed its sign-in in the Game Center app
    /// (``DeviceSignInService``).
    func openGameSession(forPlayerID playerID: String, device: DeviceIdentity) async throws -> SessionResponse {
        let now = clock.nowMillis()
        return try await database.write { storage in
            guard let player = try await storage.player(id: playerID) else { throw APIError.deviceSignInExpired }
            return try await openSession(for: player, device: device, now: now, in: storage)
        }
    }

    /// Opens a web-app session for the player of the live game session `sessionID` (a link from the game to a page of
    /// the Game Center app, ``AppTicketService``). It ends no later than that session, so a link cannot prolong a
    /// sign-in; when that session has ended the link has too (`web.link_expired`).
    func openWebSession(fromSessionID sessionID: String, playerID: String) async throws -> SessionResponse {
        let now = clock.nowMillis()
        return try await database.write { storage in
            guard let source = try await storage.session(id: sessionID), source.playerID == playerID, source.revokedAt == nil,
                source.expiresAt > now, let environment = GameCenterProtocol.Environment(rawValue: source.environment),
                let player = try await storage.player(id: playerID)
            else { throw APIError.linkExpired }
            return try await openSession(
                for: player, device: WebAppClient.device(environment: environment), now: now, expiresBy: source.expiresAt, in: storage)
        }
    }

    /// Records that the player is playing the device's game; the web app is no game and is never recorded.
    private func recordPlay(playerID: String, device: DeviceIdentity, now: Int64, in storage: StorageSession) async throws {
        guard !device.isWebApp else { return }
        try await storage.recordPlayedGame(playerID: playerID, bundleID: device.game.bundleID, now: now)
    }

    /// The session a bearer token belongs to, if it is valid for this device now.
    func authenticate(token: String, device: DeviceIdentity) async throws -> AuthenticatedSession {
        let session = try await liveSession(token: token)
        guard session.environment == device.environment.rawValue, session.bundleID == device.game.bundleID else {
            throw APIError.sessionForOtherGame
        }
        return AuthenticatedSession(sessionID: session.sessionID, playerID: session.playerID, expiresAt: session.expiresAt)
    }

    /// The neither revoked nor expired session a token belongs to, of whichever game or environment.
    func liveSession(token: String) async throws -> SessionRecord {
        guard token.count <= 200 else { throw APIError.notAuthenticated }
        let hash = Credentials.tokenHash(token)
        let now = clock.nowMillis()
        var cached = sessionCache.session(tokenHash: hash, now: now)
        if cached == nil, let stored = try await database.read({ try await $0.session(tokenHash: hash) }) {
            sessionCache.store(stored, now: now)
            cached = stored
        }
        guard let session = cached else { throw APIError.notAuthenticated }
        if session.revokedAt != nil { throw APIError.sessionRevoked }
        if session.expiresAt <= now { throw APIError.sessionExpired }
        return session
    }

    /// Throws `account.banned` when the studio banned the player, `account.invalid_credentials` when their password
    /// is no longer the one `player` was read with; holds the player's row until the write ends
    /// (``StorageSession/lockPlayer(id:for:)``).
    private static func refuseClosedAccess(_ player: PlayerRecord, in storage: StorageSession) async throws {
        _ = try await storage.lockPlayer(id: player.playerID, for: .openingSession)
        if try await storage.playerBan(playerID: player.playerID) != nil { throw APIError.accountBanned }
        guard try await storage.player(id: player.playerID)?.passwordHash == player.passwordHash else { throw APIError.invalidCredentials }
    }

    /// The signed-in player replaces their password, typing the current one again (counted by the sign-in throttle
    /// as a sign-in attempt of the account, from `address`); every other session of theirs ends. Returns how many.
    func changePassword(_ request: ChangePasswordRequest, session: AuthenticatedSession, from address: ClientAddress?) async throws -> Int {
        try AccountRules.password(request.newPassword)
        guard request.currentPassword.count <= 1024 else { throw APIError.wrongCurrentPassword }
        if let address { try limiter.take(.signIns, for: address.key) }
        let now = clock.nowMillis()
        let throttle = SignInThrottle(policy: configuration)
        let (player, addressLock) = try await database.write { storage -> (PlayerRecord, Int64?) in
            guard let player = try await storage.player(id: session.playerID) else { throw APIError.notAuthenticated }
            let lock = try await throttle.countAttempt(
                namespace: player.environment, account: player.accountName, address: address, now: now, in: storage)
            return (player, lock)
        }
        guard try await credentials.verifyPassword(request.currentPassword, hash: player.passwordHash) else { throw APIError.wrongCurrentPassword }
        let hash = try await credentials.hashPassword(request.newPassword)
        try await database.write { storage in
            try await throttle.succeeded(
                namespace: player.environment, account: player.accountName, address: address, lock: addressLock, now: now, in: storage)
            _ = try await storage.setPasswordHash(playerID: player.playerID, hash: hash, now: now)
        }
        return try await revokeOthers(session)
    }

    /// Gives a player a new password the server chose (the studio's support, for a player who lost theirs or came from
    /// another server without one) and ends every session of theirs; returns the password, to hand to the player once
    /// (only its hash is stored), and how many sessions ended.
    func resetPassword(playerID: String) async throws -> (password: String, sessionsEnded: Int) {
        let password = Self.newPassword()
        let hash = try await credentials.hashPassword(password)
        let now = clock.nowMillis()
        guard try await database.write({ try await $0.setPasswordHash(playerID: playerID, hash: hash, now: now) }) else {
            throw APIError.unknownPlayers([String(playerID.prefix(100))])
        }
        return (password, try await endSessions(playerID: playerID, reason: "password reset"))
    }

    /// A password the server chooses: four groups of four characters of an alphabet without look-alikes (about 79
    /// bits), easy to read out and type.
    static func newPassword() -> String {
        let alphabet = Array("abcdefghjkmnpqrstuvwxyz23456789")
        var random = SystemRandomNumberGenerator()
        return (0..<4).map { _ in String((0..<4).map { _ in alphabet[Int.random(in: 0..<alphabet.count, using: &random)] }) }
            .joined(separator: "-")
    }

    /// Ends every session of a player (the studio's console, or a ban), closing their realtime channels and live
    /// pages on every node; returns how many ended.
    func endSessions(playerID: String, reason: String) async throws -> Int {
        let now = clock.nowMillis()
        let revoked = try await database.write { try await $0.revokeSessions(playerID: playerID, keeping: nil, now: now) }
        sessionCache.remove(sessionIDs: revoked)
        for id in revoked { bus.publish(.sessionEnded(sessionID: id, reason: reason)) }
        return revoked.count
    }

    /// Ends the calling session.
    func signOut(_ session: AuthenticatedSession) async throws {
        let now = clock.nowMillis()
        _ = try await database.write { try await $0.revokeSession(sessionID: session.sessionID, playerID: session.playerID, now: now) }
        sessionCache.remove(sessionIDs: [session.sessionID])
        bus.publish(.sessionEnded(sessionID: session.sessionID, reason: "signed out"))
    }

    /// Revokes one of the caller's sessions.
    func revoke(sessionID: String, by session: AuthenticatedSession) async throws {
        let now = clock.nowMillis()
        let revoked = try await database.write { try await $0.revokeSession(sessionID: sessionID, playerID: session.playerID, now: now) }
        guard revoked else { throw APIError.noSuchSession }
        sessionCache.remove(sessionIDs: [sessionID])
        bus.publish(.sessionEnded(sessionID: sessionID, reason: "revoked"))
    }

    /// Forgets sessions that storage no longer holds (or has revoked) on this node and tells the others and the
    /// devices connected with them (their realtime channels close).
    func endSessions(_ sessionIDs: [String], reason: String) {
        sessionCache.remove(sessionIDs: sessionIDs)
        for id in sessionIDs { bus.publish(.sessionEnded(sessionID: id, reason: reason)) }
    }

    /// Revokes all of the caller's sessions but the calling one; returns how many.
    func revokeOthers(_ session: AuthenticatedSession) async throws -> Int {
        let now = clock.nowMillis()
        let revoked = try await database.write { try await $0.revokeSessions(playerID: session.playerID, keeping: session.sessionID, now: now) }
        sessionCache.remove(sessionIDs: revoked)
        for id in revoked { bus.publish(.sessionEnded(sessionID: id, reason: "revoked")) }
        return revoked.count
    }

    /// The caller's active sessions.
    func sessions(_ session: AuthenticatedSession) async throws -> [SessionInfo] {
        let now = clock.nowMillis()
        return try await database.read { try await $0.activeSessions(playerID: session.playerID, now: now) }.map {
            SessionInfo(
                sessionID: $0.sessionID, bundleID: $0.bundleID, createdAt: StoredTime.date($0.createdAt),
                expiresAt: StoredTime.date($0.expiresAt), current: $0.sessionID == session.sessionID)
        }
    }

    /// The caller's profile; also records that the player is playing the device's game.
    func me(_ session: AuthenticatedSession, device: DeviceIdentity) async throws -> LocalPlayerProfile {
        let now = clock.nowMillis()
        let player = try await database.write { storage in
            try await recordPlay(playerID: session.playerID, device: device, now: now, in: storage)
            return try await storage.player(id: session.playerID)
        }
        players.playerChanged(session.playerID)
        guard let player else { throw APIError.notAuthenticated }
        return Self.profile(player)
    }

    /// Changes the caller's alias and/or status message.
    func updateProfile(_ request: UpdateProfileRequest, session: AuthenticatedSession) async throws -> LocalPlayerProfile {
        let alias = try request.alias.map(AccountRules.alias)
        let status = try request.status.map(AccountRules.status)
        let now = clock.nowMillis()
        let player = try await database.write { storage -> PlayerRecord? in
            guard let player = try await storage.player(id: session.playerID) else { return nil }
            let named = alias.map { (text: $0, skeleton: AliasSkeleton.of($0)) }
            if let named, named.text != player.alias {
                try await Self.refuseLookAlike(named.text, skeleton: named.skeleton, of: player, in: storage)
            }
            return try await storage.updateProfile(playerID: session.playerID, alias: named, status: status, now: now)
        }
        players.playerChanged(session.playerID)
        guard let player else { throw APIError.notAuthenticated }
        return Self.profile(player)
    }

    /// Refuses `alias` for `player` when another player of its environment has an alias that looks the same without
    /// being the same. An alias identical to another is allowed, as Game Center's are (a page that finds several asks
    /// for the account name); a look-alike would pass for the other player where an exact copy is seen as shared.
    ///
    /// On SQLite the check and the write are one serialized transaction. On PostgreSQL two look-alikes chosen at
    /// the same instant can both pass: each transaction does not see the other's row.
    private static func refuseLookAlike(_ alias: String, skeleton: String, of player: PlayerRecord, in storage: StorageSession) async throws {
        if let existing = try await storage.lookAlikeAlias(environment: player.environment, skeleton: skeleton, alias: alias, otherThan: player.playerID) {
            throw APIError.aliasLookAlike(alias, existing)
        }
    }

    /// Computes the alias skeleton of every player stored without one (players from before skeletons were kept), in
    /// batches; run at start. Idempotent, so several nodes starting at once do no harm.
    func fillMissingAliasSkeletons() async throws {
        while true {
            let batch = try await database.read { try await $0.playersWithoutAliasSkeleton(limit: 1_000) }
            guard !batch.isEmpty else { return }
            try await database.write { storage in
                for player in batch {
                    try await storage.setAliasSkeleton(playerID: player.playerID, alias: player.alias, skeleton: AliasSkeleton.of(player.alias))
                }
            }
        }
    }

    static func profile(_ player: PlayerRecord) -> LocalPlayerProfile {
        LocalPlayerProfile(playerID: player.playerID, alias: player.alias, underage: player.underage, status: player.status)
    }
}

extension APIError {
    static let notAuthenticated = APIError(.accountNotAuthenticated, "sign in first: send 'Authorization: Bearer TOKEN' with a token from sign-up or sign-in")
    static let sessionRevoked = APIError(.accountSessionRevoked, "this session was signed out or revoked; sign in again")
    static let sessionExpired = APIError(.accountSessionExpired, "this session has expired; sign in again")
    static let sessionForOtherGame = APIError(.accountSessionOtherGame, "this session belongs to another game or environment; sign in on this one")
    static let invalidCredentials = APIError(.accountInvalidCredentials, "the account name or password is wrong")
    /// A password change typed a current password that is not the player's.
    static let wrongCurrentPassword = APIError(.accountInvalidCredentials, "the current password is wrong; your password was not changed")
    static func signInThrottled(retryAfterSeconds: Int) -> APIError {
        APIError(
            .accountSignInThrottled, "too many failed sign-ins for this account; try again in \(retryAfterSeconds) s", retryAfterSeconds: retryAfterSeconds)
    }
    /// The client's address failed too often across accounts; only that address waits.
    static func addressThrottled(retryAfterSeconds: Int) -> APIError {
        APIError(
            .accountAddressThrottled, "too many failed sign-ins from this network address; try again in \(retryAfterSeconds) s",
            retryAfterSeconds: retryAfterSeconds)
    }
    static func accountNameTaken(_ name: String) -> APIError {
        APIError(.accountNameTaken, "the account name '\(name)' is taken in this environment; choose another")
    }
    static let noSuchSession = APIError(.accountNoSuchSession, "you have no active session with this id")
    /// The studio banned the player.
    static let accountBanned = APIError(
        .accountBanned, "this account is banned by the game's studio: it cannot sign in; contact the studio if you think this is a mistake")
}
